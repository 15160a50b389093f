//go:build amd64 && !noasm

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/weftrt/weft/ir"
)

// hasVBMI reports AVX512-VBMI (VPERMB, VPERMT2B), which the grouped q4_0
// kernel uses to gather four 18-byte blocks into one vector.
var hasVBMI = cpu.X86.HasAVX512VBMI

//go:noescape
func dotQ4G512(ng int, w *byte, lay *byte) float32

//go:noescape
func dotQ4GAVX2(ng int, w *byte, lay *byte) float32

// q4gIdx holds the VPERMT2B indices of dotQ4G512 for a group that starts
// at byte r = 0 ([0:128)) or r = 8 ([128:256)) of two consecutive 64-byte
// loads: first the scale indices (word j = the f16 scale of block j%4),
// then the code indices (dword j = bytes 4(j/4)..4(j/4)+3 of the 16 code
// bytes of block j%4). Indices >= 64 select from the second load.
var q4gIdx = func() (t [256]byte) {
	for h, r := range []int{0, 8} {
		s, c := t[128*h:128*h+64], t[128*h+64:128*h+128]
		for w := 0; w < 32; w++ {
			blk := r + 18*(w%4)
			s[2*w], s[2*w+1] = byte(blk), byte(blk+1)
		}
		for p := 0; p < 64; p++ {
			j := p / 4
			c[p] = byte(r + 18*(j%4) + 2 + 4*(j/4) + p%4)
		}
	}
	return t
}()

// qGroupFunc returns the grouped row dot product for dt at isa, or nil
// where there is none (then QMatMul uses the plain row dot).
func qGroupFunc(dt ir.DType, isa ISA) (qGroupDot, qLayout) {
	vbmi := isa >= AVX512 && hasVNNI && hasVBMI
	switch {
	case dt == ir.Q4_0 && vbmi:
		return q4G512, qLayInterleaved
	case dt == ir.Q4_0 && isa >= AVX2:
		return q4GAVX2, qLayLanes
	case dt == ir.Q8_0 && vbmi:
		return q8G512, qLayQ8
	}
	return nil, 0
}

// qGroup4Func returns the four-activation-row grouped dot product for dt
// at isa (records of the layout qGroupFunc names), or nil.
func qGroup4Func(dt ir.DType, isa ISA) qGroupDot4 {
	if isa < AVX512 || !hasVNNI || !hasVBMI {
		return nil
	}
	switch dt {
	case ir.Q4_0:
		return q4G512x4
	case ir.Q8_0:
		return q8G512x4
	}
	return nil
}

