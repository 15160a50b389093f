package cpu

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The tiled Attention path (flash-attention style): for one head and a tile
// of tq queries, the keys are visited a tile of tk at a time: the tile's
// scores S = Q·Kᵀ (SGEMM over the K tile packed transposed), scale, mask
// and causal rule applied, then an online softmax per query row: a running
// maximum m and sum l; when a tile raises m the row's accumulator and l are
// rescaled by e^(m_old − m_new), and the weights e^(s − m) of the tile are
// added to l and, as P·V (SGEMM over the V tile), to the accumulator. At
// the end Y = acc / l. A task is a chunk of query rows of one head (the
// whole Sq when there are enough heads to keep the workers busy), so each
// K and V tile is packed once per chunk; the accumulators are the chunk's
// rows of Y. The scratch of a worker is a K and a V tile packed, the
// tq×tk scores and two floats per chunk row: independent of Skv, where
// the untiled path holds every Sq×Skv score of a head. Key tiles past the
// causal diagonal of a query tile's last row are never computed.

// attnTiledMinScores is the number of Sq×Skv scores per head above which
// Attention takes the tiled path (1 MiB of float32 scores per worker).
// Below it, the untiled path (one SGEMM for all scores, one for P·V) is
// the faster one (BERT and GPT shapes). Tests lower it to tile small
// shapes.
var attnTiledMinScores = 1 << 18

// attnTileQ and attnTileK are the tile sizes of the tiled path: 84 query
// rows (a multiple of the AVX-512 and AVX2 micro-kernel heights, 14 and 6)
// and 192 keys (one K block of the SGEMM for P·V). Variables for tests.
var attnTileQ, attnTileK = 84, 192

// tiledTask computes query chunk t%nqc of head (t/nqc)%H of batch
// t/nqc/H: for each key tile (K and V packed once for the chunk), each
// query tile of the chunk, accumulating straight into the chunk's rows of
// Y (which no input shares: Attention is not computed in place). With the
// causal rule the chunks go last first (the last sees the most keys: the
// pool, claiming tasks in order, starts the longest).
func (j *attnJob) tiledTask(w, t int) {
	bh, qc := t/j.nqc, t%j.nqc
	if j.causal {
		qc = j.nqc - 1 - qc
	}
	b, h := bh/j.H, bh%j.H
	D, Dv := j.D, j.Dv
	kvh := b*j.Hkv + h/(j.H/j.Hkv)
	buf := j.buf[w*j.per : (w+1)*j.per]
	c0 := qc * j.qcRows
	rows := min(j.qcRows, j.Sq-c0)
	row0 := (b*j.H+h)*j.Sq + c0
	y := j.y[row0*Dv : (row0+rows)*Dv]
	mx, sum := buf[j.mlOff:j.mlOff+rows], buf[j.mlOff+j.qcRows:j.mlOff+j.qcRows+rows]
	ninf := float32(math.Inf(-1))
	clear(y)
	clear(sum)
	for i := range mx {
		mx[i] = ninf
	}
	// seen returns how many keys query rows up to i (chunk-relative,
	// exclusive) can see: all Sk, or up to the causal diagonal of row i-1.
	seen := func(i int) int {
		if !j.causal {
			return j.Sk
		}
		return min(j.Sk, max(0, c0+i+j.Skv-j.Sq))
	}
	pk, pv := &j.pbs[2*w], &j.pbs[2*w+1]
	kb, vb := kvh*j.Skv*D, kvh*j.Skv*Dv
	for k0, kEnd := 0, seen(rows); k0 < kEnd; k0 += j.tk {
		tk := min(j.tk, kEnd-k0)
		pk.Pack(buf[j.pkOff:j.pvOff], j.k[kb+k0*D:kb+(k0+tk)*D], D, D, tk, true)
		vPacked := false
		for i0 := 0; i0 < rows; i0 += j.tq {
			tq := min(j.tq, rows-i0)
			if seen(i0+tq) <= k0 {
				continue // the tile's rows see none of these keys
			}
			sc := buf[j.scOff : j.scOff+tq*tk]
			kernels.SgemmPacked(nil, tq, j.q[(row0+i0)*D:(row0+i0+tq)*D], D, pk, sc, tk, false)
			live := false
			for i := i0; i < i0+tq; i++ {
				if j.onlineRow(sc[(i-i0)*tk:(i-i0+1)*tk], y[i*Dv:(i+1)*Dv], &mx[i], &sum[i], b, h, c0+i, k0) {
					live = true
				}
			}
			if !live {
				continue // every weight of the tile is 0
			}
			if !vPacked {
				pv.Pack(buf[j.pvOff:j.scOff], j.v[vb+k0*Dv:vb+(k0+tk)*Dv], Dv, tk, Dv, false)
				vPacked = true
			}
			kernels.SgemmPacked(nil, tq, sc, tk, pv, y[i0*Dv:(i0+tq)*Dv], Dv, true)
		}
	}
	nan := float32(math.NaN())
	for i := 0; i < rows; i++ {
		out := y[i*Dv : (i+1)*Dv]
		if mx[i] == ninf || mx[i] != mx[i] {
			// No key seen (the softmax of a row of -inf), or a NaN
			// score: NaN, as in the reference.
			for c := range out {
				out[c] = nan
			}
			continue
		}
		kernels.ScaleAdd(out, 1/sum[i], nil)
	}
}

// onlineRow applies the scale, mask and causal rule to the raw dot
// products row of query i against keys k0.. (one key tile), updates the
// row's running maximum m and sum l (rescaling l and the accumulator acc
// when m rises) and turns row into the weights e^(s − m), 0 for the keys
// it does not see. It reports whether any weight may be nonzero; when not,
// row is all zeros. A NaN maximum is kept in m (the row's output is NaN).
func (j *attnJob) onlineRow(row, acc []float32, m, l *float32, b, h, i, k0 int) bool {
	n := len(row)
	if j.causal {
		n = min(n, max(0, i+j.Skv-j.Sq+1-k0))
	}
	if n == 0 || *m != *m {
		clear(row)
		return false
	}
	live := row[:n]
	scale := float32(j.scale)
	mbase := b*j.mst[0] + h*j.mst[1] + i*j.mst[2] + k0*j.mst[3]
	j.scaleMask(live, scale, mbase)
	mx := kernels.Max(live)
	if mx != mx {
		*m = mx
		clear(row)
		return false
	}
	if mx > *m {
		if *l != 0 {
			corr := expKV(*m - mx)
			*l *= corr
			kernels.ScaleAdd(acc, corr, nil)
		}
		*m = mx
	}
	if math.IsInf(float64(*m), -1) {
		clear(row) // every key so far hidden
		return false
	}
	*l += kernels.ExpSum(live, *m)
	clear(row[n:])
	return true
}
