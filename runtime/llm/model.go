package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unsafe"

	"github.com/weftrt/weft/internal/hugemem"
	"github.com/weftrt/weft/ir"
)

// The graph interface (as frontend/llama builds it).
const (
	inTokens      = "tokens"
	inPositions   = "positions"
	inLogitsIndex = "logits_index" // optional: a graph of one token's logits
	outLogits     = "logits"
)

func cacheKey(l int) string   { return "cache_key." + strconv.Itoa(l) }
func cacheValue(l int) string { return "cache_value." + strconv.Itoa(l) }

// Runner is one compiled forward graph. RunInto takes the inputs in the
// order of Inputs and writes into caller-owned tensors in the order of
// Outputs; it reads the tokens and positions and updates the cache inputs
// in place (the graph's KVCacheUpdate ops).
type Runner interface {
	Inputs() []*ir.Value
	Outputs() []*ir.Value
	RunInto(ctx context.Context, inputs, outputs []*ir.Tensor) error
}

// ErrContextFull is returned when tokens do not fit in the KV cache.
var ErrContextFull = errors.New("llm: context is full")

// step is one runner with its bound input and output tensors.
type step struct {
	r       Runner
	seq     int
	in, out []*ir.Tensor
	tokens  []int64 // views of the step's own input tensors
	pos     []int64
	logits  []float32
	// last views the logits_index input of a graph that computes the
	// logits of one token only (nil: logits of every token).
	last []int64
	// perm[k] is the graph input index of the k-th input in the order
	// tokens, positions, cache_key.0, cache_value.0, ...
	perm []int
}

// Model is a decoder with its KV cache. It is not safe for concurrent use
// (the cache is one sequence's state).
type Model struct {
	Layers, KVHeads, HeadDim, Capacity, Vocab int
	// KVType is the cache's element type (the graphs' cache dtype): f32,
	// f16 or q8_0.
	KVType ir.DType

	steps []*step // by seq, ascending; steps[0].seq == 1
	keys  []*ir.Tensor
	vals  []*ir.Tensor
	pos   int     // tokens in the cache
	grow  *grower // nil: fixed capacity
}

// New wraps compiled graphs of one model: the decode graph (sequence
// length 1) and any number of prefill graphs of other lengths. It reads the
// model's geometry from the graphs' declared inputs and checks that they
// agree, then allocates the cache (2 · layers · KVHeads · Capacity ·
// HeadDim elements of KVType), which every graph updates in place.
func New(runners ...Runner) (*Model, error) {
	m := &Model{}
	for i, r := range runners {
		s, err := m.bind(r)
		if err != nil {
			return nil, fmt.Errorf("llm: graph %d: %w", i, err)
		}
		for _, o := range m.steps {
			if o.seq == s.seq {
				return nil, fmt.Errorf("llm: two graphs of sequence length %d", s.seq)
			}
		}
		m.steps = append(m.steps, s)
	}
	slices.SortFunc(m.steps, func(a, b *step) int { return a.seq - b.seq })
	if len(m.steps) == 0 || m.steps[0].seq != 1 {
		return nil, errors.New("llm: no decode graph (sequence length 1)")
	}
	// Every layer's keys and values in one buffer on huge pages where the
	// OS offers them (internal/hugemem: the cache is read in short runs
	// per head and written a row per head, far apart), each tensor on a
	// cache line.
	shape := []int64{1, int64(m.KVHeads), int64(m.Capacity), int64(m.HeadDim)}
	per := int(m.KVType.Bytes(ir.NumElements(shape)))
	stride := (per + 63) &^ 63
	slab := hugemem.Bytes(2 * m.Layers * stride)
	for l := 0; l < m.Layers; l++ {
		k, v := slab[2*l*stride:][:per:per], slab[(2*l+1)*stride:][:per:per]
		m.keys = append(m.keys, &ir.Tensor{DType: m.KVType, Shape: slices.Clone(shape), Data: k})
		m.vals = append(m.vals, &ir.Tensor{DType: m.KVType, Shape: slices.Clone(shape), Data: v})
	}
	for _, s := range m.steps {
		for l := 0; l < m.Layers; l++ {
			s.in[s.perm[2+2*l]], s.in[s.perm[3+2*l]] = m.keys[l], m.vals[l]
		}
	}
	return m, nil
}

// staticShape returns v's static dims or an error naming it.
func staticShape(v *ir.Value, dt ir.DType, rank int) ([]int64, error) {
	if v.DType != dt || len(v.Shape) != rank || !v.Shape.Static() {
		return nil, fmt.Errorf("%q is %v[%v], want a static rank-%d %v", v.Name, v.DType, v.Shape, rank, dt)
	}
	return v.Shape.Ints(), nil
}