//go:noescape
func dotQ4G512x4rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ4G512x8rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ8G512x4rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ8G512x8rows(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

// qGroupRowsMFunc returns the many-weight-rows grouped kernel for R = 4 or
// 8 activation rows for dt at isa (prefill), or nil.
func qGroupRowsMFunc(dt ir.DType, isa ISA, R int) qGroupRowsM {
	if isa < AVX512 || !hasVNNI || !hasVBMI {
		return nil
	}
	switch {
	case dt == ir.Q4_0 && R == 4:
		return q4G512x4rows
	case dt == ir.Q4_0 && R == 8:
		return q4G512x8rows
	case dt == ir.Q8_0 && R == 4:
		return q8G512x4rows
	case dt == ir.Q8_0 && R == 8:
		return q8G512x8rows
	}
	return nil
}

// manyRowsFunc wraps a many-weight-rows kernel for R activation rows
// whose groups take gw weight bytes and gl record bytes: it checks the
// operands' extents (the assembly reads within them) and handles the
// empty cases.
func manyRowsFunc(R, gw, gl int, k func(nr int, ng int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)) qGroupRowsM {
	return func(nr, ng int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int) {
		if nr == 0 {
			return
		}
		if ng == 0 {
			for r := 0; r < R; r++ {
				clear(y[r*ldy : r*ldy+nr])
			}
			return
		}
		_, _, _ = w[(nr-1)*rb+ng*gw-1], lay[(R-1)*ld+ng*gl-1], y[(R-1)*ldy+nr-1]
		k(nr, ng, &w[0], rb, &lay[0], ld, &y[0], ldy)
	}
}

// The many-weight-rows kernels for four and eight activation rows: the
// sums of weight row i go to y[r·ldy+i].
var (
	q4G512x4rows = manyRowsFunc(4, 4*18, qLayInterleaved.bytes(), dotQ4G512x4rows)
	q4G512x8rows = manyRowsFunc(8, 4*18, qLayInterleaved.bytes(), dotQ4G512x8rows)
	q8G512x4rows = manyRowsFunc(4, 2*34, qLayQ8.bytes(), dotQ8G512x4rows)
	q8G512x8rows = manyRowsFunc(8, 2*34, qLayQ8.bytes(), dotQ8G512x8rows)
)

func q8G512x4(np int, w []byte, lay []byte, ld int) (out [4]float32) {
	if np == 0 {
		return out
	}
	_, _ = w[np*2*34-1], lay[3*ld+np*qLayQ8.bytes()-1]
	dotQ8G512x4(np, &w[0], &lay[0], ld, &out[0])
	return out
}

func q8G512(np int, w []byte, lay []byte) float32 {
	if np == 0 {
		return 0
	}
	_, _ = w[np*2*34-1], lay[np*qLayQ8.bytes()-1]
	return dotQ8G512(np, &w[0], &lay[0])
}

func q4G512x4(ng int, w []byte, lay []byte, ld int) (out [4]float32) {
	if ng == 0 {
		return out
	}
	_, _ = w[ng*4*18-1], lay[3*ld+ng*qLayInterleaved.bytes()-1]
	dotQ4G512x4(ng, &w[0], &lay[0], ld, &out[0])
	return out
}

func q4G512(ng int, w []byte, lay []byte) float32 {
	if ng == 0 {
		return 0
	}
	_, _ = w[ng*4*18-1], lay[ng*qLayInterleaved.bytes()-1]
	return dotQ4G512(ng, &w[0], &lay[0])
}

func q4GAVX2(ng int, w []byte, lay []byte) float32 {
	if ng == 0 {
		return 0
	}
	_, _ = w[ng*4*18-1], lay[ng*qLayLanes.bytes()-1]
	return dotQ4GAVX2(ng, &w[0], &lay[0])
}

//go:noescape
func dotQ8G512(np int, w *byte, lay *byte) float32

//go:noescape
func dotQ8G512x4(np int, w *byte, lay *byte, ld int, out *float32)

// q8gIdx holds the VPERMT2B indices of dotQ8G512 for a pair of Q8_0 blocks
// that starts at byte r = 0 ([0:128)) or r = 4 ([128:256)) of two
// consecutive 64-byte loads: the scale indices (word j = the f16 scale of
// block j%2), then the code indices (dword j = bytes 4(j/2)..4(j/2)+3 of
// the 32 codes of block j%2).
var q8gIdx = func() (t [256]byte) {
	for h, r := range []int{0, 4} {
		s, c := t[128*h:128*h+64], t[128*h+64:128*h+128]
		for w := 0; w < 32; w++ {
			blk := r + 34*(w%2)
			s[2*w], s[2*w+1] = byte(blk), byte(blk+1)
		}
		for p := 0; p < 64; p++ {
			j := p / 4
			c[p] = byte(r + 34*(j%2) + 2 + 4*(j/2) + p%4)
		}
	}
	return t
}()

//go:noescape
func dotQ4G512x4(ng int, w *byte, lay *byte, ld int, out *float32)

//go:noescape
func dotQ4G512rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)

// qGroupRowsFunc returns the many-weight-rows grouped kernel for dt at isa
// (decode GEMV), or nil.
func qGroupRowsFunc(dt ir.DType, isa ISA) qGroupRows {
	vbmi := isa >= AVX512 && hasVNNI && hasVBMI
	switch {
	case dt == ir.Q4_0 && vbmi:
		return q4G512rows
	case dt == ir.Q4_0 && isa >= AVX2:
		return q4GAVX2rows
	case dt == ir.Q8_0 && vbmi:
		return q8G512rows
	}
	return nil
}

//go:noescape
func dotQ4GAVX2rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)

func q4GAVX2rows(nr, ng int, w []byte, rb int, lay []byte, y []float32, _ Prefetch) {
	if nr == 0 {
		return
	}
	_, _, _ = w[(nr-1)*rb+ng*4*18-1], lay[ng*qLayLanes.bytes()-1], y[nr-1]
	if ng == 0 {
		clear(y[:nr])
		return
	}
	dotQ4GAVX2rows(nr, ng, &w[0], rb, &lay[0], &y[0])
}

//go:noescape
func dotQ8G512rows(nr int, ng int, w *byte, rb int, lay *byte, y *float32)

func q8G512rows(nr, np int, w []byte, rb int, lay []byte, y []float32, _ Prefetch) {
	if nr == 0 {
		return
	}
	_, _, _ = w[(nr-1)*rb+np*2*34-1], lay[np*qLayQ8.bytes()-1], y[nr-1]
	if np == 0 {
		clear(y[:nr])
		return
	}
	dotQ8G512rows(nr, np, &w[0], rb, &lay[0], &y[0])
}

func q4G512rows(nr, ng int, w []byte, rb int, lay []byte, y []float32, _ Prefetch) {
	if nr == 0 {
		return
	}
	_, _, _ = w[(nr-1)*rb+ng*4*18-1], lay[ng*qLayInterleaved.bytes()-1], y[nr-1]
	if ng == 0 {
		clear(y[:nr])
		return
	}
	dotQ4G512rows(nr, ng, &w[0], rb, &lay[0], &y[0])
}
