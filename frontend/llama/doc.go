// Package llama builds llama-family decoder graphs (token embedding,
// RMSNorm, rotary embeddings, grouped-query attention over an explicit KV
// cache, SiLU-gated FFN; qwen2's q/k/v biases and NeoX rotary pairs) as
// ir.Graphs with static shapes, from a Config and a set of Weights, and
// imports llama2.c checkpoints (LoadLlama2C) and GGUF models of the llama
// and qwen2 architectures (FromGGUF; block-quantized matrices stay
// quantized and run as QMatMul). GenerateGGUF writes random-weight GGUF
// models of any geometry for tests and benchmarks.
//
// One model gives several graphs: Build(cfg, w, Mode{Seq: S, Capacity: P})
// is the forward pass of S tokens (S = 1 is decode, larger S a prefill
// bucket) against a cache of capacity P. The graph's interface — input and
// output names, dtypes and shapes — is the contract with runtime/llm,
// which owns the cache and updates it in place between steps:
//
//	inputs   tokens          i64 [1, S]
//	         positions       i64 [1, S]   position of each token (distinct, < P)
//	         mask            f32 [1, 1, S, P]  additive: 0 where token s may
//	                         attend cache slot j, -inf (or very negative) elsewhere
//	         past_key.L      f32 [1, KVHeads, P, HeadDim]   per layer L
//	         past_value.L    f32 [1, KVHeads, P, HeadDim]   (f16 for both
//	                         past and present with Mode.KVType f16)
//	outputs  logits          f32 [1, S, Vocab]
//	         present_key.L   f32 [1, KVHeads, S, HeadDim]   the new entries
//	         present_value.L f32 [1, KVHeads, S, HeadDim]   (RoPE applied to keys)
//
// The KV write inside the graph is a ScatterElements along the sequence
// axis of the past cache at the token positions (the attention then reads
// the full capacity, masked); the graph returns only the new entries, and
// the runtime copies them into its cache at the same positions. The past
// tensors are only read, so the cache can be a persistent buffer.
//
// The package knows ir, ir/quant and frontend/gguf (its input format)
// only: no backend, pass or runtime.
package llama
