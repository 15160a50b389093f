package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/weftrt/weft/ir"
)

// MaxDraftTokens is the largest SpecOptions.K.
const MaxDraftTokens = 64

// SpecOptions configures a speculative generation.
type SpecOptions struct {
	Options
	// K is the number of tokens the draft proposes per round (1 to
	// MaxDraftTokens); the target verifies them in one run of K+1 tokens, so
	// it should have a graph of sequence length K+1 (Feed picks the
	// smallest graph holding them, padding otherwise).
	K int
	// DraftMinP (0 to 1; 0: off) ends a round's proposals early when the
	// draft's most likely token has a probability (softmax of its logits)
	// below it: an unsure draft is likely rejected, and its runs are
	// wasted. The output is the same either way (greedy) or distributed the
	// same (sampling); only the speed changes.
	DraftMinP float64
}

// SpecMetrics reports a speculative generation. In the embedded Metrics,
// Prefill covers the prompt in both models, Decode every draft and target
// run after it, and DecodeSteps counts the target's verification runs.
type SpecMetrics struct {
	Metrics
	K int
	// Proposed is the draft tokens the target checked; Accepted those it
	// agreed with (each round also yields one token of the target's own).
	Proposed, Accepted int
	// DraftSteps counts the draft's single-token runs.
	DraftSteps int
	// DraftTime and VerifyTime split Decode between the two models.
	DraftTime, VerifyTime time.Duration
}

// AcceptanceRate is Accepted / Proposed (0 when nothing was proposed).
func (m SpecMetrics) AcceptanceRate() float64 {
	if m.Proposed == 0 {
		return 0
	}
	return float64(m.Accepted) / float64(m.Proposed)
}

// TokensPerPass is the tokens each target verification run yielded.
func (m SpecMetrics) TokensPerPass() float64 {
	if m.DecodeSteps == 0 {
		return 0
	}
	return float64(max(m.Generated-1, 0)) / float64(m.DecodeSteps)
}

// DecodeTokensPerSec is the tokens emitted after the first (which the
// prefill yields) per second of decoding, draft and target together.
func (m SpecMetrics) DecodeTokensPerSec() float64 { return rate(m.Generated-1, m.Decode) }

// String formats the metrics on one line.
func (m SpecMetrics) String() string {
	return fmt.Sprintf("prompt %d tokens, generated %d (stop: %s); time to first token %v; prefill %.1f tok/s; "+
		"decode %.1f tok/s; speculative k=%d: accepted %d of %d draft tokens (%.1f%%), %d target passes (%.2f tokens each), "+
		"draft %v, verify %v",
		m.PromptTokens, m.Generated, m.Stop, m.TimeToFirst.Round(time.Microsecond), m.PrefillTokensPerSec(),
		m.DecodeTokensPerSec(), m.K, m.Accepted, m.Proposed, 100*m.AcceptanceRate(), m.DecodeSteps, m.TokensPerPass(),
		m.DraftTime.Round(time.Millisecond), m.VerifyTime.Round(time.Millisecond))
}

// Rewind drops the newest tokens from the cache so that it holds n (0 ≤ n
// ≤ Pos). The dropped entries stay in memory but are never read again:
// every run masks the slots at or beyond its own positions, and the next
// tokens overwrite them.
func (m *Model) Rewind(n int) error {
	if n < 0 || n > m.pos {
		return fmt.Errorf("llm: rewind to %d tokens: the cache holds %d", n, m.pos)
	}
	m.pos = n
	return nil
}

// FeedAll is Feed returning the logits after every token: len(tokens)
// rows of Vocab values, appended to dst[:0] (reused when large enough).
// A speculative target verifies a draft with it.
func (m *Model) FeedAll(ctx context.Context, tokens []int32, dst []float32) ([]float32, error) {
	if err := m.admit("FeedAll", tokens); err != nil {
		return nil, err
	}
	out := dst[:0]
	for len(tokens) > 0 {
		s := m.pick(len(tokens))
		n := min(len(tokens), s.seq)
		if err := m.run(ctx, s, tokens[:n]); err != nil {
			return nil, err
		}
		out = append(out, s.logits[:n*m.Vocab]...)
		tokens = tokens[n:]
	}
	return out, nil
}

