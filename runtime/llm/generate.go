package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Options configures one generation.
type Options struct {
	// MaxTokens is the most tokens to generate (> 0).
	MaxTokens int
	// Stop lists the tokens that end the generation (not emitted).
	Stop    []int32
	Sampler SamplerOptions
	// Slide selects the sliding-window overflow policy: when the cache is
	// full, the oldest tokens are dropped and the newest half of the
	// capacity is prefilled again from position 0 (RoPE positions restart,
	// as in llama.cpp's context shift by re-evaluation), and generation
	// goes on. The tokens kept are this call's prompt and output only.
	// Without Slide a full cache stops the generation (StopContextFull).
	Slide bool
	// OnStep, if set, is called after each successful single-token decode
	// run with its duration (the time Metrics.Decode adds up), on the
	// generating goroutine, before the next token is sampled: for
	// benchmarks that want the steps one by one.
	OnStep func(d time.Duration)
}

// StopReason says why a generation ended.
type StopReason string

// The stop reasons.
const (
	StopMaxTokens   StopReason = "max tokens"   // MaxTokens were generated
	StopToken       StopReason = "stop token"   // a stop token was sampled
	StopContextFull StopReason = "context full" // the KV cache is full
	StopCallback    StopReason = "callback"     // the callback returned false
	StopCancelled   StopReason = "cancelled"    // ctx was cancelled (Generate returns ctx.Err())
)

// Metrics reports one generation.
type Metrics struct {
	PromptTokens    int
	Generated       int // tokens emitted
	DecodeSteps     int // single-token decode runs
	Slides          int // sliding-window re-prefills (Options.Slide)
	Reprefilled     int // tokens prefilled again by the slides
	Stop            StopReason
	TimeToFirst     time.Duration // from the call to the first sampled token
	Prefill, Decode time.Duration // time in prefill and in decode runs
	// DecodeFastest is the fastest single-token decode run: on a busy
	// machine, closer to what the hardware does than the mean.
	DecodeFastest time.Duration
}

// PrefillTokensPerSec is the prompt throughput.
func (m Metrics) PrefillTokensPerSec() float64 { return rate(m.PromptTokens+m.Reprefilled, m.Prefill) }

// DecodeTokensPerSec is the decode throughput: single-token runs per
// second (the first token comes from the prefill).
func (m Metrics) DecodeTokensPerSec() float64 { return rate(m.DecodeSteps, m.Decode) }

func rate(n int, d time.Duration) float64 {
	if n <= 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// String formats the metrics on one line.
func (m Metrics) String() string {
	slides := ""
	if m.Slides > 0 {
		slides = fmt.Sprintf("; %d context slides", m.Slides)
	}
	return fmt.Sprintf("prompt %d tokens, generated %d (stop: %s); time to first token %v; prefill %.1f tok/s; decode %.1f tok/s%s",
		m.PromptTokens, m.Generated, m.Stop, m.TimeToFirst.Round(time.Microsecond), m.PrefillTokensPerSec(), m.DecodeTokensPerSec(), slides)
}

// Generate resets the cache, feeds prompt (at least one token, e.g. BOS),
// then samples up to opts.MaxTokens tokens, calling emit with each as soon
// as it is sampled; emit returning false stops the generation.
//
// Context policy: a prompt that does not fit in the cache fails with
// ErrContextFull before anything runs; when the cache fills during
// generation, Generate stops with StopContextFull (the last sampled token
// has been emitted; no error). A cancelled ctx stops between steps and
// returns ctx.Err() with the metrics so far.
func (m *Model) Generate(ctx context.Context, prompt []int32, opts Options, emit func(tok int32) bool) (Metrics, error) {
	return m.generate(ctx, prompt, opts, emit, true)
}

// Continue is Generate without the reset: prompt is appended to what the
// cache already holds (a conversation's earlier turns), so only the new
// tokens are prefilled. What the cache lacks after a generation: a stop
// token that ended it (sampled, neither emitted nor fed), or, when it
// ended otherwise, the last emitted token (emitted, not fed); the caller
// puts those at the start of prompt when the conversation goes on. The
// sampler's repetition history is prompt and the new tokens only.
func (m *Model) Continue(ctx context.Context, prompt []int32, opts Options, emit func(tok int32) bool) (Metrics, error) {
	return m.generate(ctx, prompt, opts, emit, false)
}

func (m *Model) generate(ctx context.Context, prompt []int32, opts Options, emit func(tok int32) bool, reset bool) (Metrics, error) {
	met := Metrics{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return met, errors.New("llm: Generate needs a prompt of at least one token (e.g. BOS)")
	}
	if opts.MaxTokens < 1 {
		return met, fmt.Errorf("llm: MaxTokens is %d, must be positive", opts.MaxTokens)
	}
	smp, err := NewSampler(opts.Sampler)
	if err != nil {
		return met, err
	}
	start := time.Now()
	if reset {
		m.Reset()
	}
	logits, err := m.Feed(ctx, prompt)
	met.Prefill = time.Since(start)
	if err != nil {
		return met, err
	}
	history := append(make([]int32, 0, len(prompt)+opts.MaxTokens), prompt...)
	for {
		if err := ctx.Err(); err != nil {
			met.Stop = StopCancelled
			return met, err
		}
		if err := checkFinite(logits); err != nil {
			return met, fmt.Errorf("llm: at position %d: %w", m.pos, err)
		}
		tok := smp.Sample(logits, history)
		if met.Generated == 0 {
			met.TimeToFirst = time.Since(start)
		}
		if slices.Contains(opts.Stop, tok) {
			met.Stop = StopToken
			return met, nil
		}
		met.Generated++
		history = append(history, tok)
		if !emit(tok) {
			met.Stop = StopCallback
			return met, nil
		}
		if met.Generated >= opts.MaxTokens {
			met.Stop = StopMaxTokens
			return met, nil
		}
		if m.pos >= m.MaxCapacity() {
			if !opts.Slide || m.MaxCapacity() < 2 {
				met.Stop = StopContextFull
				return met, nil
			}
			// history ends with tok, which is not in the cache yet: re-prefill
			// the newest half of the capacity, tok last.
			keep := history[max(0, len(history)-m.MaxCapacity()/2):]
			t0 := time.Now()
			m.Reset()
			logits, err = m.Feed(ctx, keep)
			met.Prefill += time.Since(t0)
			met.Slides++
			met.Reprefilled += len(keep)
			if err != nil {
				return met, err
			}
			continue
		}
		t0 := time.Now()
		logits, err = m.Feed(ctx, []int32{tok})
		dt := time.Since(t0)
		met.Decode += dt
		if met.DecodeSteps == 0 || dt < met.DecodeFastest {
			met.DecodeFastest = dt
		}
		met.DecodeSteps++
		if err != nil {
			if ctx.Err() != nil {
				met.Stop = StopCancelled
				return met, ctx.Err()
			}
			return met, err
		}
		if opts.OnStep != nil {
			opts.OnStep(dt)
		}
	}
}

// checkFinite rejects NaN logits (a broken model or kernel), which no
// sampler can rank.
func checkFinite(logits []float32) error {
	for i, v := range logits {
		if math.IsNaN(float64(v)) {
			return fmt.Errorf("logit %d is NaN", i)
		}
	}
	return nil
}
