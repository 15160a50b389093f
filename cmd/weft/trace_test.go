package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// `weft run --trace` writes a Chrome trace of the run: one run span, and
// one node span per node of the plan, each inside the run.
func TestRunTrace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	code, out, errOut := cli(t, "run", "--example", "mlp", "-O0", "--trace", file, "-v")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "wrote trace "+file)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []struct {
			Name, Cat, Ph string
			Ts, Dur       float64
			Tid           int
			Args          map[string]any
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	var runTs, runEnd float64
	runs, nodes := 0, 0
	for _, ev := range doc.TraceEvents {
		if ev.Cat == "run" {
			runs++
			runTs, runEnd = ev.Ts, ev.Ts+ev.Dur
		}
	}
	require.Equal(t, 1, runs)
	for _, ev := range doc.TraceEvents {
		if ev.Cat == "node" {
			nodes++
			require.GreaterOrEqual(t, ev.Ts, runTs-1e-3)
			require.LessOrEqual(t, ev.Ts+ev.Dur, runEnd+1e-3)
			require.Equal(t, "cpu", ev.Args["device"])
			require.NotEmpty(t, ev.Args["outputs"], ev.Name)
		}
	}
	// -v prints the plan: "partition 0 on cpu: N nodes".
	require.Regexp(t, `partition 0 on cpu: \d+ nodes`, out)
	want := 0
	for _, m := range regexp.MustCompile(`partition \d+ on \S+: (\d+) nodes`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		want += n
	}
	require.Positive(t, want)
	require.Equal(t, want, nodes, "one span per executed node")
}