// int64View views an i64 tensor's elements (NewTensor's data is aligned).
func int64View(t *ir.Tensor) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(t.Data))), len(t.Data)/8)
}

// bind checks r's interface, learns (or checks) the model geometry, and
// allocates the step's tensors (the cache tensors are bound by New).
func (m *Model) bind(r Runner) (*step, error) {
	ins := map[string]int{}
	for i, v := range r.Inputs() {
		ins[v.Name] = i
	}
	outs := map[string]int{}
	for i, v := range r.Outputs() {
		outs[v.Name] = i
	}
	get := func(name string, dt ir.DType, rank int) ([]int64, error) {
		i, ok := ins[name]
		if !ok {
			return nil, fmt.Errorf("no input %q", name)
		}
		return staticShape(r.Inputs()[i], dt, rank)
	}
	tok, err := get(inTokens, ir.Int64, 2)
	if err != nil {
		return nil, err
	}
	seq := int(tok[1])
	layers := 0
	for {
		if _, ok := ins[cacheKey(layers)]; !ok {
			break
		}
		layers++
	}
	if layers == 0 {
		return nil, fmt.Errorf("no input %q", cacheKey(0))
	}
	kvT := r.Inputs()[ins[cacheKey(0)]].DType
	switch kvT {
	case ir.Float32, ir.Float16, ir.Q8_0:
	default:
		return nil, fmt.Errorf("input %q is %v: %w KV cache type (want f32, f16 or q8_0)", cacheKey(0), kvT, ir.ErrUnsupported)
	}
	kv, err := get(cacheKey(0), kvT, 4)
	if err != nil {
		return nil, err
	}
	lg, ok := outs[outLogits]
	if !ok {
		return nil, fmt.Errorf("no output %q", outLogits)
	}
	lsh, err := staticShape(r.Outputs()[lg], ir.Float32, 3)
	if err != nil {
		return nil, err
	}
	geo := [5]int{layers, int(kv[1]), int(kv[3]), int(kv[2]), int(lsh[2])}
	if m.steps == nil {
		m.Layers, m.KVHeads, m.HeadDim, m.Capacity, m.Vocab = geo[0], geo[1], geo[2], geo[3], geo[4]
		m.KVType = kvT
	} else if cur := [5]int{m.Layers, m.KVHeads, m.HeadDim, m.Capacity, m.Vocab}; cur != geo {
		return nil, fmt.Errorf("geometry (layers, kv heads, head dim, capacity, vocab) %v differs from the first graph's %v", geo, cur)
	} else if kvT != m.KVType {
		return nil, fmt.Errorf("KV cache type %v differs from the first graph's %v", kvT, m.KVType)
	}
	_, lastOnly := ins[inLogitsIndex]
	nIn := 2 + 2*layers
	if lastOnly {
		nIn++
	}
	if len(r.Inputs()) != nIn {
		return nil, fmt.Errorf("%d inputs, want %d (tokens, positions, a key and value cache per layer and an optional logits_index)", len(r.Inputs()), nIn)
	}
	want := map[string][]int64{inTokens: {1, int64(seq)}, inPositions: {1, int64(seq)}}
	kvShape := []int64{1, int64(m.KVHeads), int64(m.Capacity), int64(m.HeadDim)}
	s := &step{r: r, seq: seq, in: make([]*ir.Tensor, len(r.Inputs())), out: make([]*ir.Tensor, len(r.Outputs()))}
	order := []string{inTokens, inPositions}
	for l := 0; l < layers; l++ {
		want[cacheKey(l)], want[cacheValue(l)] = kvShape, kvShape
		order = append(order, cacheKey(l), cacheValue(l))
	}
	// The caller's input order may differ: remember where each goes.
	perm := make([]int, len(order))
	for k, name := range order {
		i, ok := ins[name]
		if !ok {
			return nil, fmt.Errorf("no input %q", name)
		}
		v := r.Inputs()[i]
		dt := m.KVType
		if k < 2 {
			dt = ir.Int64
		}
		sh, err := staticShape(v, dt, len(want[name]))
		if err != nil {
			return nil, err
		}
		if !slices.Equal(sh, want[name]) {
			return nil, fmt.Errorf("input %q has shape %v, want %v", name, sh, want[name])
		}
		perm[k] = i
	}
	s.perm = perm
	s.in[perm[0]] = ir.NewTensor(ir.Int64, want[inTokens])
	s.in[perm[1]] = ir.NewTensor(ir.Int64, want[inPositions])
	s.tokens, s.pos = int64View(s.in[perm[0]]), int64View(s.in[perm[1]])
	rows := seq
	if lastOnly {
		i := ins[inLogitsIndex]
		if _, err := staticShape(r.Inputs()[i], ir.Int64, 1); err != nil || r.Inputs()[i].Shape[0].Size != 1 {
			return nil, fmt.Errorf("input %q is %v[%v], want i64[1]", inLogitsIndex, r.Inputs()[i].DType, r.Inputs()[i].Shape)
		}
		s.in[i] = ir.NewTensor(ir.Int64, []int64{1})
		s.last = int64View(s.in[i])
		rows = 1
	}
	if len(r.Outputs()) != 1 {
		return nil, fmt.Errorf("%d outputs, want 1 (logits; the caches are updated in place)", len(r.Outputs()))
	}
	if lsh[0] != 1 || int(lsh[1]) != rows {
		return nil, fmt.Errorf("output %q has shape %v, want [1 %d vocab]", outLogits, lsh, rows)
	}
	s.out[lg] = ir.NewTensor(ir.Float32, lsh)
	s.logits = s.out[lg].Float32s()
	return s, nil
}

