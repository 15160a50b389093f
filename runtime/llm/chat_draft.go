package llm

import (
	"context"
	"fmt"
	"time"
)

// SpeculateContinue is Speculate without the reset, for a conversation
// held in both caches: prompt is appended to what the target's cache
// already holds (the earlier turns) and to the draft's, which must hold
// the same tokens (the same Pos; both caches empty for the first turn).
// The sampler's repetition history is prompt and the new tokens only, as
// in Continue.
//
// On return both caches hold the same tokens, which are what Continue
// leaves in the target's: after a stop token every emitted token (the
// stop token is neither emitted nor cached), after any other end all but
// the last emitted token; the caller puts what the cache lacks at the
// start of the next prompt. Greedy output is Continue's token for token
// (see Speculate).
//
// A draft that cannot follow — its cache holds other tokens than the
// target's (it filled up in an earlier turn), or the prompt does not fit
// in it — takes no part: the target continues alone (Continue, with
// SpecMetrics of no proposals), and the draft stays as it is until both
// are reset. A draft that fills up during the turn stops proposing, as in
// Speculate, and is left behind.
func SpeculateContinue(ctx context.Context, target, draft *Model, prompt []int32, opts SpecOptions, emit func(tok int32) bool) (SpecMetrics, error) {
	base := target.pos
	sp := &speculator{target: target, draft: draft, opts: opts, emit: emit, base: base,
		met: SpecMetrics{Metrics: Metrics{PromptTokens: len(prompt)}, K: opts.K}}
	if err := sp.init(prompt); err != nil {
		return sp.met, err
	}
	if draft.pos != base || base+len(prompt) > draft.MaxCapacity() {
		met, err := target.Continue(ctx, prompt, opts.Options, emit)
		return SpecMetrics{Metrics: met, K: opts.K}, err
	}
	if err := sp.generate(ctx, prompt); err != nil {
		return sp.met, err
	}
	// The draft may lack accepted tokens the target ran (a round's bonus
	// token, or a stop token's predecessor): feed them, as far as its
	// cache holds.
	t0 := time.Now()
	for draft.pos < target.pos && draft.pos < draft.MaxCapacity() {
		i := draft.pos - base
		if _, err := draft.Feed(ctx, sp.seq[i:i+1]); err != nil {
			return sp.met, fmt.Errorf("llm: draft catching up at position %d: %w", draft.pos, err)
		}
		sp.met.DraftSteps++
	}
	dt := time.Since(t0)
	sp.met.DraftTime += dt
	sp.met.Decode += dt
	return sp.met, nil
}
