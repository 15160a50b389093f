package plan

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft/ir"
)

// Align is the alignment, in bytes, of every arena and of every buffer
// offset inside one.
const Align = 64

// AlignUp rounds n up to a multiple of Align.
func AlignUp(n int64) int64 { return (n + Align - 1) &^ (Align - 1) }

// Lifetime is the live interval of a value over the plan's execution order.
// Steps number the nodes of all partitions, in partition order; Def is the
// step of the value's producer and Last the last step that reads it (a read
// inside an If/Loop/Scan body counts as a read by that node). A value
// nothing reads has Last == Def: its producer still writes it. The output
// of an op that writes an input in place (ir.InPlaceInput: KVCacheUpdate)
// is that input's storage, so a read of the output also counts as a read of
// the input.
type Lifetime struct{ Def, Last int }

// Overlaps reports whether two lifetimes share a step.
func (l Lifetime) Overlaps(m Lifetime) bool { return l.Def <= m.Last && m.Def <= l.Last }

// Lifetimes returns the lifetime of every value that a top-level node of
// the plan produces, and the number of steps. Graph outputs live to the last
// step. Values defined inside subgraphs are not listed: they stay dynamic.
func (p *Plan) Lifetimes() (map[*ir.Value]Lifetime, int) {
	life := map[*ir.Value]Lifetime{}
	storage := map[*ir.Value]*ir.Value{} // in-place output -> the input it is
	step := 0
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			read := func(v *ir.Value) {
				for ; v != nil; v = storage[v] {
					if l, ok := life[v]; ok && step > l.Last {
						l.Last = step
						life[v] = l
					}
				}
			}
			for _, in := range n.Inputs {
				if in != nil {
					read(in)
				}
			}
			for _, sg := range n.Subgraphs() {
				for _, v := range sg.OuterRefs() {
					read(v)
				}
			}
			for _, o := range n.Outputs {
				if o != nil {
					life[o] = Lifetime{Def: step, Last: step}
				}
			}
			if i := ir.InPlaceInput(n.Op); i >= 0 && len(n.Outputs) == 1 && n.In(i) != nil {
				storage[n.Outputs[0]] = n.In(i)
			}
			step++
		}
	}
	if p.Graph != nil {
		for _, o := range p.Graph.Outputs {
			for v := o; v != nil; v = storage[v] {
				if l, ok := life[v]; ok {
					l.Last = max(step-1, l.Def)
					life[v] = l
				}
			}
		}
	}
	return life, step
}

// Plannable reports whether a buffer may be carved from an arena: it has a
// static size, a top-level node produces it, it is not a graph output
// (graph outputs are handed to the caller, so they get their own storage),
// and it is not the output of an op that writes an input in place
// (ir.InPlaceInput), whose storage is that input's.
func (p *Plan) Plannable(b Buffer, life map[*ir.Value]Lifetime) bool {
	if b.Value == nil || b.Bytes < 0 {
		return false
	}
	if n := b.Value.Producer; n != nil && ir.InPlaceInput(n.Op) >= 0 {
		return false
	}
	if _, ok := life[b.Value]; !ok {
		return false
	}
	if p.Graph != nil {
		for _, o := range p.Graph.Outputs {
			if o == b.Value {
				return false
			}
		}
	}
	return true
}

// MemoryStats returns the bytes the plan's intermediates need without
// memory planning (naive: the sum of every plannable buffer) and with it
// (planned: the sum of the arena sizes).
func (p *Plan) MemoryStats() (naive, planned int64) {
	life, _ := p.Lifetimes()
	for _, b := range p.Buffers {
		if p.Plannable(b, life) {
			naive += b.Bytes
		}
	}
	for _, a := range p.Arenas {
		planned += a.Size
	}
	return naive, planned
}

