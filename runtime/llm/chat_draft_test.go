package llm_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/runtime/llm"
)

// chatTurns are a conversation's turn prompts: shorter and longer than the
// 8-token prefill graph.
var chatTurns = [][]int32{{1, 5, 9, 3}, {7, 2}, {11, 2, 60, 33, 4, 4, 9, 1, 20, 6}, {8}}

// turnResult is one turn's output and the cache positions after it.
type turnResult struct {
	toks             []int32
	stop             llm.StopReason
	pos, draftPos    int
	proposed, passes int
}

// converse runs chatTurns as a chat does: each turn's prompt is what the
// cache lacks (the last emitted token unless a stop token ended the
// previous reply) and the turn's own tokens. With draft nil the target
// continues alone (Continue); otherwise SpeculateContinue with k.
func converse(t *testing.T, target, draft *llm.Model, k int, opts llm.Options) []turnResult {
	t.Helper()
	ctx := context.Background()
	target.Reset()
	if draft != nil {
		draft.Reset()
	}
	var pending []int32
	var out []turnResult
	for i, turn := range chatTurns {
		ids := append(slices.Clone(pending), turn...)
		var r turnResult
		var err error
		if draft == nil {
			var met llm.Metrics
			met, err = target.Continue(ctx, ids, opts, collect(&r.toks))
			r.stop = met.Stop
		} else {
			var met llm.SpecMetrics
			met, err = llm.SpeculateContinue(ctx, target, draft, ids, llm.SpecOptions{Options: opts, K: k}, collect(&r.toks))
			r.stop, r.proposed, r.passes = met.Stop, met.Proposed, met.DecodeSteps
			r.draftPos = draft.Pos()
			require.LessOrEqual(t, met.Accepted, met.Proposed)
		}
		require.NoError(t, err, "turn %d", i)
		r.pos = target.Pos()
		pending = nil
		if r.stop != llm.StopToken && len(r.toks) > 0 {
			pending = r.toks[len(r.toks)-1:]
		}
		out = append(out, r)
	}
	return out
}

// TestSpeculateContinueGreedy is chat's guarantee: over several turns,
// greedy SpeculateContinue emits Continue's tokens and leaves the target's
// cache where Continue leaves it, with the draft's at the same position —
// for replies ended by the token limit and by a stop token (both caches
// then hold every emitted token), with drafts that agree always, often or
// rarely, and k from 1 to 5.
func TestSpeculateContinueGreedy(t *testing.T) {
	const capacity = 96
	sm := newSpecModels(t, capacity)
	ref := compile(t, sm.cfg, sm.w, capacity, 2, 1, 8)
	target := compile(t, sm.cfg, sm.w, capacity, 2, 1, 2, 4, 6, 8)

	// The stop token: the 5th of the first reply without one, so that some
	// turns end by it (after accepted proposals) and others by the limit.
	plain := converse(t, ref, nil, 0, llm.Options{MaxTokens: 9})
	stop := plain[0].toks[4]
	for _, opts := range []llm.Options{{MaxTokens: 9}, {MaxTokens: 12, Stop: []int32{stop}}} {
		want := converse(t, ref, nil, 0, opts)
		stops := 0
		for _, r := range want {
			if r.stop == llm.StopToken {
				stops++
			}
		}
		if len(opts.Stop) > 0 {
			require.Positive(t, stops, "the stop token %d ends some turn: %+v", stop, want)
		}
		for name, draft := range sm.drafts {
			for _, k := range []int{1, 3, 5} {
				got := converse(t, target, draft, k, opts)
				for i := range want {
					what := []any{"draft %s, k %d, stop %v, turn %d", name, k, opts.Stop, i}
					require.Equal(t, want[i].toks, got[i].toks, what...)
					require.Equal(t, want[i].stop, got[i].stop, what...)
					require.Equal(t, want[i].pos, got[i].pos, what...)
					require.Equal(t, got[i].pos, got[i].draftPos, what...)
				}
				if name == "self" {
					// A copy of the target agrees always: every pass but
					// the last ones of a turn yields k+1 tokens.
					for i, r := range got {
						require.LessOrEqual(t, r.passes, (len(r.toks)-1+k)/(k+1)+1, "self, k %d, turn %d: %+v", k, i, r)
					}
				}
			}
		}
	}
}

// TestSpeculateContinueDraftFull: a draft with a smaller context follows
// while it can, then stops proposing; the target goes on alone (the same
// tokens), and the draft stays behind.
func TestSpeculateContinueDraftFull(t *testing.T) {
	const capacity = 96
	sm := newSpecModels(t, capacity)
	ref := compile(t, sm.cfg, sm.w, capacity, 2, 1, 8)
	target := compile(t, sm.cfg, sm.w, capacity, 2, 1, 4, 8)
	dcfg, dw := firstLayers(sm.cfg, sm.w, 1)
	small := compile(t, dcfg, dw, 20, 2, 1, 8)
	opts := llm.Options{MaxTokens: 9}
	want := converse(t, ref, nil, 0, opts)
	got := converse(t, target, small, 3, opts)
	for i := range want {
		require.Equal(t, want[i].toks, got[i].toks, "turn %d", i)
		require.Equal(t, want[i].pos, got[i].pos, "turn %d", i)
	}
	// Turn 1 fits (4 + 9 tokens: 12 cached), turn 2 (3 + 9) fills the
	// draft's 20 midway, turns 3 and 4 find it full: no proposals, one
	// target pass per token.
	require.Positive(t, got[0].proposed)
	require.Equal(t, 12, got[0].pos)
	require.Equal(t, got[0].pos, got[0].draftPos)
	require.Positive(t, got[1].proposed)
	require.Equal(t, 23, got[1].pos)
	require.Equal(t, 20, got[1].draftPos)
	for _, r := range got[2:] {
		require.Zero(t, r.proposed, "%+v", r)
		require.Equal(t, 20, r.draftPos)
		require.Equal(t, len(r.toks), r.passes+1, "%+v", r)
	}
}

// TestSpeculateContinueErrors: the options are checked as in Speculate.
func TestSpeculateContinueErrors(t *testing.T) {
	sm := newSpecModels(t, 32)
	target := compile(t, sm.cfg, sm.w, 32, 2, 1, 8)
	ctx := context.Background()
	opts := llm.SpecOptions{Options: llm.Options{MaxTokens: 4}, K: 2}
	var got []int32
	_, err := llm.SpeculateContinue(ctx, target, target, []int32{1}, opts, collect(&got))
	require.ErrorContains(t, err, "another Model")
	_, err = llm.SpeculateContinue(ctx, target, sm.drafts["self"], nil, opts, collect(&got))
	require.ErrorContains(t, err, "prompt")
	bad := opts
	bad.K = 0
	_, err = llm.SpeculateContinue(ctx, target, sm.drafts["self"], []int32{1}, bad, collect(&got))
	require.ErrorContains(t, err, "K is 0")
	_, err = llm.SpeculateContinue(ctx, target, sm.drafts["self"], make([]int32, 40), opts, collect(&got))
	require.ErrorIs(t, err, llm.ErrContextFull)
}
