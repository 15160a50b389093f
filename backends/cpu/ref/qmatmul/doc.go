// Package qmatmul holds the reference kernel of weft's QMatMul op (see
// ir/ops.go): a matrix product with a constant quantized weight,
//
//	Y[..., n] = Σ_k X[..., k] · W[n, k]
//
// where W is [N, K] in a block format (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and
// the K-quants Q4_K, Q5_K, Q6_K: every type ir/quant decodes; blocks run
// along K) or Int8 with per-row float32 Scales (w = s·q).
//
// The kernel is the definition, written plainly: it decodes W row by row
// with package ir/quant into the float32 weights the formats denote, and
// sums X·W in float64 over k in increasing order, rounding once to X's
// dtype. That is exactly what the reference MatMul kernel computes for X
// and the decoded Wᵀ, which the tests check bit for bit.
//
// The package registers its kernel with ref.Register in init(). It imports
// only ir, ir/quant and ref; it must not know about the passes, the
// scheduler or any other backend.
package qmatmul
