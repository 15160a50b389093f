package onnxtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrt/weft/ir"
)

// addModel is y = a + b on f32[2,3].
func addModel() *Model {
	return &Model{
		Name:    "add",
		Nodes:   []Node{{Op: "Add", Name: "add0", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}},
		Inputs:  []ValueInfo{Static("a", ir.Float32, 2, 3), Static("b", ir.Float32, 2, 3)},
		Outputs: []ValueInfo{Static("y", ir.Float32, 2, 3)},
	}
}

func TestWriteTestCase(t *testing.T) {
	dir := t.TempDir()
	m := addModel()
	m.Nodes = append(m.Nodes, Node{Op: "Transpose", Name: "t", Inputs: []string{"y"}, Outputs: []string{"z"},
		Attrs: map[string]any{"perm": []int64{1, 0}, "f": float32(1.5), "s": "x", "i": int64(3), "fs": []float32{1, 2}}})
	m.Initializers = map[string]*ir.Tensor{"w": ir.FromFloat32([]int64{2}, []float32{1, 2})}
	a := ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	if err := WriteTestCase(dir, m, []*ir.Tensor{a, a}, []*ir.Tensor{a}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/input_1.pb", "test_data_set_0/output_0.pb"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := TensorProto("x", &ir.Tensor{DType: ir.String}); err == nil {
		t.Error("string tensor: no error")
	}
	bad := addModel()
	bad.Nodes[0].Attrs = map[string]any{"x": struct{}{}}
	if _, err := bad.Marshal(); err == nil {
		t.Error("bad attribute: no error")
	}
}
