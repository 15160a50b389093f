package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chromiumPath is where Debian's chromium package installs the browser
// (`make testdeps` installs it).
const chromiumPath = "/usr/bin/chromium"

// TestPlanHTMLInChromium renders `weft plan --html` in headless Chromium and
// reads the DOM the browser built: the node count the page shows and the
// node groups of its SVG must both equal the plan's node count (the sum of
// the partitions' nodes that `weft plan` prints). This checks the page as a
// browser parses it, which string checks on the file cannot.
func TestPlanHTMLInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not found: install Debian's chromium package (make testdeps) to render the plan page headless", chromiumPath)
	}
	page := filepath.Join(t.TempDir(), "plan.html")
	code, out, errOut := cli(t, "plan", "zoo:resnet18", "--profile", "snapdragon-8-gen-2", "--html", page)
	require.Equal(t, 0, code, errOut)
	planNodes := 0
	for _, m := range regexp.MustCompile(`(?m)^partition \d+ on \S+: (\d+) nodes`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		planNodes += n
	}
	require.Positive(t, planNodes, out)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	html := string(dom)

	m := regexp.MustCompile(`<span id="node-count">(\d+)</span>`).FindStringSubmatch(html)
	require.NotNil(t, m, "the rendered page has no #node-count:\n%.2000s", html)
	shown, _ := strconv.Atoi(m[1])
	require.Equal(t, planNodes, shown, "#node-count")

	start := strings.Index(html, `id="dag"`)
	require.GreaterOrEqual(t, start, 0, "the rendered page has no #dag SVG")
	end := strings.Index(html[start:], "</svg>")
	require.Positive(t, end)
	svg := html[start : start+end]
	groups := regexp.MustCompile(`<g class="node[ "]`).FindAllString(svg, -1)
	require.Len(t, groups, planNodes, "node elements in the #dag SVG")
}
