package conform

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/conform/onnxtest"
	"github.com/weftrt/weft/ir"
)

func addModel(dt ir.DType) *onnxtest.Model {
	return &onnxtest.Model{
		Name:    "add",
		Nodes:   []onnxtest.Node{{Op: "Add", Name: "add0", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}},
		Inputs:  []onnxtest.ValueInfo{onnxtest.Static("a", dt, 3), onnxtest.Static("b", dt, 3)},
		Outputs: []onnxtest.ValueInfo{onnxtest.Static("y", dt, 3)},
	}
}

// bits16 stores 16-bit patterns as a uint16 tensor, as the ONNX test data
// stores bfloat16.
func bits16(v ...uint16) *ir.Tensor {
	t := ir.NewTensor(ir.Uint16, []int64{int64(len(v))})
	for i, x := range v {
		t.SetInt64(i, int64(x))
	}
	return t
}

// TestRunnerWithWeft runs real ONNX files through weft.Open.
func TestRunnerWithWeft(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "mini")
	f := func(v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, []int64{int64(len(v))}, v) }
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add"), addModel(ir.Float32),
		[]*ir.Tensor{f(1, 2, 3), f(0.5, -2, 1e-3)}, []*ir.Tensor{f(1.5, 0, 3.001)}))
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add_wrong"), addModel(ir.Float32),
		[]*ir.Tensor{f(1, 2, 3), f(1, 1, 1)}, []*ir.Tensor{f(2, 3, 5)}))
	// bf16 1.0 = 0x3f80, 2.0 = 0x4000, 3.0 = 0x4040.
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add_bf16"), addModel(ir.BFloat16),
		[]*ir.Tensor{bits16(0x3f80, 0x3f80, 0x4000), bits16(0x3f80, 0x4000, 0x3f80)},
		[]*ir.Tensor{bits16(0x4000, 0x4040, 0x4040)}))
	// uint16 data for a uint16 model stays uint16 (exact comparison).
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add_u16"), addModel(ir.Uint16),
		[]*ir.Tensor{bits16(1, 2, 65535), bits16(1, 2, 1)}, []*ir.Tensor{bits16(2, 4, 0)}))
	bad := addModel(ir.Float32)
	bad.Nodes[0].Op = "NoSuchOp"
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_unknown_op"), bad,
		[]*ir.Tensor{f(1, 2, 3), f(1, 1, 1)}, []*ir.Tensor{f(2, 3, 4)}))

	tests, err := Discover(suite)
	must(t, err)
	for _, opt := range []int{0, 2} {
		opts := weft.DefaultOptions()
		opts.OptLevel = opt
		results := NewRunner(opts).Run(context.Background(), tests, nil)
		want := map[string]Status{"test_add": Pass, "test_add_bf16": Pass, "test_add_u16": Pass, "test_add_wrong": Fail, "test_unknown_op": Skip}
		for _, r := range results {
			if r.Status != want[r.Name] {
				t.Errorf("-O%d %s: %v %s, want %v", opt, r.Name, r.Status, r.Detail, want[r.Name])
			}
			if r.Name == "test_add_wrong" && !strings.Contains(r.Detail, "max abs err 1 at index 2 (got 4, want 5") {
				t.Errorf("detail %q", r.Detail)
			}
			if strings.Contains(r.Detail, suite) {
				t.Errorf("detail %q repeats the test directory", r.Detail)
			}
		}
	}
}
