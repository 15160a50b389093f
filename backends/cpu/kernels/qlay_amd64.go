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
	if dt != ir.Q4_0 {
		return nil, 0
	}
	switch {
	case isa >= AVX512 && hasVNNI && hasVBMI:
		return q4G512, qLayInterleaved
	case isa >= AVX2:
		return q4GAVX2, qLayLanes
	}
	return nil, 0
}

func q4G512(ng int, w []byte, lay []byte) float32 {
	if ng == 0 {
		return 0
	}
	_, _ = w[ng*qGroup*18-1], lay[ng*qLayInterleaved.bytes()-1]
	return dotQ4G512(ng, &w[0], &lay[0])
}

func q4GAVX2(ng int, w []byte, lay []byte) float32 {
	if ng == 0 {
		return 0
	}
	_, _ = w[ng*qGroup*18-1], lay[ng*qLayLanes.bytes()-1]
	return dotQ4GAVX2(ng, &w[0], &lay[0])
}
