package llm

import (
	"errors"
	"fmt"
	"slices"
)

// PageTokens is the granularity of a growing cache: its capacity is
// PageTokens times a power of two.
const PageTokens = 256

// Factory compiles the graph of sequence length seq against a cache of
// the given capacity (seq ≤ capacity), e.g. by building and compiling
// frontend/llama's graph for that mode.
type Factory func(seq, capacity int) (Runner, error)

// grower lets a Model's cache grow on demand.
type grower struct {
	factory Factory
	seqs    []int // the graph sequence lengths, ascending, 1 first
	max     int   // the largest capacity
	grown   int   // growths so far
}

// NewGrowing returns a Model whose KV cache starts at one page
// (PageTokens, or maxCapacity if smaller, or the smallest page multiple
// holding initial tokens) and doubles on demand up to maxCapacity: when
// tokens would not fit, Feed compiles the graphs (decode and the prefill
// lengths seqs) for the larger capacity with factory, allocates the larger
// cache, copies the cached entries over and drops the old graphs and cache.
// Memory and per-step attention work then follow the context actually
// used, not the maximum; a growth costs a compile (graphs are static in
// their capacity) and one copy of the cache. Prefill lengths above the
// current capacity wait for a growth.
func NewGrowing(factory Factory, seqs []int, initial, maxCapacity int) (*Model, error) {
	if maxCapacity < 1 {
		return nil, fmt.Errorf("llm: max capacity %d must be positive", maxCapacity)
	}
	g := &grower{factory: factory, max: maxCapacity, seqs: []int{1}}
	for _, s := range seqs {
		if s > 1 && !slices.Contains(g.seqs, s) {
			g.seqs = append(g.seqs, s)
		}
	}
	slices.Sort(g.seqs)
	c := g.capacityFor(max(initial, 1))
	if c < 0 {
		return nil, fmt.Errorf("%w: %d initial tokens > max capacity %d", ErrContextFull, initial, maxCapacity)
	}
	m, err := g.model(c)
	if err != nil {
		return nil, err
	}
	m.grow = g
	return m, nil
}

// capacityFor is the smallest page-doubling capacity (capped at max)
// holding n tokens, or -1.
func (g *grower) capacityFor(n int) int {
	if n > g.max {
		return -1
	}
	c := PageTokens
	for c < n {
		c *= 2
	}
	return min(c, g.max)
}

// model compiles the graphs of capacity c into a fresh Model.
func (g *grower) model(c int) (*Model, error) {
	var rs []Runner
	for _, s := range g.seqs {
		if s > c {
			break
		}
		r, err := g.factory(s, c)
		if err != nil {
			return nil, fmt.Errorf("llm: compile the %d-token graph for capacity %d: %w", s, c, err)
		}
		rs = append(rs, r)
	}
	return New(rs...)
}

// MaxCapacity is the most tokens the cache can hold: Capacity, or the
// growth limit of a NewGrowing model.
func (m *Model) MaxCapacity() int {
	if m.grow != nil {
		return m.grow.max
	}
	return m.Capacity
}

// Growths is how many times the cache grew.
func (m *Model) Growths() int {
	if m.grow != nil {
		return m.grow.grown
	}
	return 0
}

// ensure grows the cache to hold n tokens in all (a no-op when it does).
func (m *Model) ensure(n int) error {
	if n <= m.Capacity {
		return nil
	}
	if m.grow == nil {
		return fmt.Errorf("%w: %d tokens > capacity %d", ErrContextFull, n, m.Capacity)
	}
	c := m.grow.capacityFor(n)
	if c < 0 {
		return fmt.Errorf("%w: %d tokens > max capacity %d", ErrContextFull, n, m.grow.max)
	}
	nm, err := m.grow.model(c)
	if err != nil {
		return err
	}
	if nm.Layers != m.Layers || nm.KVHeads != m.KVHeads || nm.HeadDim != m.HeadDim || nm.Vocab != m.Vocab || nm.KVType != m.KVType {
		return errors.New("llm: the factory's graphs for the larger capacity have another geometry")
	}
	// Copy each head's first pos rows: [1, KVH, P, hd] → [1, KVH, P', hd].
	row := int(m.KVType.Bytes(int64(m.HeadDim)))
	for l := 0; l < m.Layers; l++ {
		for j, old := range [][]byte{m.keys[l].Data, m.vals[l].Data} {
			dst := nm.keys[l].Data
			if j == 1 {
				dst = nm.vals[l].Data
			}
			for h := 0; h < m.KVHeads; h++ {
				copy(dst[h*c*row:(h*c+m.pos)*row], old[h*m.Capacity*row:(h*m.Capacity+m.pos)*row])
			}
		}
	}
	nm.pos, nm.grow = m.pos, m.grow
	m.grow.grown++
	*m = *nm
	return nil
}
