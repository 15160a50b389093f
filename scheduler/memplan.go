package scheduler

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Memory planning: every plannable intermediate (static size, produced by a
// top-level node, not a graph output) gets an offset in one arena per
// device. Lifetimes come from the scheduled order (plan.Lifetimes). An
// elementwise op may first claim an input that dies at it and has the same
// dtype and shape: the two share one slot ("in place"). So does a view op
// (ir.ViewOp: Reshape and the like) whose input dies at it, in every
// contest: its output is the same bytes, so sharing never costs memory. Offsets are then
// assigned greedily, best fit, under several visiting orders; the smallest
// arena wins (ties go to the earlier order). This is the approach of
// ExecuTorch's and TFLite's planners; it is a heuristic — optimal packing
// is NP-hard — and no order dominates on every graph, hence the contest.

// inPlaceOps are the ops whose output may overwrite an input of the same
// dtype and shape that dies at the op: each output element depends only on
// the same element of that input, so a kernel that reads element i before
// writing element i is correct in place.
var inPlaceOps = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true,
	"Relu": true, "Sigmoid": true, "Tanh": true, "Gelu": true, "SiLU": true, "Erf": true,
	"Exp": true, "Sqrt": true, "Neg": true, "Abs": true, "Log": true, "Reciprocal": true,
	"LeakyRelu": true, "Elu": true, "HardSigmoid": true, "HardSwish": true, "Softplus": true,
	"Sin": true, "Cos": true, "Floor": true, "Ceil": true, "Round": true, "Sign": true,
	"Where": true, "Clip": true, "Pow": true, "Max": true, "Min": true, "PRelu": true,
	// Fused is a chain of elementwise and broadcast ops (ir/ops.go).
	"Fused": true,
}

// slot is one arena allocation: a buffer, or an in-place chain of buffers
// that share bytes. Def/Last cover the whole chain.
type slot struct {
	dev       string
	def, last int
	size      int64 // aligned
	bufs      []int // indices into plan.Buffers
	off       int64
}

// order is one visiting order for greedy best-fit assignment.
type order struct {
	name string
	less func(a, b *slot) bool
}

var orders = []order{
	{"size", func(a, b *slot) bool { return a.size > b.size }},
	{"def", func(a, b *slot) bool { return a.def < b.def }},
	{"lifetime", func(a, b *slot) bool { return a.last-a.def > b.last-b.def }},
	{"area", func(a, b *slot) bool {
		return a.size*int64(a.last-a.def+1) > b.size*int64(b.last-b.def+1)
	}},
}

// planMemory fills Arena, Offset and InPlaceOf of p's buffers and p.Arenas.
func planMemory(p *plan.Plan) error {
	life, _ := p.Lifetimes()
	best := []*slot(nil)
	var bestSize int64 = -1
	for _, inPlace := range []bool{true, false} {
		slots := buildSlots(p, life, inPlace)
		for _, o := range orders {
			total := assign(slots, o)
			if bestSize < 0 || total < bestSize {
				bestSize, best = total, cloneSlots(slots)
			}
		}
	}
	apply(p, best)
	if err := p.Verify(); err != nil {
		return fmt.Errorf("scheduler: memory plan: %w", err)
	}
	return nil
}

// apply writes assigned slots into p: arenas in order of their first
// buffer (so the plan is deterministic), offsets and in-place links.
func apply(p *plan.Plan, best []*slot) {
	for i := range p.Buffers {
		p.Buffers[i].Arena, p.Buffers[i].Offset, p.Buffers[i].InPlaceOf = 0, -1, nil
	}
	p.Arenas = nil
	arenaOf := map[string]int{}
	var sizes []int64
	sort.SliceStable(best, func(i, j int) bool { return best[i].bufs[0] < best[j].bufs[0] })
	for _, s := range best {
		a, ok := arenaOf[s.dev]
		if !ok {
			a = len(sizes)
			arenaOf[s.dev] = a
			sizes = append(sizes, 0)
			p.Arenas = append(p.Arenas, plan.Arena{Device: s.dev})
		}
		sizes[a] = max(sizes[a], s.off+s.size)
		for k, bi := range s.bufs {
			b := &p.Buffers[bi]
			b.Arena, b.Offset = a, s.off
			if k > 0 {
				b.InPlaceOf = p.Buffers[s.bufs[k-1]].Value
			}
		}
	}
	for a := range p.Arenas {
		p.Arenas[a].Size = plan.AlignUp(sizes[a])
	}
}

