package onnx

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A tiny protobuf encoder for building ONNX messages in tests. Field numbers
// follow onnx.proto.

type pb []byte

func (p pb) varint(num protowire.Number, v int64) pb {
	p = protowire.AppendTag(p, num, protowire.VarintType)
	return protowire.AppendVarint(p, uint64(v))
}

func (p pb) str(num protowire.Number, s string) pb {
	p = protowire.AppendTag(p, num, protowire.BytesType)
	return protowire.AppendString(p, s)
}

func (p pb) bytes(num protowire.Number, b []byte) pb {
	p = protowire.AppendTag(p, num, protowire.BytesType)
	return protowire.AppendBytes(p, b)
}

func (p pb) msg(num protowire.Number, m pb) pb { return p.bytes(num, m) }

func (p pb) f32(num protowire.Number, f float32) pb {
	p = protowire.AppendTag(p, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(p, math.Float32bits(f))
}

func (p pb) packedVarints(num protowire.Number, vs ...int64) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendVarint(body, uint64(v))
	}
	return p.bytes(num, body)
}

func (p pb) packedF32(num protowire.Number, vs ...float32) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendFixed32(body, math.Float32bits(v))
	}
	return p.bytes(num, body)
}

func (p pb) packedF64(num protowire.Number, vs ...float64) pb {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendFixed64(body, math.Float64bits(v))
	}
	return p.bytes(num, body)
}

// tensorPB starts a TensorProto with name, data type and dims; append data
// fields to the result.
func tensorPB(name string, dt int64, dims ...int64) pb {
	var p pb
	for _, d := range dims {
		p = p.varint(1, d)
	}
	p = p.varint(2, dt)
	if name != "" {
		p = p.str(8, name)
	}
	return p
}

func rawTensor(name string, dt int64, dims []int64, raw []byte) pb {
	return tensorPB(name, dt, dims...).bytes(9, raw)
}

func f32Tensor(name string, dims []int64, vals ...float32) pb {
	return tensorPB(name, dtFloat, dims...).packedF32(4, vals...)
}

func i64Tensor(name string, dims []int64, vals ...int64) pb {
	return tensorPB(name, dtInt64, dims...).packedVarints(7, vals...)
}

// Attributes.
func attrI(name string, v int64) pb { return pb{}.str(1, name).varint(20, atInt).varint(3, v) }
func attrF(name string, v float32) pb {
	return pb{}.str(1, name).varint(20, atFloat).f32(2, v)
}
func attrS(name, v string) pb { return pb{}.str(1, name).varint(20, atString).str(4, v) }
func attrIs(name string, vs ...int64) pb {
	return pb{}.str(1, name).varint(20, atInts).packedVarints(8, vs...)
}
func attrFs(name string, vs ...float32) pb {
	return pb{}.str(1, name).varint(20, atFloats).packedF32(7, vs...)
}
func attrT(name string, t pb) pb { return pb{}.str(1, name).varint(20, atTensor).msg(5, t) }
func attrG(name string, g pb) pb { return pb{}.str(1, name).varint(20, atGraph).msg(6, g) }

// nodePB builds a NodeProto.
func nodePB(op, name string, ins, outs []string, attrs ...pb) pb {
	var p pb
	for _, s := range ins {
		p = p.str(1, s)
	}
	for _, s := range outs {
		p = p.str(2, s)
	}
	if name != "" {
		p = p.str(3, name)
	}
	p = p.str(4, op)
	for _, a := range attrs {
		p = p.msg(5, a)
	}
	return p
}

// vi builds a ValueInfoProto of a tensor type. dims holds int64 sizes,
// string symbols, or nil for an unknown dim; noShape omits the shape.
func vi(name string, elem int64, dims ...any) pb {
	var shape pb
	for _, d := range dims {
		var dim pb
		switch d := d.(type) {
		case int:
			dim = dim.varint(1, int64(d))
		case string:
			dim = dim.str(2, d)
		}
		shape = shape.msg(1, dim)
	}
	tt := pb{}.varint(1, elem).msg(2, shape)
	return pb{}.str(1, name).msg(2, pb{}.msg(1, tt))
}

// viNoShape is a tensor ValueInfoProto without a shape.
func viNoShape(name string, elem int64) pb {
	return pb{}.str(1, name).msg(2, pb{}.msg(1, pb{}.varint(1, elem)))
}

// graphPB builds a GraphProto; parts are tagged with graph field numbers by
// the helpers below.
type graphPart struct {
	num protowire.Number
	m   pb
}

func gNode(n pb) graphPart { return graphPart{1, n} }
func gInit(t pb) graphPart { return graphPart{5, t} }
func gIn(v pb) graphPart   { return graphPart{11, v} }
func gOut(v pb) graphPart  { return graphPart{12, v} }
func gInfo(v pb) graphPart { return graphPart{13, v} }
func graphPB(name string, parts ...graphPart) pb {
	p := pb{}.str(2, name)
	for _, part := range parts {
		p = p.msg(part.num, part.m)
	}
	return p
}

// modelPB wraps a graph into a ModelProto importing the default opset.
func modelPB(opset int64, g pb) pb {
	return pb{}.varint(1, 8).str(2, "weft-test").msg(8, pb{}.str(1, "").varint(2, opset)).msg(7, g)
}
