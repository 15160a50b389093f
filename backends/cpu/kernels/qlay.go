package kernels

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// The group layouts of the quantized activations, built once per
// QuantizeActs (on the first QMatMul that wants one) for the SIMD row dot
// products that take several blocks at a time. Row m's activation blocks
// form one record per group of blocks; blocks past the last full group
// are left to the plain row dot. A 32-bit lane j of a vector belongs to
// block j/4 or j%4 (j%2 for pairs) of its group:
//
//	qLayLanes        Q4_0, 4 blocks, lane j in block j/4 (128-bit lane i =
//	                 block i), 256 bytes: the activations of the low
//	                 nibbles (a_i[0:16] per block, 64 bytes), those of the
//	                 high nibbles (a_i[16:32]), 16 float32 activation
//	                 scales and 16 int32 biases 2·nsum_i (4 lanes a block,
//	                 adding up to -8·Σa_i: the -8 offset of the Q4_0
//	                 codes). The AVX2 kernel reads it as two pairs.
//	qLayInterleaved  Q4_0, 4 blocks, lane j in block j%4, 192 bytes: the
//	                 same 128 activation bytes with block j%4's bytes
//	                 4(j/4)..+3 in dword j, then 4 scales and 4 biases
//	                 (the kernel broadcasts them to 16 lanes), then 32
//	                 bytes of padding so that every record starts on a
//	                 cache line: the kernels' 64-byte activation loads
//	                 then never split across two lines (a 160-byte record
//	                 split half of them, about 7% of the warm GEMV rate).
//	qLayQ8           Q8_0, 2 blocks, lane j in block j%2, 80 bytes: the 64
//	                 activations, block j%2's bytes 4(j/2)..+3 in dword j,
//	                 2 scales and 2 biases 16·nsum_i (8 lanes a block,
//	                 adding up to -128·Σa_i: the kernel adds 128 to the
//	                 signed codes to use VPDPBUSD).
//	qLayPacked16     the records of the lane-packed Q4_0 weights (q4p.go),
//	                 16 blocks, lane j = block j, 640 bytes; built by
//	                 qPacked16, not qGroups.
type qLayout int

const (
	qLayLanes qLayout = iota + 1
	qLayInterleaved
	qLayQ8
	qLayPacked16
)

// bytes returns the size of one record of the layout.
func (l qLayout) bytes() int {
	switch l {
	case qLayLanes:
		return 256
	case qLayInterleaved:
		return 192
	case qLayPacked16:
		return q4pRec
	}
	return 80
}

// blocks returns the number of blocks per record.
func (l qLayout) blocks() int {
	switch l {
	case qLayQ8:
		return 2
	case qLayPacked16:
		return q4pGroup
	}
	return 4
}

// qGroups returns the group layout l of q, building it on first use after
// QuantizeActs.
func (q *QuantizedActs) qGroups(l qLayout) []byte {
	if q.g4ok == l {
		return q.g4
	}
	nb := q.K / qBlock
	gb, rec := l.blocks(), l.bytes()
	ng := nb / gb
	q.g4 = growAligned(q.g4, q.M*ng*rec)
	if len(q.qs) == 0 || ng == 0 {
		q.g4ok = l
		return q.g4
	}
	// The activations as little-endian dwords (block b's are 8b..8b+7):
	// every layout moves whole dwords.
	qs := unsafe.Slice((*byte)(unsafe.Pointer(&q.qs[0])), len(q.qs))
	le := binary.LittleEndian
	for m := 0; m < q.M; m++ {
		for g := 0; g < ng; g++ {
			r := q.g4[(m*ng+g)*rec : (m*ng+g+1)*rec]
			for i := 0; i < gb; i++ {
				b := m*nb + g*gb + i
				a := qs[b*qBlock : (b+1)*qBlock]
				db, ns := math.Float32bits(q.d[b]), uint32(q.nsum[b])
				switch l {
				case qLayLanes:
					rr, aa := (*[256]byte)(r), (*[32]byte)(a)
					o := 16 * (i & 3)
					le.PutUint64(rr[o:], le.Uint64(aa[0:]))
					le.PutUint64(rr[o+8:], le.Uint64(aa[8:]))
					le.PutUint64(rr[64+o:], le.Uint64(aa[16:]))
					le.PutUint64(rr[64+o+8:], le.Uint64(aa[24:]))
					d2, n2 := uint64(db)|uint64(db)<<32, uint64(2*ns)|uint64(2*ns)<<32
					le.PutUint64(rr[128+o:], d2)
					le.PutUint64(rr[128+o+8:], d2)
					le.PutUint64(rr[192+o:], n2)
					le.PutUint64(rr[192+o+8:], n2)
				case qLayInterleaved:
					rr, aa := (*[192]byte)(r), (*[32]byte)(a)
					for k := 0; k < 4; k++ {
						le.PutUint32(rr[4*(4*k+i)&63:], le.Uint32(aa[4*k:]))
						le.PutUint32(rr[64+4*(4*k+i)&63:], le.Uint32(aa[16+4*k:]))
					}
					le.PutUint32(rr[128+4*(i&3):], db)
					le.PutUint32(rr[144+4*(i&3):], 2*ns)
					if i == 0 {
						clear(rr[160:])
					}
				case qLayQ8:
					rr, aa := (*[80]byte)(r), (*[32]byte)(a)
					for k := 0; k < 8; k++ {
						le.PutUint32(rr[4*(2*k+i)&63:], le.Uint32(aa[4*k:]))
					}
					le.PutUint32(rr[64+4*(i&1):], db)
					le.PutUint32(rr[72+4*(i&1):], 16*ns)
				}
			}
		}
	}
	q.g4ok = l
	return q.g4
}

// growAligned is grow for a byte buffer that starts on a 64-byte
// boundary (the group layouts' records are cache-line multiples or meant
// to be read as whole lines).
func growAligned(s []byte, n int) []byte {
	if cap(s) >= n {
		return s[:n]
	}
	return ir.AlignedBytes(n)
}

// qGroupDot is a row dot product over ng full groups of blocks: the
// weights w (ng groups) against the records lay (ng of them) of one
// activation row.
type qGroupDot func(ng int, w []byte, lay []byte) float32

// qGroupDot4 is qGroupDot for four activation rows whose records start at
// lay, lay+ld, lay+2·ld and lay+3·ld (bytes), returning four sums (by
// value: an out pointer through a func value would escape to the heap).
type qGroupDot4 func(ng int, w []byte, lay []byte, ld int) [4]float32

// qGroupRowsM is qGroupDot4 (or its eight-row twin) for nr weight rows rb
// bytes apart at once: the sums of weight row i with activation row r go
// to y[r·ldy+i].
type qGroupRowsM func(nr, ng int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int)

// qGroupRows is qGroupDot for nr weight rows, rb bytes apart, against one
// activation row: y[i] = w row i · the activations.
type qGroupRows func(nr, ng int, w []byte, rb int, lay []byte, y []float32, pf Prefetch)
