package kernels

import (
	"encoding/binary"
	"math"
)

// The q4_0 group layouts of the quantized activations, built once per
// QuantizeActs (on the first QMatMul that wants one) for the SIMD row dot
// products that take four Q4_0 blocks at a time. Row m's activation blocks
// 4g..4g+3 become one record; both kinds hold, in this order, the
// activations of the low nibbles (a_i[0:16] of the four blocks i, 64
// bytes), those of the high nibbles (a_i[16:32], 64 bytes), the activation
// scales da_i (float32) and the biases 2·nsum_i (int32: the four lanes of a
// block add up to -8·Σa_i, the -8 offset of the Q4_0 codes). They differ
// in which block a 32-bit lane j belongs to:
//
//	qLayLanes        block j/4 (128-bit lane i = block i): 256 bytes, the
//	                 scales and biases spread to 16 lanes each; the AVX2
//	                 kernel reads a record as two pairs of blocks.
//	qLayInterleaved  block j%4: 160 bytes, the activation bytes 4(j/4)..+3
//	                 in dword j, 4 scales and 4 biases (broadcast to 16
//	                 lanes by the kernel).
//
// Blocks past the last full group of four are left to the plain row dot.
type qLayout int

const (
	qLayLanes qLayout = iota + 1
	qLayInterleaved
)

// qGroup is the number of blocks per record.
const qGroup = 4

// bytes returns the size of one record of the layout.
func (l qLayout) bytes() int {
	if l == qLayLanes {
		return 256
	}
	return 160
}

// q4Groups returns the q4_0 group layout l of q, building it on first use
// after QuantizeActs.
func (q *QuantizedActs) q4Groups(l qLayout) []byte {
	if q.g4ok == l {
		return q.g4
	}
	nb := q.K / qBlock
	ng, rec := nb/qGroup, l.bytes()
	q.g4 = grow(q.g4, q.M*ng*rec)
	for m := 0; m < q.M; m++ {
		for g := 0; g < ng; g++ {
			r := q.g4[(m*ng+g)*rec : (m*ng+g+1)*rec]
			for i := 0; i < qGroup; i++ {
				b := m*nb + g*qGroup + i
				a := q.qs[b*qBlock : (b+1)*qBlock]
				db, bias := math.Float32bits(q.d[b]), uint32(2*q.nsum[b])
				if l == qLayLanes {
					for e := 0; e < 16; e++ {
						r[16*i+e], r[64+16*i+e] = byte(a[e]), byte(a[16+e])
					}
					for e := 0; e < 4; e++ {
						binary.LittleEndian.PutUint32(r[128+16*i+4*e:], db)
						binary.LittleEndian.PutUint32(r[192+16*i+4*e:], bias)
					}
					continue
				}
				for e := 0; e < 16; e++ {
					at := 4*(4*(e/4)+i) + e%4 // dword 4(e/4)+i, byte e%4
					r[at], r[64+at] = byte(a[e]), byte(a[16+e])
				}
				binary.LittleEndian.PutUint32(r[128+4*i:], db)
				binary.LittleEndian.PutUint32(r[144+4*i:], bias)
			}
		}
	}
	q.g4ok = l
	return q.g4
}

// qGroupDot is a row dot product over ng full groups of four blocks: the
// weights w (ng·4 blocks) against the records lay (ng of them) of one
// activation row.
type qGroupDot func(ng int, w []byte, lay []byte) float32