// speculator is one speculative generation's state.
type speculator struct {
	target, draft *Model
	opts          SpecOptions
	emit          func(int32) bool
	tsmp, dsmp    *Sampler
	rng           *rand.Rand
	seq           []int32 // prompt and emitted tokens; the last is not in the target's cache
	base          int     // the cache positions before seq (SpeculateContinue's earlier turns)
	met           SpecMetrics
	greedy        bool
	props         []int32     // this round's draft tokens
	hist          []int32     // scratch: seq and the proposals so far
	q             [][]float64 // their draft distributions (sampling), dense over the vocabulary
	p             []float64   // one target distribution (sampling)
	resid         []float64
	logits        []float32 // the target's verification logits
	done          bool
}

// Speculate generates like target.Generate, with draft proposing
// opts.K tokens per round that the target verifies in one run: the draft
// decodes K tokens one at a time after the last accepted one, the target
// runs that token and the K proposals together (causally, over its cache)
// and so predicts the token after each; the longest prefix of the
// proposals that the target's own choices agree with is accepted, plus
// the target's token after it (a correction, or after K accepted tokens a
// bonus). Both caches are then rewound to the accepted tokens (Rewind).
//
// Greedy (Sampler.Temperature 0): each emitted token is the target's
// argmax (after the repetition penalty) given everything before it, so
// the output is Generate's token for token, whatever the draft proposes,
// because a verify graph (frontend/llama: every token's logits) gives each
// row of a batched (K+1-row) run bit for bit the result of that row run
// alone: its matmuls are QMatMulGroups, whose kernels sum each row alike at
// any row count for every quantized and F16/BF16 weight type, the
// activations' vector kernels treat every element alike wherever it sits,
// and attention reads each token's cache prefix the same way in both
// (TestFeedAllRowExact checks it on a llama-110m-wide model for every
// weight and KV cache type, at -O0 and -O2, 1 and 2 threads). F32 weights
// are row-exact at -O2 (the default); at -O0 a small matmul may take a
// different kernel at one row than at several.
//
// Sampling (Temperature > 0): the draft draws each proposal d from its own
// filtered distribution q (the same SamplerOptions); the target accepts d
// with probability min(1, p(d)/q(d)), p its filtered distribution at that
// position, and otherwise draws its token from max(0, p − q) renormalized
// and ends the round; after K acceptances it draws a bonus token from p.
// Every emitted token is then distributed as the target's sampler would
// draw it (speculative sampling, Leviathan et al. 2023, Chen et al. 2023),
// though not the same draws as Generate with the same seed: one seeded
// generator makes all draws, so a seed reproduces the output.
//
// Both models must share the vocabulary (the caller checks the token
// strings where it has them). Both caches are reset first, and the prompt
// must fit in both. Stop tokens, MaxTokens, emit and ctx behave as in
// Generate; the target's full cache stops with StopContextFull (a draft
// whose cache is full stops proposing, and the target goes on alone);
// Options.Slide is unsupported.
func Speculate(ctx context.Context, target, draft *Model, prompt []int32, opts SpecOptions, emit func(tok int32) bool) (SpecMetrics, error) {
	sp := &speculator{target: target, draft: draft, opts: opts, emit: emit,
		met: SpecMetrics{Metrics: Metrics{PromptTokens: len(prompt)}, K: opts.K}}
	if err := sp.init(prompt); err != nil {
		return sp.met, err
	}
	target.Reset()
	draft.Reset()
	err := sp.generate(ctx, prompt)
	return sp.met, err
}

// generate feeds prompt to both models at their positions (sp.base), then
// samples and decodes until the generation ends.
func (sp *speculator) generate(ctx context.Context, prompt []int32) error {
	start := time.Now()
	logits, err := sp.target.Feed(ctx, prompt)
	if err == nil {
		_, err = sp.draft.Feed(ctx, prompt)
	}
	sp.met.Prefill = time.Since(start)
	if err != nil {
		return err
	}
	if err := checkFinite(logits); err != nil {
		return fmt.Errorf("llm: target at position %d: %w", sp.target.pos, err)
	}
	tok := sp.tsmp.Sample(logits, sp.seq)
	sp.met.TimeToFirst = time.Since(start)
	if !sp.add(tok) {
		return nil
	}
	t0 := time.Now()
	err = sp.decode(ctx)
	sp.met.Decode = time.Since(t0)
	return err
}

// decode runs rounds until the generation ends.
func (sp *speculator) decode(ctx context.Context) error {
	for !sp.done {
		if err := ctx.Err(); err != nil {
			sp.met.Stop = StopCancelled
			return err
		}
		if err := sp.round(ctx); err != nil {
			if ctx.Err() != nil {
				sp.met.Stop = StopCancelled
				return ctx.Err()
			}
			return err
		}
	}
	return nil
}

