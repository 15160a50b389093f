package kernels

import (
	"encoding/binary"
	"fmt"

	"github.com/weftrt/weft/ir"
)

// The lane-packed Q8_0 layout, the Q4_0 one's twin (q4p.go): a row of nb
// Q8_0 blocks keeps its 34·nb bytes, but each group of 16 blocks is
// stored as
//
//	[16 f16 scales, 32 bytes]
//	[chunk 0, 64 bytes] … [chunk 7, 64 bytes]
//
// where dword b of chunk j holds codes 4j..4j+3 of block b, each plus
// 128 (stored as unsigned bytes: VPDPBUSD multiplies unsigned weight bytes
// by signed activation bytes, and the activation records' biases, 8·nsum
// = -8·Σa, shifted left by four make the -128·Σa that takes the offset
// back out, exactly). The last nb%16 = t blocks form a short group of t
// lanes: 2t bytes of scales, then eight chunks of 4t bytes. Chunk j pairs
// with chunk j of the activation records the Q4_0 kernels read
// (QuantizedActs.qPacked16), so both families share them: per group and
// activation row eight VPDPBUSD, one convert, one multiply and one FMA,
// and no nibble to split, where the GGUF layout's kernels (qgroup*.go)
// spend about twice the instructions.

// q8pBlock is the bytes of one Q8_0 block.
const q8pBlock = 34

// PackQ8RowsTo writes the N×K Q8_0 weights w (GGUF block layout, row after
// row) into dst (34·N·K/32 bytes) in the lane-packed layout the packed
// Q8_0 kernels read (QMatMulPacked, QRows.InitPacked). Every row keeps
// its size, so row ranges slice the same way in both layouts.
func PackQ8RowsTo(dst, w []byte, N, K int) error {
	nb, err := packArgs("PackQ8Rows", ir.Q8_0, len(dst), len(w), N, K)
	if err == nil {
		q8pMove(dst, w, N, nb, true)
	}
	return err
}

// UnpackQ8RowsTo is PackQ8RowsTo's inverse: the GGUF Q8_0 rows of packed
// weights p (N×K) into dst.
func UnpackQ8RowsTo(dst, p []byte, N, K int) error {
	nb, err := packArgs("UnpackQ8Rows", ir.Q8_0, len(p), len(dst), N, K)
	if err == nil {
		q8pMove(p, dst, N, nb, false)
	}
	return err
}

// q8pMove moves N rows of nb Q8_0 blocks between the lane-packed layout
// (packed) and the GGUF one (gguf), into packed where pack is set, else
// into gguf. Each code's offset of 128 is one XOR either way.
func q8pMove(packed, gguf []byte, N, nb int, pack bool) {
	le := binary.LittleEndian
	rb := nb * q8pBlock
	for n := 0; n < N; n++ {
		pr, gr := packed[n*rb:(n+1)*rb], gguf[n*rb:(n+1)*rb]
		for g0 := 0; g0 < nb; g0 += q4pGroup {
			t := min(q4pGroup, nb-g0)
			pg := pr[g0*q8pBlock : (g0+t)*q8pBlock]
			for b := 0; b < t; b++ {
				blk := gr[(g0+b)*q8pBlock : (g0+b+1)*q8pBlock]
				ps, gs := pg[2*b:2*b+2], blk[0:2]
				if pack {
					copy(ps, gs)
				} else {
					copy(gs, ps)
				}
				for j := 0; j < 8; j++ {
					pc, gc := pg[2*t+4*t*j+4*b:], blk[2+4*j:]
					if pack {
						le.PutUint32(pc, le.Uint32(gc)^0x80808080)
					} else {
						le.PutUint32(gc, le.Uint32(pc)^0x80808080)
					}
				}
			}
		}
	}
}

// packArgs checks a (un)packing of N×K dt weights between buffers of
// dstLen and srcLen bytes and returns the blocks per row.
func packArgs(name string, dt ir.DType, dstLen, srcLen, N, K int) (int, error) {
	if K%qBlock != 0 || N < 0 || K < 0 {
		return 0, fmt.Errorf("kernels: %s: K=%d is not a multiple of %d", name, K, qBlock)
	}
	nb := K / qBlock
	need := int(dt.Bytes(int64(N) * int64(K)))
	if dstLen < need || srcLen < need {
		return 0, fmt.Errorf("kernels: %s: %d bytes in, %d out cannot hold %d×%d %v weights", name, srcLen, dstLen, N, K, dt)
	}
	return nb, nil
}

// q8pKernels holds each ISA level's packed Q8_0 kernels where the CPU has
// them (q8p_amd64.go: AVX-512 with VNNI), else nils.
var q8pKernels [I8MM + 1]q4pSet

// packedSet returns the packed kernels of dt (Q4_0 or Q8_0) at the
// current ISA level, or nil for another type.
func packedSet(dt ir.DType) *q4pSet {
	switch dt {
	case ir.Q4_0:
		return q4pNow()
	case ir.Q8_0:
		return &q8pKernels[CurrentISA()]
	}
	return nil
}

// PackedSupported reports whether the lane-packed kernels of dt (Q4_0:
// AVX-512 with VNNI or AVX2; Q8_0: AVX-512 with VNNI) run at the current
// ISA level; where they do not, PackRowsTo's layout has no use.
func PackedSupported(dt ir.DType) bool {
	s := packedSet(dt)
	return s != nil && s.x1 != nil
}

// PackRowsTo packs the N×K weights w of dt (Q4_0 or Q8_0) into dst in the
// lane-packed layout of dt's packed kernels (PackQ4RowsTo, PackQ8RowsTo).
func PackRowsTo(dt ir.DType, dst, w []byte, N, K int) error {
	switch dt {
	case ir.Q4_0:
		return PackQ4RowsTo(dst, w, N, K)
	case ir.Q8_0:
		return PackQ8RowsTo(dst, w, N, K)
	}
	return fmt.Errorf("kernels: PackRows: %w: %v has no packed layout", ir.ErrUnsupported, dt)
}

// UnpackRowsTo is PackRowsTo's inverse.
func UnpackRowsTo(dt ir.DType, dst, p []byte, N, K int) error {
	switch dt {
	case ir.Q4_0:
		return UnpackQ4RowsTo(dst, p, N, K)
	case ir.Q8_0:
		return UnpackQ8RowsTo(dst, p, N, K)
	}
	return fmt.Errorf("kernels: UnpackRows: %w: %v has no packed layout", ir.ErrUnsupported, dt)
}