// buildSlots makes one slot per plannable buffer, merging views into
// their inputs' slots, and in-place chains when inPlace is set.
func buildSlots(p *plan.Plan, life map[*ir.Value]plan.Lifetime, inPlace bool) []*slot {
	slotOf := map[*ir.Value]*slot{}
	var slots []*slot
	for i, b := range p.Buffers {
		if !p.Plannable(b, life) {
			continue
		}
		l := life[b.Value]
		in := viewInput(b, slotOf, p, life)
		if in == nil && inPlace {
			in = inPlaceInput(b, slotOf, p, life)
		}
		if in != nil {
			s := slotOf[in]
			s.last = max(s.last, l.Last)
			s.bufs = append(s.bufs, i)
			slotOf[b.Value] = s
			continue
		}
		s := &slot{dev: b.Device, def: l.Def, last: l.Last, size: plan.AlignUp(b.Bytes), bufs: []int{i}}
		slots = append(slots, s)
		slotOf[b.Value] = s
	}
	return slots
}

// viewInput returns the input of b's producer whose bytes b may be, or
// nil: b is the output of a view op (ir.ViewOp) with a static size, and
// its data input is planned at the end of its slot's chain, on the same
// device, with b's dtype and byte size, and dies at the op.
func viewInput(b plan.Buffer, slotOf map[*ir.Value]*slot, p *plan.Plan, life map[*ir.Value]plan.Lifetime) *ir.Value {
	n := b.Value.Producer
	if n == nil || !ir.ViewOp(n.Op) || len(n.Outputs) != 1 || len(n.Inputs) == 0 || n.Inputs[0] == nil || b.Bytes < 0 {
		return nil
	}
	in := n.Inputs[0]
	s, ok := slotOf[in]
	if !ok || s.dev != b.Device || in.DType != b.Value.DType || plan.AlignUp(b.Bytes) != s.size {
		return nil
	}
	def := life[b.Value].Def
	if last := p.Buffers[s.bufs[len(s.bufs)-1]].Value; last != in || life[in].Last != def || s.last != def {
		return nil
	}
	for _, bi := range s.bufs {
		if p.Buffers[bi].Bytes != b.Bytes {
			return nil
		}
	}
	return in
}

// inPlaceInput returns the input of b's producer that b may overwrite, or
// nil: a planned input at the end of its slot's chain, on the same device,
// with b's dtype and shape, that dies at b's producer.
func inPlaceInput(b plan.Buffer, slotOf map[*ir.Value]*slot, p *plan.Plan, life map[*ir.Value]plan.Lifetime) *ir.Value {
	n := b.Value.Producer
	if n == nil || !inPlaceOps[n.Op] || len(n.Outputs) != 1 || !b.Value.Shape.Static() {
		return nil
	}
	def := life[b.Value].Def
	for _, in := range n.Inputs {
		s, ok := slotOf[in]
		if !ok || s.dev != b.Device || in.DType != b.Value.DType || !in.Shape.Equal(b.Value.Shape) {
			continue
		}
		last := p.Buffers[s.bufs[len(s.bufs)-1]].Value
		if last == in && life[in].Last == def && s.last == def {
			return in
		}
	}
	return nil
}

// assign places slots greedily in the given order: each takes the smallest
// gap (best fit) between already placed slots whose lifetimes overlap its
// own, or the end. It returns the total bytes over all devices.
func assign(slots []*slot, o order) int64 {
	idx := make([]int, len(slots))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := slots[idx[i]], slots[idx[j]]
		if o.less(a, b) {
			return true
		}
		if o.less(b, a) {
			return false
		}
		return a.def < b.def
	})
	var placed []*slot // kept sorted by offset
	ends := map[string]int64{}
	var conflicts []*slot
	for _, i := range idx {
		s := slots[i]
		conflicts = conflicts[:0]
		for _, q := range placed {
			if q.dev == s.dev && q.def <= s.last && s.def <= q.last {
				conflicts = append(conflicts, q)
			}
		}
		var prevEnd int64
		bestOff, bestGap := int64(-1), int64(-1)
		for _, q := range conflicts {
			if gap := q.off - prevEnd; gap >= s.size && (bestGap < 0 || gap < bestGap) {
				bestOff, bestGap = prevEnd, gap
			}
			prevEnd = max(prevEnd, q.off+q.size)
		}
		if bestOff < 0 {
			bestOff = prevEnd
		}
		s.off = bestOff
		ends[s.dev] = max(ends[s.dev], s.off+s.size)
		at := sort.Search(len(placed), func(k int) bool { return placed[k].off > s.off })
		placed = append(placed, nil)
		copy(placed[at+1:], placed[at:])
		placed[at] = s
	}
	var total int64
	for _, e := range ends {
		total += e
	}
	return total
}

func cloneSlots(slots []*slot) []*slot {
	out := make([]*slot, len(slots))
	for i, s := range slots {
		c := *s
		out[i] = &c
	}
	return out
}
