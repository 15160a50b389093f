// Package llm runs autoregressive generation on compiled decoder graphs:
// it owns the KV cache, feeds prompts through prefill graphs and tokens
// through a decode graph, samples (greedy, temperature, top-k, top-p,
// min-p, repetition penalty, seeded), stops on stop tokens, a token limit,
// a full context or a cancelled context, and streams tokens to a callback
// with timing metrics.
//
// The graphs follow the interface frontend/llama documents (tokens and
// positions inputs, per-layer cache_key.L / cache_value.L cache inputs that
// each run updates in place, a logits output); this package repeats those
// names rather than importing a frontend. A Model takes already-compiled
// graphs as Runners (weft.Model and runtime.Session satisfy the
// interface), one per sequence length: the one of length 1 decodes, longer
// ones prefill in buckets. A graph with a logits_index input computes the
// logits of one token only (frontend/llama's Mode.LastLogits: the
// classifier runs on one row): Feed uses such graphs for prompt chunks,
// while FeedAll, which returns every token's logits, skips them.
//
// The cache is session-owned state: one contiguous [1, KVHeads, Capacity,
// HeadDim] tensor per layer for keys and one for values, of the graphs'
// cache dtype — f32, f16 (half the memory) or q8_0 (about a quarter) —
// allocated whole at New and bound to every graph as inputs. The graphs'
// KVCacheUpdate ops write each run's new keys and values into it in place
// (the memory planner gives their outputs no storage of their own), and
// KVAttention reads it up to each token's position, so a run copies no
// cache and attends only over the tokens so far. Positions at or beyond
// Pos are never read: lowering the length (Reset, Rewind) is all a rewind
// needs. Generation stops when the cache is full, or with Options.Slide
// drops the oldest tokens and prefills the newest half again. Continue
// appends a conversation's next turn to the cache without re-prefilling
// the earlier ones. NewGrowing starts the cache at one page (PageTokens)
// and doubles it on demand, recompiling the graphs for the new capacity.
// Later work: batching several sequences.
//
// Speculate (speculative.go) decodes with a draft Model of the same
// vocabulary proposing K tokens per round, which the target verifies in
// one FeedAll run of K+1 tokens; both caches are then rewound (Rewind) to
// the accepted tokens. Greedy output is Generate's token for token where
// the target's batched and single-token kernels round alike; sampling
// uses the speculative sampling rule. SpeculateContinue (chat_draft.go)
// is its Continue: a conversation held in both caches, which it leaves
// holding the same tokens after each turn.
//
// It knows ir (tensors and values) only: no frontend, pass, scheduler or
// backend.
package llm
