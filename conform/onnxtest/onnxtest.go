package onnxtest

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weftrt/weft/ir"
)

// Dim is one dimension of a ValueInfo: a size, or a symbol when Sym is set.
type Dim struct {
	Size int64
	Sym  string
}

// ValueInfo declares a graph input or output.
type ValueInfo struct {
	Name  string
	DType ir.DType
	Dims  []Dim
}

// Static is a ValueInfo with known dims.
func Static(name string, dt ir.DType, dims ...int64) ValueInfo {
	v := ValueInfo{Name: name, DType: dt, Dims: []Dim{}}
	for _, d := range dims {
		v.Dims = append(v.Dims, Dim{Size: d})
	}
	return v
}

// Node is one NodeProto. Attrs holds int64, float32, string, []int64 or
// []float32 values.
type Node struct {
	Op      string
	Name    string
	Inputs  []string
	Outputs []string
	Attrs   map[string]any
}

// Model is a single-graph ModelProto in the default domain.
type Model struct {
	Name         string
	Opset        int64 // default 13
	Nodes        []Node
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	Initializers map[string]*ir.Tensor
}

// onnxTypes maps weft dtypes to TensorProto.DataType.
var onnxTypes = map[ir.DType]int32{
	ir.Float32: 1, ir.Uint8: 2, ir.Int8: 3, ir.Uint16: 4, ir.Int16: 5, ir.Int32: 6,
	ir.Int64: 7, ir.Bool: 9, ir.Float16: 10, ir.Float64: 11, ir.Uint32: 12,
	ir.Uint64: 13, ir.BFloat16: 16,
}

// Marshal encodes the model as ModelProto bytes (IR version 8).
func (m *Model) Marshal() ([]byte, error) {
	opset := m.Opset
	if opset == 0 {
		opset = 13
	}
	var g []byte
	for _, n := range m.Nodes {
		nb, err := marshalNode(n)
		if err != nil {
			return nil, err
		}
		g = appendBytes(g, 1, nb)
	}
	g = appendString(g, 2, m.Name)
	for _, name := range sortedKeys(m.Initializers) {
		tb, err := TensorProto(name, m.Initializers[name])
		if err != nil {
			return nil, err
		}
		g = appendBytes(g, 5, tb)
	}
	for _, v := range m.Inputs {
		vb, err := marshalValueInfo(v)
		if err != nil {
			return nil, err
		}
		g = appendBytes(g, 11, vb)
	}
	for _, v := range m.Outputs {
		vb, err := marshalValueInfo(v)
		if err != nil {
			return nil, err
		}
		g = appendBytes(g, 12, vb)
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 8)
	b = appendString(b, 2, "weft-onnxtest")
	b = appendBytes(b, 7, g)
	var opsetID []byte // OperatorSetIdProto{domain: "", version: opset}
	opsetID = protowire.AppendTag(opsetID, 2, protowire.VarintType)
	opsetID = protowire.AppendVarint(opsetID, uint64(opset))
	b = appendBytes(b, 8, opsetID)
	return b, nil
}

// WriteFile writes the model to path.
func (m *Model) WriteFile(path string) error {
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// TensorProto encodes t as a TensorProto with raw_data.
func TensorProto(name string, t *ir.Tensor) ([]byte, error) {
	dt, ok := onnxTypes[t.DType]
	if !ok {
		return nil, fmt.Errorf("onnxtest: dtype %v has no ONNX type", t.DType)
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("onnxtest: %w", err)
	}
	var b []byte
	for _, d := range t.Shape {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(dt))
	b = appendString(b, 8, name)
	b = protowire.AppendTag(b, 9, protowire.BytesType)
	b = protowire.AppendBytes(b, t.Data)
	return b, nil
}

// WriteTestCase writes dir/model.onnx and dir/test_data_set_0 with the
// given inputs and expected outputs (as input_K.pb / output_K.pb, named after
// the model's inputs and outputs), the layout of an ONNX backend test.
func WriteTestCase(dir string, m *Model, inputs, outputs []*ir.Tensor) error {
	ds := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(ds, 0o755); err != nil {
		return err
	}
	if err := m.WriteFile(filepath.Join(dir, "model.onnx")); err != nil {
		return err
	}
	write := func(kind string, vis []ValueInfo, ts []*ir.Tensor) error {
		for k, t := range ts {
			name := ""
			if k < len(vis) {
				name = vis[k].Name
			}
			b, err := TensorProto(name, t)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(ds, fmt.Sprintf("%s_%d.pb", kind, k)), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write("input", m.Inputs, inputs); err != nil {
		return err
	}
	return write("output", m.Outputs, outputs)
}

func marshalNode(n Node) ([]byte, error) {
	var b []byte
	// Empty names are kept: they mark absent optional inputs by position.
	for _, in := range n.Inputs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, out := range n.Outputs {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, out)
	}
	b = appendString(b, 3, n.Name)
	b = appendString(b, 4, n.Op)
	for _, name := range sortedKeys(n.Attrs) {
		ab, err := marshalAttr(name, n.Attrs[name])
		if err != nil {
			return nil, fmt.Errorf("onnxtest: node %q: %w", n.Name, err)
		}
		b = appendBytes(b, 5, ab)
	}
	return b, nil
}

// marshalAttr encodes an AttributeProto (field numbers from onnx.proto).
func marshalAttr(name string, v any) ([]byte, error) {
	var b []byte
	b = appendString(b, 1, name)
	var typ uint64
	switch x := v.(type) {
	case int64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(x))
		typ = 2
	case int:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(x)))
		typ = 2
	case float32:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, mathFloat32bits(x))
		typ = 1
	case string:
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, []byte(x))
		typ = 3
	case []int64:
		for _, i := range x {
			b = protowire.AppendTag(b, 8, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(i))
		}
		typ = 7
	case []float32:
		for _, f := range x {
			b = protowire.AppendTag(b, 7, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, mathFloat32bits(f))
		}
		typ = 6
	default:
		return nil, fmt.Errorf("attribute %q: unsupported Go type %T", name, v)
	}
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, typ)
	return b, nil
}

func marshalValueInfo(v ValueInfo) ([]byte, error) {
	dt, ok := onnxTypes[v.DType]
	if !ok {
		return nil, fmt.Errorf("onnxtest: value %q: dtype %v has no ONNX type", v.Name, v.DType)
	}
	var shape []byte
	for _, d := range v.Dims {
		var db []byte
		if d.Sym != "" {
			db = appendString(db, 2, d.Sym)
		} else {
			db = protowire.AppendTag(db, 1, protowire.VarintType)
			db = protowire.AppendVarint(db, uint64(d.Size))
		}
		shape = appendBytes(shape, 1, db)
	}
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(dt))
	if v.Dims != nil {
		tt = protowire.AppendTag(tt, 2, protowire.BytesType)
		tt = protowire.AppendBytes(tt, shape)
	}
	var typ []byte
	typ = appendBytes(typ, 1, tt)
	var b []byte
	b = appendString(b, 1, v.Name)
	b = appendBytes(b, 2, typ)
	return b, nil
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}
