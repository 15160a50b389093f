package hugemem

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestBytes checks length, capacity, zeroing and alignment on both sides
// of PageSize.
func TestBytes(t *testing.T) {
	for _, n := range []int{0, 1, 63, 4096, PageSize - 1, PageSize, PageSize + 12345, 3 * PageSize} {
		b := Bytes(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Bytes(%d): len %d cap %d", n, len(b), cap(b))
		}
		if n == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(&b[0]))
		if p%64 != 0 {
			t.Errorf("Bytes(%d) starts at %#x, not 64-byte aligned", n, p)
		}
		if n >= PageSize && p%PageSize != 0 {
			t.Errorf("Bytes(%d) starts at %#x, not on a %d boundary", n, p, PageSize)
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Bytes(%d)[%d] = %d", n, i, v)
			}
		}
	}
}

// TestAdvised checks, on Linux with transparent huge pages enabled, that
// the kernel marks the mapping that holds a large buffer eligible for huge
// pages (the advice took); smaps reports it as THPeligible.
func TestAdvised(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise(MADV_HUGEPAGE) is Linux's")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are off here (%q, %v)", strings.TrimSpace(string(mode)), err)
	}
	b := Bytes(3 * PageSize)
	elig, err := thpEligible(uintptr(unsafe.Pointer(&b[0])))
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	if !elig {
		t.Errorf("the mapping holding a %d-byte buffer is not THPeligible after MADV_HUGEPAGE", len(b))
	}
	runtime.KeepAlive(b)
}

// thpEligible reads /proc/self/smaps for the mapping that contains addr.
func thpEligible(addr uintptr) (bool, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		// A mapping's header starts "lo-hi perms ..."; its fields follow
		// as "Key: value" lines.
		if f := strings.Fields(line); len(f) > 1 && !strings.HasSuffix(f[0], ":") {
			var lo, hi uintptr
			if n, _ := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); n == 2 {
				in = lo <= addr && addr < hi
			}
			continue
		}
		if in && strings.HasPrefix(line, "THPeligible:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "THPeligible:")) == "1", nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return false, fmt.Errorf("no mapping holds %#x", addr)
}

// TestSlabs: pieces are zeroed, writable, 64-byte aligned and disjoint;
// a slab is unmapped only when its last piece is freed and it is full
// (checked by writing to the other pieces after frees), and a large piece
// gets its own mapping. The slabs are small here (16 huge pages), so that
// pieces fill several.
func TestSlabs(t *testing.T) {
	a := Slabs{Size: 16 * PageSize}
	var ps []*Piece
	sizes := []int{100, 5000, 1 << 20, 3 << 20, a.Size/2 + 1, 7, 2 << 20, 6 << 20}
	for round := 0; round < 3; round++ {
		for _, n := range sizes {
			p, err := a.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.B) != n || uintptr(unsafe.Pointer(&p.B[0]))%64 != 0 {
				t.Fatalf("piece of %d: len %d at %p", n, len(p.B), &p.B[0])
			}
			for i := range p.B {
				if p.B[i] != 0 {
					t.Fatalf("piece of %d: byte %d is %d", n, i, p.B[i])
				}
			}
			for i := range p.B {
				p.B[i] = byte(len(ps))
			}
			ps = append(ps, p)
		}
	}
	// Free every other piece, then check the rest kept their bytes.
	for i := 0; i < len(ps); i += 2 {
		ps[i].Free()
	}
	for i := 1; i < len(ps); i += 2 {
		for j, v := range ps[i].B {
			if v != byte(i) {
				t.Fatalf("piece %d byte %d = %d after other pieces were freed", i, j, v)
			}
		}
		ps[i].Free()
	}
	if p, err := a.Alloc(0); err != nil || len(p.B) != 0 {
		t.Fatalf("Alloc(0) = %v, %v", p, err)
	}
}

// TestSlabsFallback: where a slab of Size is refused, Alloc cuts pieces
// from slabs of fallbackSlab bytes instead; a piece too large for those
// fails with the refusal.
func TestSlabsFallback(t *testing.T) {
	refused := errors.New("refused")
	defer func(m func(int) ([]byte, error)) { mapSlab = m }(mapSlab)
	mapSlab = func(n int) ([]byte, error) {
		if n > fallbackSlab {
			return nil, refused
		}
		return mapAnon(n)
	}
	a := Slabs{Size: 4 * fallbackSlab}
	p, err := a.Alloc(5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.cur.mem) != fallbackSlab || len(p.B) != 5000 {
		t.Fatalf("a piece of %d bytes in a slab of %d, want 5000 in %d", len(p.B), len(a.cur.mem), fallbackSlab)
	}
	// The first fills most of the fallback slab; the second needs a new
	// slab, which only one of Size could hold.
	big, err := a.Alloc(fallbackSlab/2 + 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Alloc(fallbackSlab/2 + 1); !errors.Is(err, refused) {
		t.Fatalf("a piece larger than half a fallback slab: %v, want the refusal", err)
	}
	big.Free()
	p.Free()
}