func (sp *speculator) init(prompt []int32) error {
	o := sp.opts
	switch {
	case len(prompt) == 0:
		return errors.New("llm: Speculate needs a prompt of at least one token (e.g. BOS)")
	case o.MaxTokens < 1:
		return fmt.Errorf("llm: MaxTokens is %d, must be positive", o.MaxTokens)
	case o.K < 1 || o.K > MaxDraftTokens:
		return fmt.Errorf("llm: speculative K is %d, want 1 to %d draft tokens per round", o.K, MaxDraftTokens)
	case !(o.DraftMinP >= 0 && o.DraftMinP <= 1):
		return fmt.Errorf("llm: DraftMinP %v must be in [0, 1]", o.DraftMinP)
	case sp.target.Vocab != sp.draft.Vocab:
		return fmt.Errorf("llm: the draft's vocabulary has %d tokens, the target's %d: speculative decoding needs the same vocabulary", sp.draft.Vocab, sp.target.Vocab)
	case o.Slide:
		return fmt.Errorf("llm: speculative decoding with the sliding-window context policy: %w", ir.ErrUnsupported)
	case sp.target == sp.draft:
		return errors.New("llm: the draft must be another Model than the target (each has its own cache)")
	}
	var err error
	if sp.tsmp, err = NewSampler(o.Sampler); err != nil {
		return err
	}
	dopt := o.Sampler
	dopt.Seed ^= 0x5bd1e995
	if sp.dsmp, err = NewSampler(dopt); err != nil {
		return err
	}
	sp.rng = rand.New(rand.NewPCG(o.Sampler.Seed, 0x2545f4914f6cdd1d))
	sp.greedy = o.Sampler.Temperature == 0
	sp.seq = append(make([]int32, 0, len(prompt)+o.MaxTokens), prompt...)
	return nil
}

// add handles the next token: a stop token ends the generation (not
// emitted); otherwise it is emitted, and the generation ends when emit
// returns false or MaxTokens are out. It reports whether to go on.
func (sp *speculator) add(tok int32) bool {
	if slices.Contains(sp.opts.Stop, tok) {
		sp.met.Stop, sp.done = StopToken, true
		return false
	}
	sp.met.Generated++
	sp.seq = append(sp.seq, tok)
	if !sp.emit(tok) {
		sp.met.Stop, sp.done = StopCallback, true
		return false
	}
	if sp.met.Generated >= sp.opts.MaxTokens {
		sp.met.Stop, sp.done = StopMaxTokens, true
		return false
	}
	return true
}

// round drafts, verifies and emits. On entry the target's cache holds
// seq but its last token, the draft's a prefix of that.
func (sp *speculator) round(ctx context.Context) error {
	t, d := sp.target, sp.draft
	n := sp.base + len(sp.seq) // the target's cache holds n-1
	if n > t.MaxCapacity() {
		sp.met.Stop, sp.done = StopContextFull, true
		return nil
	}
	// The target runs the pending token and k proposals (n+k tokens in
	// its cache), the draft caches the pending one and k-1 proposals (k 0:
	// the target goes on alone); no more than the tokens still wanted.
	k := min(sp.opts.K, t.MaxCapacity()-n, d.MaxCapacity()-n+1, sp.opts.MaxTokens-sp.met.Generated-1)
	k = max(k, 0)
	t0 := time.Now()
	if err := sp.propose(ctx, k); err != nil {
		return err
	}
	t1 := time.Now()
	sp.met.DraftTime += t1.Sub(t0)
	k = len(sp.props) // DraftMinP may have ended the proposals early
	toks := append([]int32{sp.seq[len(sp.seq)-1]}, sp.props...)
	var err error
	if sp.logits, err = t.FeedAll(ctx, toks, sp.logits); err != nil {
		return err
	}
	sp.met.VerifyTime += time.Since(t1)
	sp.met.DecodeSteps++
	sp.met.Proposed += k
	V := t.Vocab
	for i := 0; i <= k; i++ {
		row := sp.logits[i*V : (i+1)*V]
		if err := checkFinite(row); err != nil {
			return fmt.Errorf("llm: target at position %d: %w", n-1+i, err)
		}
		tok, ok := sp.verify(i, k, row)
		if ok {
			sp.met.Accepted++
		}
		if !sp.add(tok) || !ok {
			break
		}
	}
	// The target's cache keeps what it ran of seq (all but the new last
	// token; after a stop token every emitted token, which it ran, as
	// Generate leaves it); the draft's loses any rejected proposals.
	keep := sp.base + len(sp.seq) - 1
	if sp.met.Stop == StopToken {
		keep++
	}
	if err := t.Rewind(min(t.pos, keep)); err != nil {
		return err
	}
	return d.Rewind(min(d.pos, keep))
}

