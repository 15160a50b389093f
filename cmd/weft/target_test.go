package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/conform/onnxtest"
	"github.com/weftrt/weft/ir"
)

func TestApplyTarget(t *testing.T) {
	user := []string{"Add=cpu"}
	for _, tc := range []struct {
		list       []string
		target, pl []string
	}{
		{[]string{"cpu"}, []string{"cpu"}, user},
		{[]string{"vulkan"}, []string{"cpu", "vulkan"}, []string{"*=vulkan", "Add=cpu"}},
		{[]string{"cpu", "vulkan:0"}, []string{"cpu", "vulkan:0"}, []string{"*=vulkan:0", "Add=cpu"}},
	} {
		o := applyTarget(weft.Options{Place: user}, tc.list)
		require.Equal(t, tc.target, o.Target, "%v", tc.list)
		require.Equal(t, tc.pl, o.Place, "%v", tc.list)
	}
	require.True(t, targetFallback(`node "x" (Cos): --place *=vulkan: vulkan:0 cannot run it (...)`, []string{"vulkan"}))
	require.False(t, targetFallback(`node "x" (Cos): --place Cos=vulkan: vulkan:0 cannot run it (...)`, []string{"vulkan"}))
}

// hasVulkan reports whether this process has a Vulkan device; without one
// a test that needs it is skipped, or fails when WEFT_REQUIRE_VULKAN=1.
func hasVulkan(t *testing.T) bool {
	t.Helper()
	b, _ := backends.Get(vulkan.BackendName)
	devs, err := b.Devices()
	require.NoError(t, err)
	if len(devs) == 0 && os.Getenv("WEFT_REQUIRE_VULKAN") == "1" {
		t.Fatalf("WEFT_REQUIRE_VULKAN=1 but there is no Vulkan device: %s", vulkan.Unavailable())
	}
	return len(devs) > 0
}

func TestTargetErrors(t *testing.T) {
	code, _, errOut := cli(t, "run", "--example", "mlp", "--target", "npu")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--target npu: no such device")
	code, _, errOut = cli(t, "run", "--example", "mlp", "--target", "vulkan:7")
	require.Equal(t, 1, code)
	if hasVulkan(t) {
		require.Contains(t, errOut, "--target vulkan:7: no such Vulkan device (have: vulkan:0")
	} else {
		require.Contains(t, errOut, "--target vulkan:7: no Vulkan device: "+vulkan.Unavailable())
	}
}

func TestTargetVulkan(t *testing.T) {
	if !hasVulkan(t) {
		t.Skipf("no Vulkan device, skipping: %s", vulkan.Unavailable())
	}
	code, out, errOut := cli(t, "run", "--example", "mlp", "--target", "vulkan")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "placement: 3 nodes on vulkan:0; 0 transfers (0 bytes)")
	_, cpuOut, _ := cli(t, "run", "--example", "mlp")
	require.NotContains(t, cpuOut, "placement:")

	// A --place rule alone brings its device in; the rest stays on the CPU.
	model := writeModel(t, &onnxtest.Model{
		Name: "mix",
		Nodes: []onnxtest.Node{
			{Op: "Add", Inputs: []string{"a", "b"}, Outputs: []string{"s"}},
			{Op: "Relu", Inputs: []string{"s"}, Outputs: []string{"y"}},
		},
		Inputs:  []onnxtest.ValueInfo{onnxtest.Static("a", ir.Float32, 2, 3), onnxtest.Static("b", ir.Float32, 2, 3)},
		Outputs: []onnxtest.ValueInfo{onnxtest.Static("y", ir.Float32, 2, 3)},
	})
	code, out, errOut = cli(t, "run", model, "-O0", "--place", "Relu=vulkan")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "placement: 1 nodes on cpu, 1 on vulkan:0")

	// compile --target vulkan, then run the plan.
	plan := filepath.Join(t.TempDir(), "mix.wplan")
	code, _, errOut = cli(t, "compile", model, "--target", "vulkan", "-o", plan)
	require.Equal(t, 0, code, errOut)
	code, out, errOut = cli(t, "run", plan, "--target", "vulkan")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "placement: 1 nodes on vulkan:0")

	// plan counts what goes where and keeps the declines quiet.
	code, out, errOut = cli(t, "plan", "zoo:bert-4l", "--target", "vulkan", "--summary")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `placement: \d+ nodes on vulkan:0(, \d+ on cpu)?; 0 transfers`, out)
	require.NotContains(t, errOut, "warning")

	// conform reports how many passing tests ran nodes on Vulkan.
	suite := filepath.Join(t.TempDir(), "mini")
	f := func(v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, []int64{2, 3}, v) }
	require.NoError(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_mix"), &onnxtest.Model{
		Name:    "mix",
		Nodes:   []onnxtest.Node{{Op: "Add", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}},
		Inputs:  []onnxtest.ValueInfo{onnxtest.Static("a", ir.Float32, 2, 3), onnxtest.Static("b", ir.Float32, 2, 3)},
		Outputs: []onnxtest.ValueInfo{onnxtest.Static("y", ir.Float32, 2, 3)},
	}, []*ir.Tensor{f(1, 2, 3, 4, 5, 6), f(1, 1, 1, -1, -1, -1)}, []*ir.Tensor{f(2, 3, 4, 3, 4, 5)}))
	code, out, errOut = cli(t, "conform", "--target", "vulkan", suite)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "target: 1 passing tests ran nodes on vulkan:0 (1 nodes in all)")
	require.Contains(t, out, "1 passed, 0 failed, 0 skipped")
}
