package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// The graph interface (as frontend/llama builds it).
const (
	inTokens    = "tokens"
	inPositions = "positions"
	inMask      = "mask"
	outLogits   = "logits"
)

func pastKey(l int) string      { return "past_key." + strconv.Itoa(l) }
func pastValue(l int) string    { return "past_value." + strconv.Itoa(l) }
func presentKey(l int) string   { return "present_key." + strconv.Itoa(l) }
func presentValue(l int) string { return "present_value." + strconv.Itoa(l) }

// Runner is one compiled forward graph. RunInto takes the inputs in the
// order of Inputs and writes into caller-owned tensors in the order of
// Outputs, reading the inputs only.
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
	tokens  *ir.Tensor // the step's own input tensors
	pos     *ir.Tensor
	mask    []float32 // a view of the mask input
	logits  []float32
	present [][2]int // output index of present key/value per layer
	// perm[k] is the graph input index of the k-th input in the order
	// tokens, positions, mask, past_key.0, past_value.0, ...
	perm []int
}

// Model is a decoder with its KV cache. It is not safe for concurrent use
// (the cache is one sequence's state).
type Model struct {
	Layers, KVHeads, HeadDim, Capacity, Vocab int
	// KVType is the cache's element type (the graphs' past/present dtype):
	// f32 or f16.
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
// HeadDim f32).
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
	shape := []int64{1, int64(m.KVHeads), int64(m.Capacity), int64(m.HeadDim)}
	for l := 0; l < m.Layers; l++ {
		m.keys = append(m.keys, ir.NewTensor(m.KVType, shape))
		m.vals = append(m.vals, ir.NewTensor(m.KVType, shape))
	}
	for _, s := range m.steps {
		for l := 0; l < m.Layers; l++ {
			s.in[s.perm[3+2*l]], s.in[s.perm[4+2*l]] = m.keys[l], m.vals[l]
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
		if _, ok := ins[pastKey(layers)]; !ok {
			break
		}
		layers++
	}
	if layers == 0 {
		return nil, fmt.Errorf("no input %q", pastKey(0))
	}
	kvT := r.Inputs()[ins[pastKey(0)]].DType
	if kvT != ir.Float16 {
		kvT = ir.Float32
	}
	kv, err := get(pastKey(0), kvT, 4)
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
	if len(r.Inputs()) != 3+2*layers {
		return nil, fmt.Errorf("%d inputs, want %d (tokens, positions, mask and a past key and value per layer)", len(r.Inputs()), 3+2*layers)
	}
	want := map[string][]int64{
		inTokens: {1, int64(seq)}, inPositions: {1, int64(seq)}, inMask: {1, 1, int64(seq), int64(m.Capacity)},
	}
	kvShape := []int64{1, int64(m.KVHeads), int64(m.Capacity), int64(m.HeadDim)}
	newShape := []int64{1, int64(m.KVHeads), int64(seq), int64(m.HeadDim)}
	s := &step{r: r, seq: seq, in: make([]*ir.Tensor, len(r.Inputs())), out: make([]*ir.Tensor, len(r.Outputs()))}
	order := []string{inTokens, inPositions, inMask}
	for l := 0; l < layers; l++ {
		want[pastKey(l)], want[pastValue(l)] = kvShape, kvShape
		order = append(order, pastKey(l), pastValue(l))
	}
	// The caller's input order may differ: remember where each goes.
	perm := make([]int, len(order))
	for k, name := range order {
		i, ok := ins[name]
		if !ok {
			return nil, fmt.Errorf("no input %q", name)
		}
		v := r.Inputs()[i]
		dt := ir.Float32
		if k < 2 {
			dt = ir.Int64
		} else if k > 2 {
			dt = m.KVType
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
	s.in[perm[2]] = ir.NewTensor(ir.Float32, want[inMask])
	s.tokens, s.pos, s.mask = s.in[perm[0]], s.in[perm[1]], s.in[perm[2]].Float32s()
	if len(r.Outputs()) != 1+2*layers {
		return nil, fmt.Errorf("%d outputs, want %d (logits and a present key and value per layer)", len(r.Outputs()), 1+2*layers)
	}
	s.out[lg] = ir.NewTensor(ir.Float32, lsh)
	s.logits = s.out[lg].Float32s()
	if lsh[0] != 1 || int(lsh[1]) != seq {
		return nil, fmt.Errorf("output %q has shape %v, want [1 %d vocab]", outLogits, lsh, seq)
	}
	for l := 0; l < layers; l++ {
		var pair [2]int
		for j, name := range []string{presentKey(l), presentValue(l)} {
			i, ok := outs[name]
			if !ok {
				return nil, fmt.Errorf("no output %q", name)
			}
			sh, err := staticShape(r.Outputs()[i], m.KVType, 4)
			if err != nil {
				return nil, err
			}
			if !slices.Equal(sh, newShape) {
				return nil, fmt.Errorf("output %q has shape %v, want %v", name, sh, newShape)
			}
			s.out[i] = ir.NewTensor(m.KVType, newShape)
			pair[j] = i
		}
		s.present = append(s.present, pair)
	}
	return s, nil
}

// Pos returns the number of tokens in the cache.
func (m *Model) Pos() int { return m.pos }

// Reset empties the cache (its contents are not cleared: the mask hides
// every slot at or beyond Pos).
func (m *Model) Reset() { m.pos = 0 }

// Feed runs tokens through the model at the current position, appending
// them to the cache, and returns the logits after the last one (a slice
// owned by the model, valid until the next Feed). Long inputs are split
// over the prefill graphs: each chunk takes the smallest graph that holds
// the rest of the input, or the largest graph, padding the tail (padded
// rows get fresh positions, and nothing of them is kept); a chunk that
// would run past the capacity falls back to smaller graphs. Tokens that
// do not fit in the cache fail with ErrContextFull before anything runs.
func (m *Model) Feed(ctx context.Context, tokens []int32) ([]float32, error) {
	if len(tokens) == 0 {
		return nil, errors.New("llm: Feed of no tokens")
	}
	if m.pos+len(tokens) > m.MaxCapacity() {
		return nil, fmt.Errorf("%w: %d tokens in the cache + %d new > capacity %d", ErrContextFull, m.pos, len(tokens), m.MaxCapacity())
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.Vocab {
			return nil, fmt.Errorf("llm: token %d is outside the vocabulary of %d", t, m.Vocab)
		}
	}
	if err := m.ensure(m.pos + len(tokens)); err != nil {
		return nil, err
	}
	var logits []float32
	for len(tokens) > 0 {
		s := m.pick(len(tokens))
		n := min(len(tokens), s.seq)
		if err := m.run(ctx, s, tokens[:n]); err != nil {
			return nil, err
		}
		logits = s.logits[(n-1)*m.Vocab : n*m.Vocab]
		tokens = tokens[n:]
	}
	return logits, nil
}

// pick chooses the graph for the next chunk of n tokens.
func (m *Model) pick(n int) *step {
	room := m.Capacity - m.pos
	best := m.steps[0]
	for _, s := range m.steps {
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

// run feeds toks (len ≤ s.seq) through s and appends their keys and values
// to the cache.
func (m *Model) run(ctx context.Context, s *step, toks []int32) error {
	negInf := float32(math.Inf(-1))
	P := m.Capacity
	for i := 0; i < s.seq; i++ {
		p := m.pos + i
		s.pos.SetInt64(i, int64(p))
		s.tokens.SetInt64(i, 0)
		if i < len(toks) {
			s.tokens.SetInt64(i, int64(toks[i]))
		}
		row := s.mask[i*P : (i+1)*P]
		for j := range row {
			if j <= p {
				row[j] = 0
			} else {
				row[j] = negInf
			}
		}
	}
	if err := s.r.RunInto(ctx, s.in, s.out); err != nil {
		return fmt.Errorf("llm: run the %d-token graph at position %d: %w", s.seq, m.pos, err)
	}
	// Copy the new entries [1, KVH, seq, hd] into the cache [1, KVH, P, hd].
	// (Bytes: the cache may be f32 or f16.)
	row := m.HeadDim * m.KVType.Size()
	for l, pair := range s.present {
		for j, cache := range []*ir.Tensor{m.keys[l], m.vals[l]} {
			src, dst := s.out[pair[j]].Data, cache.Data
			for h := 0; h < m.KVHeads; h++ {
				d0, s0 := (h*P+m.pos)*row, h*s.seq*row
				copy(dst[d0:d0+len(toks)*row], src[s0:s0+len(toks)*row])
			}
		}
	}
	m.pos += len(toks)
	return nil
}
