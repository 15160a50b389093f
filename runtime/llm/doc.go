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
// The cache is f32 or f16 (the graphs' past/present dtype: an f16 cache
// halves its memory; the graph widens one layer's cache at a time), one
// contiguous [1, KVHeads, Capacity, HeadDim] tensor per layer for keys and
// values, allocated whole at New, passed to every run as read-only inputs
// and updated in place afterwards with the run's new entries. Every run
// attends over the whole capacity (masked), so a large capacity costs
// attention time even for short contexts. Generation stops when the cache
// is full, or with Options.Slide drops the oldest tokens and prefills the
// newest half again. Continue appends a conversation's next turn to the
// cache without re-prefilling the earlier ones. Later work: paged storage
// grown on demand (with capacity-bucketed graphs), a q8_0 cache, batching
// several sequences.
//
// It knows ir (tensors and values) only: no frontend, pass, scheduler or
// backend.
package llm