// Pos returns the number of tokens in the cache.
func (m *Model) Pos() int { return m.pos }

// Reset empties the cache (its contents are not cleared: the mask hides
// every slot at or beyond Pos).
func (m *Model) Reset() { m.pos = 0 }

// admit checks tokens for a run of op (Feed, FeedAll): some tokens, room in
// the cache, ids inside the vocabulary; then grows the cache to hold them.
func (m *Model) admit(op string, tokens []int32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("llm: %s of no tokens", op)
	}
	if m.pos+len(tokens) > m.MaxCapacity() {
		return fmt.Errorf("%w: %d tokens in the cache + %d new > capacity %d", ErrContextFull, m.pos, len(tokens), m.MaxCapacity())
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.Vocab {
			return fmt.Errorf("llm: token %d is outside the vocabulary of %d", t, m.Vocab)
		}
	}
	return m.ensure(m.pos + len(tokens))
}

// Feed runs tokens through the model at the current position, appending
// them to the cache, and returns the logits after the last one (a slice
// owned by the model, valid until the next Feed). Long inputs are split
// over the prefill graphs: each chunk takes the smallest graph that holds
// the rest of the input, or the largest graph, padding the tail (padded
// rows get fresh positions, and nothing of them is kept); a chunk that
// would run past the capacity falls back to smaller graphs. Tokens that
// do not fit in the cache fail with ErrContextFull before anything runs.
func (m *Model) Feed(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := m.admit("Feed", tokens); err != nil {
		return nil, err
	}
	var logits []float32
	for len(tokens) > 0 {
		s := m.choose(len(tokens), true)
		n := min(len(tokens), s.seq)
		if err := m.run(ctx, s, tokens[:n]); err != nil {
			return nil, err
		}
		if s.last != nil {
			logits = s.logits[:m.Vocab]
		} else {
			logits = s.logits[(n-1)*m.Vocab : n*m.Vocab]
		}
		tokens = tokens[n:]
	}
	return logits, nil
}

// pick chooses the graph for the next chunk of n tokens among those that
// compute the logits of every token.
func (m *Model) pick(n int) *step { return m.choose(n, false) }

// choose picks the graph for the next chunk of n tokens: the smallest that
// holds them and fits in the cache, else the largest that fits; lastOnly
// admits the graphs that compute the last token's logits only.
func (m *Model) choose(n int, lastOnly bool) *step {
	room := m.Capacity - m.pos
	best := m.steps[0]
	for _, s := range m.steps {
		if s.last != nil && !lastOnly {
			continue
		}
		if s.seq > room {
			break
		}
		best = s
		if s.seq >= n {
			break
		}
	}
	return best
}

// run feeds toks (len ≤ s.seq) through s; the graph writes their keys and
// values into the cache at positions pos, pos+1, ... Padded rows (past
// len(toks)) take the next positions: their entries land in slots past
// the new length, which no later run reads before overwriting them.
func (m *Model) run(ctx context.Context, s *step, toks []int32) error {
	for i := 0; i < s.seq; i++ {
		s.pos[i] = int64(m.pos + i)
		s.tokens[i] = 0
		if i < len(toks) {
			s.tokens[i] = int64(toks[i])
		}
	}
	if s.last != nil {
		s.last[0] = int64(len(toks) - 1)
	}
	if err := s.r.RunInto(ctx, s.in, s.out); err != nil {
		return fmt.Errorf("llm: run the %d-token graph at position %d: %w", s.seq, m.pos, err)
	}
	m.pos += len(toks)
	return nil
}
