// Package rope holds the reference kernel of the core op RotaryEmbedding
// (see ir/ops.go): rotary position embeddings as ONNX opset 23 defines
// them, restricted to 4-D input [batch, heads, seq, head_dim] with explicit
// position ids. It is the oracle for any fast RoPE kernel and for the LLM
// graph builders (frontend/llama) that emit the op.
//
// Float dtypes are computed in float64 and rounded once on store. Position
// ids outside the cos/sin caches, inconsistent shapes and dtypes are plain
// errors; the 3-D input form and absent position ids are reported with
// ref.Unsupported.
//
// The package registers its kernel with ref.Register in init(). It knows ir
// and ref only; it must not know about the scheduler, the runtime, a
// frontend or any other backend.
package rope
