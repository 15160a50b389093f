// Package llm runs autoregressive generation on compiled decoder graphs:
// it owns the KV cache, feeds prompts through prefill graphs and tokens
// through a decode graph, samples (greedy, temperature, top-k, top-p,
// min-p, repetition penalty, seeded), stops on stop tokens, a token limit,
// a full context or a cancelled context, and streams tokens to a callback
// with timing metrics.
//
// The graphs follow the interface frontend/llama documents (tokens,
// positions, additive mask and per-layer past_key.L / past_value.L inputs;
// logits and per-layer present_key.L / present_value.L outputs); this
// package repeats those names rather than importing a frontend. A Model
// takes already-compiled graphs as Runners (weft.Model and
// runtime.Session satisfy the interface), one per sequence length: the
// one of length 1 decodes, longer ones prefill in buckets.
//
// The cache is f32, one contiguous [1, KVHeads, Capacity, HeadDim] tensor
// per layer for keys and values, passed to every run as read-only inputs
// and updated in place afterwards with the run's new entries. Later work:
// paged storage, f16/q8_0 cache storage, batching several sequences.
//
// It knows ir (tensors and values) only: no frontend, pass, scheduler or
// backend.
package llm
