// Package llama builds llama-family decoder graphs (token embedding,
// RMSNorm, rotary embeddings, grouped-query attention over an explicit KV
// cache, SiLU-gated FFN; qwen2's q/k/v biases and NeoX rotary pairs) as
// ir.Graphs with static shapes, from a Config and a set of Weights, and
// imports llama2.c checkpoints (LoadLlama2C) and GGUF models of the llama
// and qwen2 architectures (FromGGUF; block-quantized, F16 and BF16
// matrices stay as stored, zero-copy, and run as QMatMul; matmuls that
// share an input — q/k/v (with Qwen2's biases, which the group adds), and
// gate/up with the SwiGLU — run as one QMatMulGroup where the weight types
// allow, see groupable; in a graph of
// several tokens' logits, which may verify speculative drafts, F16 and
// BF16 matmuls run as QMatMulGroups too, see rowExact). GenerateGGUF
// writes random-weight GGUF models of any geometry for tests and
// benchmarks.
//
// One model gives several graphs: Build(cfg, w, Mode{Seq: S, Capacity: P})
// is the forward pass of S tokens (S = 1 is decode, larger S a prefill
// bucket) against a cache of capacity P. The graph's interface — input and
// output names, dtypes and shapes — is the contract with runtime/llm,
// which owns the cache tensors:
//
//	inputs   tokens          i64 [1, S]
//	         positions       i64 [1, S]   position of each token (< P)
//	         cache_key.L     [1, KVHeads, P, HeadDim]   per layer L, of
//	         cache_value.L   [1, KVHeads, P, HeadDim]   Mode.KVType (f32,
//	                         f16 or q8_0)
//	         logits_index    i64 [1]      only with Mode.LastLogits: the token
//	                         whose logits the graph computes
//	outputs  logits          f32 [1, S, Vocab]   ([1, 1, Vocab] with
//	                         Mode.LastLogits)
//
// The caches are state: each layer's KVCacheUpdate ops (ir/ops.go) write
// the tokens' keys (RoPE applied) and values into the cache inputs in
// place, at their positions, and KVAttention reads them, token s seeing the
// slots up to positions[s] — so the caller's cache tensors come back
// updated, nothing else is copied, and slots past a token's position are
// never read (a cache can be rewound by lowering the position).
//
// The package knows ir, ir/quant and frontend/gguf (its input format)
// only: no backend, pass or runtime.
package llama
