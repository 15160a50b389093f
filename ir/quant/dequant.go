package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// Decodable reports whether DecodeRow and Dequantize accept dt: the float
// types f32, f16, bf16, the 32-element block formats and the K-quants
// Q4_K, Q5_K, Q6_K.
func Decodable(dt ir.DType) bool {
	switch dt {
	case ir.Float32, ir.Float16, ir.BFloat16:
		return true
	}
	_, k := kDecoders[dt]
	return k || Supported(dt)
}

// DecodeRow converts len(dst) elements of dt stored in src to float32.
// len(dst) must be a whole number of dt's blocks and len(src) must be
// dt.Bytes(len(dst)). Since blocks never straddle rows, a whole tensor's
// data decodes as one "row".
func DecodeRow(dt ir.DType, dst []float32, src []byte) error {
	switch dt {
	case ir.Float32, ir.Float16, ir.BFloat16:
		if want := dt.Size() * len(dst); len(src) != want {
			return fmt.Errorf("quant: %d %v elements need %d bytes, got %d", len(dst), dt, want, len(src))
		}
	}
	switch dt {
	case ir.Float32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		return nil
	case ir.Float16:
		for i := range dst {
			dst[i] = ir.F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return nil
	case ir.BFloat16:
		for i := range dst {
			dst[i] = ir.BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return nil
	}
	if _, ok := kDecoders[dt]; ok {
		return decodeK(dt, dst, src)
	}
	return DequantizeRow(dt, dst, src)
}

// Encodable reports whether EncodeRow (and Quantize) can write dt: the
// Supported types, Q4_K and Q6_K.
func Encodable(dt ir.DType) bool { return Supported(dt) || dt == ir.Q4_K || dt == ir.Q6_K }

// EncodeRow encodes x into dst in the block format dt: a Supported type
// (see QuantizeRow), Q4_K (see QuantizeRowQ4K) or Q6_K (QuantizeRowQ6K).
func EncodeRow(dt ir.DType, dst []byte, x []float32) error {
	switch dt {
	case ir.Q4_K:
		return QuantizeRowQ4K(dst, x)
	case ir.Q6_K:
		return QuantizeRowQ6K(dst, x)
	}
	return QuantizeRow(dt, dst, x)
}

// Dequantize decodes a tensor of any Decodable dtype (f16 and bf16 by
// exact widening, the block formats by their codecs) into a float32 tensor
// of the same shape.
func Dequantize(t *ir.Tensor) (*ir.Tensor, error) {
	if !Decodable(t.DType) {
		return nil, fmt.Errorf("quant: %w: cannot dequantize %v", ir.ErrUnsupported, t.DType)
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("quant: %w", err)
	}
	out := ir.NewTensor(ir.Float32, t.Shape)
	if out.Len() == 0 {
		return out, nil
	}
	if err := DecodeRow(t.DType, out.Float32s(), t.Data); err != nil {
		return nil, fmt.Errorf("quant: dequantizing %v: %w", t, err)
	}
	return out, nil
}
