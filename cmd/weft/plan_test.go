package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlanPhoneProfile(t *testing.T) {
	dir := t.TempDir()
	dot, page := filepath.Join(dir, "r18.dot"), filepath.Join(dir, "r18.html")
	code, out, errOut := cli(t, "plan", "zoo:resnet18", "--profile", "snapdragon-8-gen-2", "--dot", dot, "--html", page)
	require.Equal(t, 0, code, errOut)
	// The convolutions go to the (stand-in) Adreno; the batch-1 classifier
	// stays on the CPU below the batch threshold; the input goes up and the
	// pooled features come down.
	require.Contains(t, out, `"/conv1/Conv" (FusedConv)`)
	require.Regexp(t, `"/layer4/layer4.1/conv2/Conv" \(FusedConv\)\s+\[inputs-live-there\]\s+inputs live on vulkan:0`, out)
	require.Regexp(t, `"/fc/Gemm/matmul" \(FusedMatMul\)\s+\[(below-batch-threshold|inputs-live-there)\]`, out)
	require.Contains(t, out, "profile snapdragon-8-gen-2: estimated latency")
	require.Contains(t, out, "transfers: 2,")
	require.Regexp(t, `partition 0 on vulkan:0`, out)

	d, err := os.ReadFile(dot)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(d), "digraph"))
	require.Equal(t, 2, strings.Count(string(d), "shape=diamond"), "two transfers marked")

	h, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(h)
	offline := strings.ReplaceAll(html, `xmlns="http://www.w3.org/2000/svg"`, "")
	require.NotContains(t, offline, "http", "no network references but the SVG namespace")
	require.NotContains(t, html, "src=")
	m := regexp.MustCompile(`<span id="node-count">(\d+)</span>`).FindStringSubmatch(html)
	require.NotNil(t, m)
	nodes := strings.Count(html, `<g class="node`)
	require.Equal(t, strconv.Itoa(nodes), m[1])
	require.Equal(t, 2, strings.Count(html, `<g class="node transfer`))
	require.Contains(t, html, `cause: [inputs-live-there] inputs live on vulkan:0`)
	require.Contains(t, html, `id="timeline"`)
}

func TestPlanRulesAndWarnings(t *testing.T) {
	code, out, errOut := cli(t, "plan", "zoo:resnet18", "--profile", "apple-m2", "--place", "*=vulkan", "--place", "name:/layer1/*=cpu")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `"/layer1/layer1.0/conv1/Conv" \(FusedConv\)\s+\[pinned\]\s+pinned by the user \(--place name:/layer1/\*=cpu\)`, out)
	require.Regexp(t, `"/conv1/Conv" \(FusedConv\)\s+\[pinned\]`, out)
	require.Contains(t, out, "transfers: 0,", "M2 buffers are host-visible")

	// Gather is not in the default GPU op list: the rule falls back, loudly.
	code, out, errOut = cli(t, "plan", "zoo:bert-4l", "--profile", "snapdragon-8-gen-2", "--place", "*=vulkan", "--summary")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, `weft: warning: node "/bert/embeddings/word_embeddings/Gather" (Gather): --place *=vulkan: vulkan:0 cannot run it`)
	require.Contains(t, out, "warning:")
}

func TestPlanTargetsAndErrors(t *testing.T) {
	code, out, errOut := cli(t, "plan", "zoo:resnet18", "--profile", "snapdragon-8-gen-2", "--target", "cpu", "--summary")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "partition 0 on cpu: 24 nodes")
	require.Contains(t, out, "transfers: 0,")

	code, out, errOut = cli(t, "plan", "--list-profiles")
	require.Equal(t, 0, code, errOut)
	for _, p := range []string{"snapdragon-8-gen-2", "snapdragon-8-gen-3", "snapdragon-7-plus-gen-2", "dimensity-9000", "apple-m2"} {
		require.Contains(t, out, p)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "exactly one MODEL"},
		{[]string{"plan", "zoo:resnet18", "--profile", "pixel-99"}, `no bundled profile "pixel-99"`},
		{[]string{"plan", "zoo:resnet18", "--target", "npu"}, "--target npu: no such device"},
		{[]string{"plan", "zoo:resnet18", "--place", "Conv"}, "want OP=DEVICE"},
		{[]string{"plan", "zoo:resnet18", "--place", "Conv=npu"}, `names unknown device "npu"`},
		{[]string{"plan", "zoo:alexnet"}, `unknown model "alexnet"`},
	} {
		code, _, errOut := cli(t, tc.args...)
		require.Equal(t, 1, code, strings.Join(tc.args, " "))
		require.Contains(t, errOut, tc.want, strings.Join(tc.args, " "))
	}
}

func TestCalibrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.json")
	code, _, errOut := cli(t, "calibrate", "-o", path, "--size", "32", "--time", "20ms")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `cpu: matmul [0-9.]+ GFLOP/s \(f32, 32×32\), read [0-9.]+ GB/s, launch [0-9.]+ µs/op`, errOut)
	// The written profile is valid and plans a model.
	code, out, errOut := cli(t, "plan", "zoo:resnet18", "--profile", path, "--summary")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "profile host: estimated latency")
	code, _, errOut = cli(t, "calibrate", "--size", "2")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "too small")
}
