package conform

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/ir"
)

// nodeSuite is the ONNX node test suite (Debian package libonnx-testdata).
const nodeSuite = "/usr/share/libonnx-testdata/data/node"

// TestVulkanTarget runs a representative part of the node suite with every
// node Vulkan supports placed on Vulkan (the rest on the CPU), as `weft
// conform --target vulkan` does, and requires the CPU's results: nothing
// fails, and exactly the tests that pass on the CPU pass.
func TestVulkanTarget(t *testing.T) {
	b, ok := backends.Get(vulkan.BackendName)
	require.True(t, ok)
	devs, err := b.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		if os.Getenv("WEFT_REQUIRE_VULKAN") == "1" {
			t.Fatalf("WEFT_REQUIRE_VULKAN=1 but there is no Vulkan device: %s", vulkan.Unavailable())
		}
		t.Skipf("no Vulkan device, skipping: %s", vulkan.Unavailable())
	}
	if _, err := os.Stat(nodeSuite); err != nil {
		t.Skipf("no ONNX node suite: %v", err)
	}
	var tests []Test
	for _, pat := range []string{"test_matmul*", "test_add*", "test_sub*", "test_mul*", "test_div*", "test_softmax*",
		"test_layer_normalization*", "test_transpose*", "test_relu*", "test_sigmoid*", "test_tanh*", "test_exp*",
		"test_gemm*", "test_conv*", "test_maxpool*", "test_averagepool*", "test_globalaveragepool*", "test_concat*",
		"test_slice*", "test_reshape*", "test_flatten*", "test_squeeze*", "test_unsqueeze*", "test_gather_0",
		"test_reduce_mean*", "test_reduce_sum*"} {
		dirs, err := filepath.Glob(filepath.Join(nodeSuite, pat))
		require.NoError(t, err)
		for _, d := range dirs {
			ts, err := Discover(d)
			require.NoError(t, err)
			tests = append(tests, ts...)
		}
	}
	require.NotEmpty(t, tests)
	for _, level := range []int{0, 2} {
		cpu := NewRunner(weft.Options{OptLevel: level, Target: []string{"cpu"}}).Run(context.Background(), tests, nil)
		r := NewRunner(weft.Options{OptLevel: level, Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
		var mu sync.Mutex
		onVulkan := map[string]int{}
		open := r.Open
		r.Open = func(path string, feeds []*ir.Tensor) (Model, error) {
			m, err := open(path, feeds)
			if wm, ok := m.(*weft.Model); ok && err == nil {
				n := 0
				for _, p := range wm.Plan.Partitions {
					if p.Device == devs[0].Name() {
						n += len(p.Nodes)
					}
				}
				mu.Lock()
				onVulkan[filepath.Base(filepath.Dir(path))] = n
				mu.Unlock()
			}
			return m, err
		}
		vk := r.Run(context.Background(), tests, nil)
		want, got := Summarize(cpu), Summarize(vk)
		for i, res := range vk {
			if res.Status != cpu[i].Status {
				t.Errorf("-O%d %s: %v on vulkan (%s), %v on the CPU", level, res.Name, res.Status, res.Detail, cpu[i].Status)
			}
		}
		require.Zero(t, got.Failed, "-O%d", level)
		require.Equal(t, want.Passed, got.Passed, "-O%d", level)
		ran := 0
		for _, res := range vk {
			if res.Status == Pass && onVulkan[res.Name] > 0 {
				ran++
			}
		}
		require.Greater(t, ran, len(tests)/3, "-O%d: too few tests ran nodes on Vulkan", level)
		t.Logf("-O%d: %d tests, %d passed (CPU %d), %d of them ran nodes on %s", level, len(tests), got.Passed, want.Passed, ran, devs[0].Name())
	}
}
