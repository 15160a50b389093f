package ir

import "errors"

// ErrUnsupported marks an honest "weft does not support this" (an op, an
// attribute value, a dtype). Every layer wraps it with context; the
// conformance runner reports such failures as SKIP, everything else as FAIL.
var ErrUnsupported = errors.New("unsupported")

// The core op set.
//
// A core op carries the name of the ONNX operator (default domain) it comes
// from and the semantics of that operator's newest version up to opset 21, in
// canonical form: whatever ONNX moved from attributes to inputs over the
// versions is an input here (axes of Reduce*, Squeeze and Unsqueeze; split of
// Split; pads and constant_value of Pad; min/max of Clip; starts, ends, axes
// and steps of Slice; roi, scales and sizes of Resize), and the importer
// upgrades older forms. Optional inputs that are absent are nil.
//
// These ONNX operators never reach the IR; the importer rewrites them:
//
//	Constant      -> a constant value
//	Upsample      -> Resize
//	Scatter       -> ScatterElements
//
// These are core ops that passes.Lower decomposes once dtypes and ranks are
// known (their reference kernels remain, for graphs where that is not possible):
//
//	Gemm                -> [Transpose] MatMul [Mul alpha] [Add beta*C]
//	BatchNormalization  -> Mul + Add (inference form, constant statistics folded)
//
// Attributes weft adds to ONNX ops (set by the importer):
//
//	Softmax/LogSoftmax/Hardmax legacy_axis=1   opset < 13 semantics (coerce to 2-D at axis)
//	Scan batched=1                             Scan-8 (sequence_lens input, batch axis 0)
//
// weft-specific ops (fused patterns, quantized matmuls, KV-cache updates)
// are added by later passes and documented where they are introduced.
var LoweredONNXOps = []string{"Constant", "Upsample", "Scatter"}

// weft's own core ops. The passes introduce them (fusion, pattern
// recognition, quantization); every one has a reference kernel, and each is
// defined as exactly the computation of the ops it replaces:
//
//	FusedMatMul(A, B, Bias?)            Y = act(MatMul(A, B) + Bias)
//	    Bias broadcasts against the MatMul result (numpy rules).
//	    attrs: activation (string: "" | Relu | LeakyRelu | Sigmoid | Tanh |
//	    Gelu | GeluTanh | SiLU | Clip), activation_alpha, activation_beta
//	    (floats: LeakyRelu's alpha; Clip's min and max).
//	FusedConv(X, W, B?, Z?)             Y = act(Conv(X, W, B) + Z)
//	    Conv's attributes plus the activation attributes above; Z (a
//	    residual) has Conv's output shape.
//	RMSNormalization(X, Scale)          Y = X / sqrt(mean(X², axes ≥ axis) + epsilon) · Scale
//	    attrs: axis (default -1), epsilon (default 1e-5); as ONNX opset 23.
//	SiLU(X)                             Y = X · sigmoid(X)
//	Attention(Q, K, V, Mask?)           scaled dot-product attention, 4-D:
//	    Q [B, H, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv], H a multiple
//	    of Hkv (grouped-query: head h reads kv head h / (H/Hkv)); Mask is
//	    additive (float) or boolean (true = keep), broadcastable to
//	    [B, H, Sq, Skv]. Y [B, H, Sq, Dv] = softmax(Q·Kᵀ·scale + Mask)·V.
//	    attrs: scale (float; absent = 1/sqrt(D)), is_causal (int: query i
//	    sees keys j ≤ i + Skv - Sq).
//	Fused(inputs...)                    a fused chain of elementwise and
//	    broadcast ops: attribute body (graph) computes the outputs from the
//	    inputs; running the body with the reference kernels is the meaning.
//	QMatMul(X, W, Scales?)              Y[..., n] = Σ_k X[..., k] · W[n, k]
//	    W is a constant [N, K] weight: block-quantized (Q8_0, Q4_0, ...;
//	    blocks run along K) or Int8 with per-row Scales [N] (f32; w = s·q).
//	    Y has X's dtype.
//	RotaryEmbedding(X, CosCache, SinCache, PositionIds)
//	    ONNX opset 23's op restricted to 4-D X [B, H, S, D] and present
//	    PositionIds i64 [B, S]; caches [max_pos, R/2] of X's dtype. For
//	    p = PositionIds[b, s], i < R/2, the pair (x1, x2) — elements (2i,
//	    2i+1) when interleaved=1 (llama2.c, GGUF llama), (i, i+R/2) when 0
//	    (NeoX) — becomes (x1·c − x2·s, x2·c + x1·s) with c, s =
//	    CosCache[p, i], SinCache[p, i]; elements ≥ R are copied. attrs:
//	    interleaved (default 0), rotary_embedding_dim R (0 = D).
var WeftOps = []string{"FusedMatMul", "FusedConv", "RMSNormalization", "SiLU", "Attention", "Fused", "QMatMul", "RotaryEmbedding"}

// The scheduler's core op, inserted after the passes (so not in WeftOps,
// which the passes and the ONNX writer handle), documented with
// scheduler.OpTransfer; its reference kernel is in backends/cpu/ref/transfer:
//
//	Transfer(X) -> Y                    Y = X, held in the buffers of device "to"
//	    attrs: from, to (strings: device names; from is "host" for a graph
//	    input). Inserted exactly where a value crosses between devices whose
//	    buffers are not compatible (not both host-visible).
const OpTransfer = "Transfer"
