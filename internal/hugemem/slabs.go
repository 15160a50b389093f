package hugemem

import (
	"sync"
)

// Slabs hands out pieces of large anonymous mappings outside the Go heap,
// advised for huge pages where the operating system offers them (Linux;
// elsewhere the pieces are Go memory): for read-only data that a hot loop
// streams through, repacked weights above all, of which a model has many
// pieces too small to fill a huge page each. Outside the Go heap the
// pieces neither count toward the garbage collector's heap goal (tens of
// MB of them would let as much garbage pile up) nor get scanned.
//
// A slab is SlabSize bytes (a piece larger than half of that gets a
// mapping of its own, rounded up to whole huge pages); pieces are cut
// from the current slab, 64-byte aligned, and a slab is unmapped when its
// last piece is freed and no more can be cut from it. Pages nothing has
// touched take no memory, so the unused end of a slab costs at most one
// huge page.
type Slabs struct {
	mu  sync.Mutex
	cur *slab
}

// SlabSize is the size of one slab.
const SlabSize = 16 * PageSize

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
	if n > SlabSize/2 {
		mem, err := mapAnon((n + PageSize - 1) &^ (PageSize - 1))
		if err != nil {
			return nil, err
		}
		s := &slab{mem: mem, used: len(mem), live: 1, done: true}
		return &Piece{B: mem[:n:n], s: s, a: a}, nil
	}
	need := (n + 63) &^ 63
	if a.cur == nil || a.cur.used+need > len(a.cur.mem) {
		mem, err := mapAnon(SlabSize)
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
	s := p.s
	p.s, p.B = nil, nil
	s.live--
	if s.live == 0 && s.done {
		unmapAnon(s.mem)
	}
}
