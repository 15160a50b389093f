package kernels

import "fmt"

// Packed panels stored outside the process (in a compiled plan file) and
// used again without packing: a PackedB's layout is fully described by its
// PackLayout, and UsePackedB adopts panels packed earlier, zero-copy, when
// their layout is the one PackB would produce now.

// PackLayout is everything that shapes a PackedB's panels: the ISA level
// (which fixes the panel width NR), the K blocking KC, and the matrix size.
type PackLayout struct {
	ISA    ISA
	NR, KC int
	K, N   int
}

// String renders the layout as stable "key=value" fields, for descriptors.
func (l PackLayout) String() string {
	return fmt.Sprintf("isa=%s nr=%d kc=%d k=%d n=%d", l.ISA, l.NR, l.KC, l.K, l.N)
}

// Len is the number of float32s the panels of this layout take.
func (l PackLayout) Len() int {
	if l.NR <= 0 {
		return 0
	}
	return l.K * ((l.N + l.NR - 1) / l.NR) * l.NR
}

// CurrentPackLayout is the layout PackB uses for a K×N matrix at the
// current ISA level.
func CurrentPackLayout(K, N int) PackLayout {
	isa := CurrentISA()
	_, nr := archShape(isa)
	return PackLayout{ISA: isa, NR: nr, KC: kcBlock, K: K, N: N}
}

// Layout returns the layout p was packed with.
func (p *PackedB) Layout() PackLayout {
	return PackLayout{ISA: p.isa, NR: p.nr, KC: p.kc, K: p.K, N: p.N}
}

// Panels returns p's packed panels (read-only: the kernels share them).
func (p *PackedB) Panels() []float32 { return p.data }

// UsePackedB returns a PackedB over panels packed earlier with layout l,
// without copying them. It fails unless l is exactly the layout PackB would
// use now (CurrentPackLayout) and panels has exactly l.Len() floats: panels
// of another ISA level or blocking would be read wrongly.
func UsePackedB(panels []float32, l PackLayout) (*PackedB, error) {
	if l.K < 0 || l.N < 0 {
		return nil, fmt.Errorf("kernels: packed layout with K=%d N=%d", l.K, l.N)
	}
	if cur := CurrentPackLayout(l.K, l.N); l != cur {
		return nil, fmt.Errorf("kernels: packed layout %v does not match the current one %v", l, cur)
	}
	if len(panels) != l.Len() {
		return nil, fmt.Errorf("kernels: packed panels hold %d floats, layout %v needs %d", len(panels), l, l.Len())
	}
	return &PackedB{K: l.K, N: l.N, nr: l.NR, kc: l.KC, isa: l.ISA, data: panels}, nil
}
