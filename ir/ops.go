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
// are documented with WeftOps below.
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
//	    blocks run along K), Int8 with per-row Scales [N] (f32; w = s·q),
//	    or Float16 / BFloat16 (no Scales; w is the value widened to f32:
//	    weights kept at half size, e.g. an F16 GGUF's mmap'd matrices).
//	    Y has X's dtype.
//	QMatMulGroup(X, W0, W1, ...) -> Y0, Y1, ...
//	    several QMatMuls sharing one input (a decoder layer's q/k/v, or its
//	    gate and up projections): Yi = QMatMul(X, Wi). Every Wi is a
//	    constant [Ni, K] block-quantized, f16 or bf16 weight (no Scales).
//	    It lets a backend quantize X once and spread the rows of all the
//	    weights over its threads in one batch. attrs: act (string):
//	    "" (default; one output per weight) or "silu_mul" (exactly two
//	    weights of one shape; one output Y = Mul(SiLU(Y0), Y1), each step
//	    rounded to X's dtype as the three ops would: the SwiGLU of llama's
//	    feed-forward); bias (int, default 0): 1 with act "" makes the
//	    inputs X, W0..Wn-1, B0..Bn-1, Bi [Ni] of X's dtype, and
//	    Yi = Add(QMatMul(X, Wi), Bi) (a Qwen2 layer's q/k/v biases).
//	RotaryEmbedding(X, CosCache, SinCache, PositionIds)
//	    ONNX opset 23's op restricted to 4-D X [B, H, S, D] and present
//	    PositionIds i64 [B, S]; caches [max_pos, R/2] of X's dtype. For
//	    p = PositionIds[b, s], i < R/2, the pair (x1, x2) — elements (2i,
//	    2i+1) when interleaved=1 (llama2.c, GGUF llama), (i, i+R/2) when 0
//	    (NeoX) — becomes (x1·c − x2·s, x2·c + x1·s) with c, s =
//	    CosCache[p, i], SinCache[p, i]; elements ≥ R are copied. attrs:
//	    interleaved (default 0), rotary_embedding_dim R (0 = D).
//
// The KV-cache ops of decoder graphs (frontend/llama). A cache is one
// layer's keys or values, [B, Hkv, P, D] (P the capacity in tokens), stored
// as f32, f16 or Q8_0 (Q8_0 blocks run along D, so D is a multiple of 32);
// Positions is i64 [B, S], the position of each of the S new tokens:
//
//	KVCacheUpdate(Cache, New, Positions) -> Cache'
//	    New [B, Hkv, S, D] f32. Cache'[b, :, Positions[b, s], :] =
//	    New[b, :, s, :] stored in Cache's dtype (rounded to f16, or each
//	    row of D quantized to Q8_0 blocks); every other slot is Cache's.
//	    In place: Cache' IS Cache — the kernel writes the rows into the
//	    input's storage and the output shares it (InPlaceInput reports
//	    input 0; memory planning gives the output no buffer of its own and
//	    keeps the input alive as long as the output). Cache is therefore
//	    state that the caller owns (a graph input) and every run updates;
//	    nothing else may read Cache, only Cache'. A position outside
//	    [0, P) is an error.
//	KVAttention(Q, KCache, VCache, Positions)
//	    Q [B, H, S, D] f32, caches [B, Hkv, P, D] and [B, Hkv, P, Dv] of
//	    one dtype (f32, f16, Q8_0), H a multiple of Hkv. Y [B, H, S, Dv]
//	    f32 is Attention(Q, f32(KCache), f32(VCache), Mask) with Mask[b, :,
//	    s, j] = 0 for j ≤ Positions[b, s] and −inf otherwise: query s sees
//	    the cache slots up to its own position (slots past it are never
//	    read). attrs: scale (float; absent = 1/sqrt(D)).
//
// And the token-embedding lookup of a table kept in its stored format:
//
//	QGather(Table, Indices)             Y[i..., d] = f32(Table)[Indices[i...], d]
//	    Table is a constant [V, D] in a format ir/quant decodes other than
//	    f32 (the block formats, blocks along D; f16; bf16), Indices i64 of
//	    any shape; Y is f32 [Indices..., D]. An index outside [0, V) is an
//	    error (negative indices are not wrapped). It is Gather(axis 0) of
//	    the decoded table, decoding only the rows it reads.
var WeftOps = []string{"FusedMatMul", "FusedConv", "RMSNormalization", "SiLU", "Attention", "Fused", "QMatMul", "RotaryEmbedding",
	"KVCacheUpdate", "KVAttention", "QGather", "QMatMulGroup"}

// ViewOp reports whether op's output is its first input's bytes under
// another shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity): memory
// planning may give the output the input's storage when the input dies at
// the op, and a backend then has nothing to do for it.
func ViewOp(op string) bool {
	switch op {
	case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity":
		return true
	}
	return false
}

// InPlaceInput returns the index of the input whose storage an op's
// (single) output is — the op writes that input in place, as
// KVCacheUpdate does — or -1 for every other op.
func InPlaceInput(op string) int {
	if op == "KVCacheUpdate" {
		return 0
	}
	return -1
}

// The scheduler's core op, inserted after the passes (so not in WeftOps,
// which the passes and the ONNX writer handle), documented with
// scheduler.OpTransfer; its reference kernel is in backends/cpu/ref/transfer:
//
//	Transfer(X) -> Y                    Y = X, held in the buffers of device "to"
//	    attrs: from, to (strings: device names; from is "host" for a graph
//	    input). Inserted exactly where a value crosses between devices whose
//	    buffers are not compatible (not both host-visible).
const OpTransfer = "Transfer"