// Verify checks the memory plan: every planned buffer is plannable, lies
// inside its device's arena at an aligned offset, and shares no byte with
// another planned buffer whose lifetime intersects its own — except a
// recorded in-place pair (Buffer.InPlaceOf), whose input must die at the
// step that defines the output and which must occupy exactly the same bytes.
func (p *Plan) Verify() error {
	life, _ := p.Lifetimes()
	for i, a := range p.Arenas {
		if a.Size < 0 || a.Size%Align != 0 {
			return fmt.Errorf("plan: arena %d (%s) has size %d, want a non-negative multiple of %d", i, a.Device, a.Size, Align)
		}
	}
	byValue := map[*ir.Value]int{}
	var planned []int
	for i, b := range p.Buffers {
		if b.Value != nil {
			byValue[b.Value] = i
		}
		if b.Offset < 0 {
			if b.InPlaceOf != nil {
				return fmt.Errorf("plan: buffer of %v is not planned but claims to reuse %v in place", b.Value, b.InPlaceOf)
			}
			continue
		}
		if !p.Plannable(b, life) {
			return fmt.Errorf("plan: buffer of %v is placed in an arena but cannot be planned (dynamic size, graph output or not produced by a top-level node)", b.Value)
		}
		if b.Arena < 0 || b.Arena >= len(p.Arenas) {
			return fmt.Errorf("plan: buffer of %v names arena %d of %d", b.Value, b.Arena, len(p.Arenas))
		}
		a := p.Arenas[b.Arena]
		if a.Device != b.Device {
			return fmt.Errorf("plan: buffer of %v lives on %s but is placed in arena %d of %s", b.Value, b.Device, b.Arena, a.Device)
		}
		if b.Offset%Align != 0 {
			return fmt.Errorf("plan: buffer of %v is at offset %d, not %d-byte aligned", b.Value, b.Offset, Align)
		}
		if b.Offset+b.Bytes > a.Size {
			return fmt.Errorf("plan: buffer of %v ([%d, %d)) overruns arena %d (%d bytes)", b.Value, b.Offset, b.Offset+b.Bytes, b.Arena, a.Size)
		}
		planned = append(planned, i)
	}
	// In-place claims must be true: the input is planned at the same bytes,
	// the output's producer reads it, and it dies there.
	for _, i := range planned {
		b := p.Buffers[i]
		if b.InPlaceOf == nil {
			continue
		}
		j, ok := byValue[b.InPlaceOf]
		if !ok || p.Buffers[j].Offset < 0 {
			return fmt.Errorf("plan: %v claims to reuse %v in place, which is not planned", b.Value, b.InPlaceOf)
		}
		in := p.Buffers[j]
		if in.Arena != b.Arena || in.Offset != b.Offset || in.Bytes != b.Bytes {
			return fmt.Errorf("plan: %v reuses %v in place but they do not occupy the same bytes", b.Value, b.InPlaceOf)
		}
		reads := false
		for _, v := range b.Value.Producer.Inputs {
			reads = reads || v == b.InPlaceOf
		}
		if !reads || life[b.InPlaceOf].Last != life[b.Value].Def {
			return fmt.Errorf("plan: %v reuses %v in place, but that input is not read last by its producer", b.Value, b.InPlaceOf)
		}
	}
	// Sweep each arena by offset: a buffer can only collide with those that
	// start before it ends.
	sort.SliceStable(planned, func(x, y int) bool {
		a, b := p.Buffers[planned[x]], p.Buffers[planned[y]]
		if a.Arena != b.Arena {
			return a.Arena < b.Arena
		}
		return a.Offset < b.Offset
	})
	for x, i := range planned {
		a := p.Buffers[i]
		for _, j := range planned[x+1:] {
			b := p.Buffers[j]
			if b.Arena != a.Arena || b.Offset >= a.Offset+a.Bytes {
				break
			}
			if a.Bytes == 0 || b.Bytes == 0 || !life[a.Value].Overlaps(life[b.Value]) {
				continue
			}
			if a.InPlaceOf == b.Value || b.InPlaceOf == a.Value {
				continue
			}
			return fmt.Errorf("plan: %v [%d, %d) and %v [%d, %d) are alive at once (steps %v and %v) but share bytes of arena %d",
				a.Value, a.Offset, a.Offset+a.Bytes, b.Value, b.Offset, b.Offset+b.Bytes, life[a.Value], life[b.Value], a.Arena)
		}
	}
	return nil
}
