package onnx

import (
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// pbuf is a protobuf message under construction, kept as a list of byte
// segments so that large byte fields (weights) are referenced rather than
// copied: a nested message is appended by writing its tag and length and then
// taking over its segments. Field numbers are onnx.proto's.
type pbuf struct {
	segs [][]byte // finished segments
	tail []byte   // the open segment small fields are appended to
	n    int      // bytes in segs
}

// bigField is the size from which byte fields and nested messages are
// referenced instead of copied.
const bigField = 4096

func (p *pbuf) size() int { return p.n + len(p.tail) }

func (p *pbuf) seal() {
	if len(p.tail) > 0 {
		p.segs = append(p.segs, p.tail)
		p.n += len(p.tail)
		p.tail = nil
	}
}

func (p *pbuf) varint(num protowire.Number, v int64) {
	p.tail = protowire.AppendTag(p.tail, num, protowire.VarintType)
	p.tail = protowire.AppendVarint(p.tail, uint64(v))
}

func (p *pbuf) f32(num protowire.Number, f float32) {
	p.tail = protowire.AppendTag(p.tail, num, protowire.Fixed32Type)
	p.tail = protowire.AppendFixed32(p.tail, math.Float32bits(f))
}

func (p *pbuf) str(num protowire.Number, s string) {
	p.tail = protowire.AppendTag(p.tail, num, protowire.BytesType)
	p.tail = protowire.AppendString(p.tail, s)
}

// bytes appends a length-delimited field; large payloads are referenced.
func (p *pbuf) bytes(num protowire.Number, b []byte) {
	p.tail = protowire.AppendTag(p.tail, num, protowire.BytesType)
	p.tail = protowire.AppendVarint(p.tail, uint64(len(b)))
	if len(b) < bigField {
		p.tail = append(p.tail, b...)
		return
	}
	p.seal()
	p.segs = append(p.segs, b)
	p.n += len(b)
}

// msg appends a nested message; m must not be changed afterwards.
func (p *pbuf) msg(num protowire.Number, m *pbuf) {
	p.tail = protowire.AppendTag(p.tail, num, protowire.BytesType)
	p.tail = protowire.AppendVarint(p.tail, uint64(m.size()))
	if m.size() < bigField {
		for _, s := range m.segs {
			p.tail = append(p.tail, s...)
		}
		p.tail = append(p.tail, m.tail...)
		return
	}
	p.seal()
	p.segs = append(p.segs, m.segs...)
	p.n += m.n
	if len(m.tail) > 0 {
		p.segs = append(p.segs, m.tail)
		p.n += len(m.tail)
	}
}

func (p *pbuf) packedVarints(num protowire.Number, vs []int64) {
	var body []byte
	for _, v := range vs {
		body = protowire.AppendVarint(body, uint64(v))
	}
	p.bytes(num, body)
}

func (p *pbuf) packedF32(num protowire.Number, vs []float32) {
	body := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		body = protowire.AppendFixed32(body, math.Float32bits(v))
	}
	p.bytes(num, body)
}

// writeTo writes the encoded message.
func (p *pbuf) writeTo(w io.Writer) error {
	for _, s := range p.segs {
		if _, err := w.Write(s); err != nil {
			return err
		}
	}
	if len(p.tail) > 0 {
		if _, err := w.Write(p.tail); err != nil {
			return err
		}
	}
	return nil
}
