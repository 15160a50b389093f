package llm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions selects how the next token is drawn from the logits.
// The steps run in this order: repetition penalty, then (when Temperature
// is 0) argmax; otherwise top-k, softmax at Temperature, top-p, min-p, and
// a draw from what is left, renormalized.
type SamplerOptions struct {
	// Temperature divides the logits before the softmax; 0 is greedy.
	Temperature float64
	// TopK keeps the K most likely tokens (0: all).
	TopK int
	// TopP keeps the most likely tokens whose probabilities sum to at least
	// TopP (nucleus sampling; 0 or 1: all).
	TopP float64
	// MinP keeps the tokens whose probability is at least MinP times the
	// most likely one's (0: all).
	MinP float64
	// RepetitionPenalty (> 0; 0 or 1: off) divides the positive logits and
	// multiplies the negative ones of tokens seen in the last RepeatWindow
	// tokens of the history (0: the whole history), as llama.cpp and
	// Hugging Face do.
	RepetitionPenalty float64
	RepeatWindow      int
	// Seed makes the draws reproducible.
	Seed uint64
}

// Validate reports out-of-range options.
func (o SamplerOptions) Validate() error {
	var errs []error
	if !(o.Temperature >= 0) || math.IsInf(o.Temperature, 0) {
		errs = append(errs, fmt.Errorf("temperature %v must be finite and ≥ 0", o.Temperature))
	}
	if o.TopK < 0 {
		errs = append(errs, fmt.Errorf("top-k %d must be ≥ 0", o.TopK))
	}
	if !(o.TopP >= 0 && o.TopP <= 1) {
		errs = append(errs, fmt.Errorf("top-p %v must be in [0, 1]", o.TopP))
	}
	if !(o.MinP >= 0 && o.MinP <= 1) {
		errs = append(errs, fmt.Errorf("min-p %v must be in [0, 1]", o.MinP))
	}
	if !(o.RepetitionPenalty >= 0) || math.IsInf(o.RepetitionPenalty, 0) {
		errs = append(errs, fmt.Errorf("repetition penalty %v must be finite and ≥ 0", o.RepetitionPenalty))
	}
	if o.RepeatWindow < 0 {
		errs = append(errs, fmt.Errorf("repeat window %d must be ≥ 0", o.RepeatWindow))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llm: sampler: %w", err)
	}
	return nil
}

// Sampler draws tokens. It is not safe for concurrent use.
type Sampler struct {
	o     SamplerOptions
	rng   *rand.Rand
	cands []cand
}

type cand struct {
	tok int
	v   float64 // logit, then probability
}

// NewSampler returns a sampler for o.
func NewSampler(o SamplerOptions) (*Sampler, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))}, nil
}

// Sample returns the next token for logits (not modified) given the tokens
// so far (for the repetition penalty).
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	if s.o.Temperature == 0 && !(s.o.RepetitionPenalty > 0 && s.o.RepetitionPenalty != 1) && len(logits) > 0 {
		// Greedy without a penalty: one pass over the logits, the lowest
		// id among ties, as distribution picks (no candidate list to fill).
		return int32(argmaxFirst(logits))
	}
	c := s.distribution(logits, history)
	if len(c) == 1 {
		return int32(c[0].tok)
	}
	r := s.rng.Float64()
	acc := 0.0
	for _, x := range c {
		acc += x.v
		if r < acc {
			return int32(x.tok)
		}
	}
	return int32(c[len(c)-1].tok) // rounding: the sum fell just short of 1
}

// distribution returns the candidates left after every filter with their
// renormalized probabilities, most likely first (a single candidate with
// probability 1 when greedy).
func (s *Sampler) distribution(logits []float32, history []int32) []cand {
	if cap(s.cands) < len(logits) {
		s.cands = make([]cand, 0, len(logits)) // once: no growth garbage
	}
	c := s.cands[:0]
	for i, l := range logits {
		c = append(c, cand{i, float64(l)})
	}
	s.cands = c
	if p := s.o.RepetitionPenalty; p > 0 && p != 1 {
		h := history
		if w := s.o.RepeatWindow; w > 0 && len(h) > w {
			h = h[len(h)-w:]
		}
		seen := map[int32]bool{}
		for _, t := range h {
			if t < 0 || int(t) >= len(c) || seen[t] {
				continue
			}
			seen[t] = true
			if c[t].v > 0 {
				c[t].v /= p
			} else {
				c[t].v *= p
			}
		}
	}
	if s.o.Temperature == 0 {
		// The most likely token, the lowest id among ties: one pass, no
		// sort (a 32000-token sort costs more than a small model's step).
		best := 0
		for i := range c {
			if c[i].v > c[best].v {
				best = i
			}
		}
		return append(c[:0], cand{c[best].tok, 1})
	}
	// Most likely first; ties keep the lower token id first.
	slices.SortFunc(c, func(a, b cand) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return a.tok - b.tok
	})
	if k := s.o.TopK; k > 0 && k < len(c) {
		c = c[:k]
	}
	top, sum := c[0].v, 0.0
	for i := range c {
		c[i].v = math.Exp((c[i].v - top) / s.o.Temperature)
		sum += c[i].v
	}
	for i := range c {
		c[i].v /= sum
	}
	if p := s.o.TopP; p > 0 && p < 1 {
		acc := 0.0
		for i := range c {
			acc += c[i].v
			if acc >= p {
				c = c[:i+1]
				break
			}
		}
	}
	if mp := s.o.MinP; mp > 0 {
		floor := mp * c[0].v
		n := 1
		for n < len(c) && c[n].v >= floor {
			n++
		}
		c = c[:n]
	}
	sum = 0
	for _, x := range c {
		sum += x.v
	}
	for i := range c {
		c[i].v /= sum
	}
	return c
}

// argmaxFirst returns the lowest index of the largest of v (len(v) > 0),
// NaNs never winning unless v[0] is one (then 0): the result of one pass
// of "if v[i] > best". Eight lanes (elements i ≡ j mod 8) keep running
// maxima and where each was first reached: eight short dependency chains
// instead of one, and as few mispredicted updates as the plain pass (a
// misprediction on logits just out of cache stalls the whole stream).
// The answer is the earliest position among the lanes holding the
// largest value.
func argmaxFirst(v []float32) int {
	if v[0] != v[0] {
		return 0
	}
	inf := float32(math.Inf(-1))
	var m [8]float32
	var at [8]int
	for j := range m {
		m[j], at[j] = inf, -1
	}
	n := len(v) / 8 * 8
	for i := 0; i < n; i += 8 {
		e := (*[8]float32)(v[i:])
		for j, x := range e {
			if x > m[j] {
				m[j], at[j] = x, i+j
			}
		}
	}
	best, bv := -1, inf
	for j := range m {
		if at[j] >= 0 && (best < 0 || m[j] > bv || m[j] == bv && at[j] < best) {
			best, bv = at[j], m[j]
		}
	}
	for i := n; i < len(v); i++ { // the tail
		if best < 0 || v[i] > bv {
			best, bv = i, v[i]
		}
	}
	if best < 0 || bv == inf {
		return argmaxPlain(v) // every value -Inf or NaN: v[0] decides
	}
	return best
}

// argmaxPlain is argmaxFirst's definition, one comparison at a time.
func argmaxPlain(v []float32) int {
	best, bv := 0, v[0]
	for i, x := range v {
		if x > bv {
			best, bv = i, x
		}
	}
	return best
}
