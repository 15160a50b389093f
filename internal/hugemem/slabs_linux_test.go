package hugemem

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident returns how many bytes of b's 4 KiB pages are in memory.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	const small = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := p&^(small-1), (p+uintptr(len(b))+small-1)&^(small-1)
	vec := make([]byte, (hi-lo)/small)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n * small
}

// TestSlabsPacked: the default slabs cut a model's worth of odd-sized
// pieces back to back, so that they hold no more memory than the pieces
// plus one huge page; a freed piece gives back the huge pages it owns
// at once, and an empty current slab gives back everything and is cut
// again from its start, zeroed.
func TestSlabsPacked(t *testing.T) {
	var a Slabs
	sizes := []int{1605632, 229376, 229376, 1605632, 8716288, 8716288, 8716288, 4960, 100, 3 << 20}
	var ps []*Piece
	total := 0
	for round := 0; round < 3; round++ {
		for _, n := range sizes {
			p, err := a.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.cur.mem) != SlabSize {
				t.Skipf("a slab of %d bytes was refused here (vm.overcommit_memory=2?)", SlabSize)
			}
			if len(ps) > 0 {
				prev := ps[len(ps)-1]
				want := uintptr(unsafe.Pointer(&prev.B[0])) + uintptr((len(prev.B)+63)&^63)
				if got := uintptr(unsafe.Pointer(&p.B[0])); got != want {
					t.Fatalf("piece %d (%d bytes) at %#x, want %#x (right after the last)", len(ps), n, got, want)
				}
			}
			for i := range p.B {
				p.B[i] = byte(len(ps) + 1)
			}
			ps = append(ps, p)
			total += n
		}
	}
	first, last := ps[0].B, ps[len(ps)-1].B
	whole := unsafe.Slice(&first[0], int(uintptr(unsafe.Pointer(&last[len(last)-1]))-uintptr(unsafe.Pointer(&first[0])))+1)
	if r := resident(t, whole); r > total+len(ps)*64+PageSize {
		t.Errorf("%d pieces of %d bytes in all hold %d bytes", len(ps), total, r)
	}
	// A freed 8 MiB piece owns at least three whole huge pages.
	big := ps[5]
	n := len(big.B)
	before := resident(t, whole)
	big.Free()
	if freed := before - resident(t, whole); freed < 3*PageSize {
		t.Errorf("freeing a piece of %d bytes gave back %d bytes, want at least %d", n, freed, 3*PageSize)
	}
	for i, p := range ps {
		if p == big {
			continue
		}
		for j, v := range p.B {
			if v != byte(i+1) {
				t.Fatalf("piece %d byte %d = %d after piece 5 was freed", i, j, v)
			}
		}
		p.Free()
	}
	if r := resident(t, whole); r != 0 {
		t.Errorf("all pieces freed: %d bytes still resident", r)
	}
	p, err := a.Alloc(5000)
	if err != nil {
		t.Fatal(err)
	}
	if &p.B[0] != &first[0] {
		t.Errorf("after the current slab emptied, a piece at %p, want its start %p", &p.B[0], &first[0])
	}
	for i, v := range p.B {
		if v != 0 {
			t.Fatalf("reused slab: byte %d = %d, want 0", i, v)
		}
	}
	p.Free()
}