// propose runs the draft: it first catches up on the tokens of seq its
// cache lacks, then decodes up to k proposals (into sp.props, their
// distributions into sp.q when sampling), fewer when DraftMinP stops it.
func (sp *speculator) propose(ctx context.Context, k int) error {
	sp.props = sp.props[:0]
	if k == 0 {
		return nil
	}
	d := sp.draft
	var logits []float32
	for d.pos < sp.base+len(sp.seq) {
		var err error
		i := d.pos - sp.base
		if logits, err = d.Feed(ctx, sp.seq[i:i+1]); err != nil {
			return err
		}
		sp.met.DraftSteps++
	}
	hist := append(sp.hist[:0], sp.seq...) // the sampler's history
	for i := 0; i < k; i++ {
		if i > 0 {
			var err error
			if logits, err = d.Feed(ctx, sp.props[i-1:i]); err != nil {
				return err
			}
			sp.met.DraftSteps++
			hist = append(hist, sp.props[i-1])
		}
		if err := checkFinite(logits); err != nil {
			return fmt.Errorf("llm: draft at position %d: %w", d.pos, err)
		}
		if p := sp.opts.DraftMinP; p > 0 && topProb(logits) < p {
			break
		}
		if sp.greedy {
			sp.props = append(sp.props, sp.dsmp.Sample(logits, hist))
			continue
		}
		if len(sp.q) <= i {
			sp.q = append(sp.q, make([]float64, d.Vocab))
		}
		dense(sp.q[i], sp.dsmp.distribution(logits, hist))
		sp.props = append(sp.props, int32(draw(sp.q[i], sp.rng)))
	}
	sp.hist = hist
	return nil
}

// verify returns the target's token at round position i (after the
// pending token and i proposals) given its logits there, and whether it is
// the accepted proposal i.
func (sp *speculator) verify(i, k int, logits []float32) (int32, bool) {
	if sp.greedy {
		tok := sp.tsmp.Sample(logits, sp.seq)
		return tok, i < k && tok == sp.props[i]
	}
	if len(sp.p) != len(logits) {
		sp.p, sp.resid = make([]float64, len(logits)), make([]float64, len(logits))
	}
	dense(sp.p, sp.tsmp.distribution(logits, sp.seq))
	if i == k {
		return int32(draw(sp.p, sp.rng)), false
	}
	tok, ok := acceptOrResample(sp.p, sp.q[i], int(sp.props[i]), sp.resid, sp.rng)
	return int32(tok), ok
}

// acceptOrResample is the speculative sampling rule for a draft token d
// drawn from q: accept it with probability min(1, p[d]/q[d]), otherwise
// draw from max(0, p − q) renormalized (resid is scratch of len(p)). The
// result is distributed as p.
func acceptOrResample(p, q []float64, d int, resid []float64, rng *rand.Rand) (int, bool) {
	if q[d] > 0 && rng.Float64()*q[d] < p[d] {
		return d, true
	}
	sum := 0.0
	for j := range p {
		resid[j] = max(0, p[j]-q[j])
		sum += resid[j]
	}
	if sum <= 0 { // p == q up to rounding: the rejection was rounding too
		return draw(p, rng), false
	}
	return draw(resid, rng), false
}

// topProb is the largest probability of the softmax of logits.
func topProb(logits []float32) float64 {
	m := float64(logits[0])
	for _, v := range logits {
		m = max(m, float64(v))
	}
	sum := 0.0
	for _, v := range logits {
		sum += math.Exp(float64(v) - m)
	}
	return 1 / sum
}

// dense writes a sampler distribution as probabilities over the vocabulary.
func dense(dst []float64, c []cand) {
	clear(dst)
	for _, x := range c {
		dst[x.tok] = x.v
	}
}

// draw samples an index from weights w (non-negative, not all zero; they
// need not sum to 1).
func draw(w []float64, rng *rand.Rand) int {
	sum := 0.0
	last := -1
	for j, v := range w {
		sum += v
		if v > 0 {
			last = j
		}
	}
	r := rng.Float64() * sum
	acc := 0.0
	for j, v := range w {
		acc += v
		if r < acc && v > 0 {
			return j
		}
	}
	return last // rounding: r fell just short of the sum
}
