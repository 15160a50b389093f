package hugemem

import (
	"sync"
	"unsafe"
)

// Slabs hands out pieces of large anonymous mappings outside the Go heap,
// advised for huge pages where the operating system offers them (Linux;
// elsewhere the pieces are Go memory): for read-only data that a hot loop
// streams through, repacked weights above all, of which a model has many
// pieces too small to fill a huge page each. Outside the Go heap the
// pieces neither count toward the garbage collector's heap goal (tens of
// MB of them would let as much garbage pile up) nor get scanned.
//
// A slab reserves Size bytes of address space (SlabSize where Size is
// 0; a piece larger than half of that gets a mapping of its own, rounded
// up to whole huge pages). Pieces are cut from the current slab one after
// the other, 64-byte aligned; pages nothing has touched take no memory,
// so a slab costs the bytes of its pieces plus at most one huge page at
// its end. (With slabs of 32 MiB, a model's pieces of 1.5–8 MiB left the
// end of each slab's last huge page unused, and 24 slabs of a
// Qwen2-0.5B-shaped F16 model held 38 MiB more than their pieces.)
//
// A freed piece gives its memory back at once where it owns whole huge
// pages; the pages it shares with a live neighbour go with the last of
// them. A slab is unmapped when its last piece is freed and no more can
// be cut from it; the current slab, once empty, is cut again from its
// start.
type Slabs struct {
	// Size is the bytes each slab reserves, a multiple of PageSize;
	// 0 means SlabSize.
	Size int

	mu  sync.Mutex
	cur *slab
}

type slab struct {
	mem  []byte // the whole mapping
	used int    // bytes cut so far
	live int    // pieces not freed
	done bool   // no more pieces will be cut
}

// Piece is one allocation of Slabs: B is its memory.
type Piece struct {
	B []byte
	s *slab
	a *Slabs
}

// Alloc returns a zeroed piece of n bytes.
func (a *Slabs) Alloc(n int) (*Piece, error) {
	if n <= 0 {
		return &Piece{B: []byte{}}, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	size := a.Size
	if size <= 0 {
		size = SlabSize
	}
	if n > size/2 {
		mem, err := mapAnon(roundUp(n))
		if err != nil {
			return nil, err
		}
		s := &slab{mem: mem, used: len(mem), live: 1, done: true}
		return &Piece{B: mem[:n:n], s: s, a: a}, nil
	}
	need := (n + 63) &^ 63
	if a.cur == nil || a.cur.used+need > len(a.cur.mem) {
		mem, err := mapSlab(size)
		if err != nil && size > fallbackSlab && n <= fallbackSlab/2 {
			// Where address space is committed as it is mapped
			// (vm.overcommit_memory=2), a smaller slab may still fit.
			mem, err = mapSlab(fallbackSlab)
		}
		if err != nil {
			return nil, err
		}
		if old := a.cur; old != nil {
			old.done = true
			if old.live == 0 {
				unmapAnon(old.mem)
			}
		}
		a.cur = &slab{mem: mem}
	}
	s := a.cur
	b := s.mem[s.used : s.used+n : s.used+n]
	s.used += need
	s.live++
	return &Piece{B: b, s: s, a: a}, nil
}

// Free returns the piece; its memory must not be used afterwards.
func (p *Piece) Free() {
	if p.s == nil {
		return
	}
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	s, b := p.s, p.B
	p.s, p.B = nil, nil
	s.live--
	switch {
	case s.live == 0 && s.done:
		unmapAnon(s.mem)
	case s.live == 0:
		// The current slab, empty: its pages go back, and cutting starts
		// again at its start (released pages read as zeros).
		releaseAnon(s.mem[:min(roundUp(s.used), len(s.mem))])
		s.used = 0
	default:
		// The whole huge pages inside the piece hold nothing else.
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(s.mem))))
		if lo, hi := roundUp(off), (off+len(b))&^(PageSize-1); hi > lo {
			releaseAnon(s.mem[lo:hi])
		}
	}
}

// mapSlab maps a slab (a variable for tests).
var mapSlab = mapAnon

// fallbackSlab is the slab Alloc maps where a slab of Size is refused.
const fallbackSlab = 16 * PageSize

// roundUp rounds n up to whole huge pages.
func roundUp(n int) int { return (n + PageSize - 1) &^ (PageSize - 1) }
