// Package quant holds the codecs of weft's quantized weight formats: the
// 32-element block formats that GGUF files use (Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1; see ir/dtype.go) and symmetric per-channel int8 (one float32 scale
// per row, w = s·q), plus the relative error measure that the quantize pass
// reports.
//
// Block layouts, byte for byte as ggml stores them (all little-endian; d
// and m are IEEE half floats; "nibble j" means element j of the block):
//
//	Q8_0  34 bytes  d, int8 q[32]                      x = d·q
//	Q4_0  18 bytes  d, u8 qs[16]                       x = d·(q−8)
//	Q4_1  20 bytes  d, m, u8 qs[16]                    x = d·q + m
//	Q5_0  22 bytes  d, u32 qh, u8 qs[16]               x = d·(q−16)
//	Q5_1  24 bytes  d, m, u32 qh, u8 qs[16]            x = d·q + m
//
// The 4-bit codes of elements j and j+16 share byte qs[j]: element j in the
// low nibble, element j+16 in the high one. For the 5-bit formats, bit j of
// qh is the fifth (0x10) bit of element j's code.
//
// Quantization follows ggml's reference (deterministic) encoders, so the
// bytes weft writes match what llama.cpp's converter writes for the same
// float32 input: Q8_0 takes d = amax/127 and rounds half away from zero;
// Q4_0 and Q5_0 take d = max/−8 (resp. −16) where max is the element of
// largest magnitude with its sign, so that the extreme element maps exactly
// to code 0 and the opposite side gets the one extra level; Q4_1 and Q5_1
// span [min, max] in 15 (31) steps. Every float32 intermediate is rounded
// explicitly, so no fused multiply-add changes a code from one
// architecture to another. Non-finite inputs give unspecified codes (never
// a panic); callers that care check the relative error.
//
// The 256-element K-quant super-blocks (Q4_K, Q5_K, Q6_K) are decoded in
// kquant.go, whose comment gives their layouts; Q4_K and Q6_K also have
// encoders (weft's own min/max ones, not ggml's iterative search). Dequantize and
// DecodeRow cover every dtype GGUF weights come in: f32, f16, bf16, the
// 32-element formats and the K-quants.
//
// quant imports ir and the standard library only. It knows nothing of
// graphs, passes or kernels: the quantize pass (package passes) and the
// QMatMul reference kernel (backends/cpu/ref/qmatmul) are its users.
package quant
