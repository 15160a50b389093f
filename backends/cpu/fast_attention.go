package cpu

import (
	"math"
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildFastAttention, "Attention") }

// buildFastAttention handles float32 Attention with SGEMM per head: scores
// S = Q·Kᵀ (K packed transposed into scratch), a stable softmax of each
// score row with the scale, mask and causal rule applied, then Y = P·V.
// Heads run in parallel on the pool, each worker with its own scratch.
// When the Sq×Skv scores of a head would pass attnTiledMinScores floats,
// it runs tiles of queries and keys with an online softmax instead
// (fast_attention_tiled.go), in scratch independent of Skv.
func buildFastAttention(s *nodeSpec) intoKernel {
	q, k, v, mask, y := s.input(0), s.input(1), s.input(2), s.input(3), s.out[0]
	if len(s.in) > 4 || len(s.out) != 1 || !q.ok || !k.ok || !v.ok || !allF32(q, k, v, y) {
		return nil
	}
	if len(q.shape) != 4 || len(k.shape) != 4 || len(v.shape) != 4 {
		return nil
	}
	B, H, Sq, D := int(q.shape[0]), int(q.shape[1]), int(q.shape[2]), int(q.shape[3])
	Hkv, Skv, Dv := int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
	if int(k.shape[0]) != B || int(v.shape[0]) != B || int(k.shape[3]) != D || int(v.shape[1]) != Hkv || int(v.shape[2]) != Skv ||
		Hkv == 0 || H%Hkv != 0 || !slices.Equal(y.shape, []int64{int64(B), int64(H), int64(Sq), int64(Dv)}) {
		return nil
	}
	if Sq*Skv*D < minFastFlops || B*H == 0 {
		return nil
	}
	j := attnJob{B: B, H: H, Hkv: Hkv, Sq: Sq, Skv: Skv, D: D, Dv: Dv, hasMask: mask.ok}
	if mask.ok {
		if mask.dt != ir.Float32 && mask.dt != ir.Bool || len(mask.shape) > 4 {
			return nil
		}
		j.boolMask = mask.dt == ir.Bool
		full := []int64{int64(B), int64(H), int64(Sq), int64(Skv)}
		off := 4 - len(mask.shape)
		st := rowStrides(mask.shape)
		for i, d := range mask.shape {
			switch {
			case d == full[off+i]:
				j.mst[off+i] = int(st[i])
			case d != 1:
				return nil
			}
		}
	}
	j.scale = 1 / math.Sqrt(float64(D))
	if s.n.Has("scale") {
		j.scale = float64(s.n.AttrFloat("scale", 0))
	}
	j.causal = s.n.AttrInt("is_causal", 0) != 0
	// Per worker: K and V packed, then the Sq×Skv scores (rounded to whole
	// cache lines); past attnTiledMinScores a tile of each instead, with
	// the accumulators of a query tile (fast_attention_tiled.go).
	var l layout
	j.tasks = B * H
	if Sq*Skv > attnTiledMinScores {
		j.tiled = true
		j.tq, j.tk = min(attnTileQ, Sq), min(attnTileK, Skv)
		// Enough query chunks per head for two tasks per worker, each
		// chunk whole query tiles.
		nqt := (Sq + j.tq - 1) / j.tq
		nqc := min(nqt, max(1, (2*s.pool.Workers()+B*H-1)/(B*H)))
		j.qcRows = (nqt + nqc - 1) / nqc * j.tq
		j.nqc = (Sq + j.qcRows - 1) / j.qcRows
		j.tasks *= j.nqc
		j.pkOff, j.pvOff, j.scOff = l.add(kernels.PackedBLen(D, j.tk)), l.add(kernels.PackedBLen(j.tk, Dv)), l.add(j.tq*j.tk)
		j.mlOff = l.add(2 * j.qcRows)
	} else {
		j.pkOff, j.pvOff, j.scOff = l.add(kernels.PackedBLen(D, Skv)), l.add(kernels.PackedBLen(Skv, Dv)), l.add(Sq*Skv)
	}
	j.per = l.n
	workers := s.pool.Workers()
	s.scratch = workers * j.per * 4
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		job := attnJobs.Get().(*attnJob)
		pbs := job.pbs
		*job = j
		if len(pbs) < 2*workers {
			pbs = make([]kernels.PackedB, 2*workers)
		}
		job.pbs = pbs
		job.q, job.k, job.v, job.y = in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), out[0].Float32s()
		if j.hasMask && j.boolMask {
			job.mb = in[3].Data
		} else if j.hasMask {
			job.mf = in[3].Float32s()
		}
		job.buf = f32View(scratch, workers*j.per)
		job.Sk = job.keysSeen()
		pool.RunTasks(j.tasks, job)
		*job = attnJob{pbs: pbs}
		attnJobs.Put(job)
		return nil
	}
}

// attnJob is one Attention run; task t is head t%H of batch t/H.
type attnJob struct {
	B, H, Hkv, Sq, Skv, D, Dv int
	Sk                        int // keys attended: Skv less a fully masked tail
	scale                     float64
	causal                    bool
	hasMask, boolMask         bool
	mst                       [4]int // mask strides over [B, H, Sq, Skv]
	pkOff, pvOff, scOff, per  int
	tasks                     int               // B·H, times nqc when tiled
	tiled                     bool              // the online-softmax path over tiles
	tq, tk                    int               // tiled: query and key tile sizes
	qcRows, nqc               int               // tiled: query rows per task, tasks per head
	mlOff                     int               // tiled: the row maxima and sums
	pbs                       []kernels.PackedB // two per worker
	q, k, v, y                []float32
	mf                        []float32
	mb                        []byte
	buf                       []float32 // workers × per floats
}

var attnJobs = sync.Pool{New: func() any { return new(attnJob) }}

// Task computes one head (one query tile of one head when tiled).
func (j *attnJob) Task(w, t int) {
	if j.tiled {
		j.tiledTask(w, t)
		return
	}
	b, h := t/j.H, t%j.H
	Sq, Skv, Sk, D, Dv := j.Sq, j.Skv, j.Sk, j.D, j.Dv
	kvh := b*j.Hkv + h/(j.H/j.Hkv)
	buf := j.buf[w*j.per : (w+1)*j.per]
	scores := buf[j.scOff : j.scOff+Sq*Sk]
	row0 := (b*j.H + h) * Sq
	pk, pv := &j.pbs[2*w], &j.pbs[2*w+1]
	pk.Pack(buf[j.pkOff:j.pvOff], j.k[kvh*Skv*D:kvh*Skv*D+Sk*D], D, D, Sk, true)
	kernels.SgemmPacked(nil, Sq, j.q[row0*D:(row0+Sq)*D], D, pk, scores, Sk, false)
	for i := 0; i < Sq; i++ {
		j.softmaxRow(scores[i*Sk:(i+1)*Sk], b, h, i)
	}
	pv.Pack(buf[j.pvOff:j.scOff], j.v[kvh*Skv*Dv:kvh*Skv*Dv+Sk*Dv], Dv, Sk, Dv, false)
	kernels.SgemmPacked(nil, Sq, scores, Sk, pv, j.y[row0*Dv:(row0+Sq)*Dv], Dv, false)
}

// softmaxRow turns one row of raw dot products into attention weights:
// scale and mask (one vector pass when the mask row is contiguous floats),
// the causal rule (the keys past the diagonal get weight 0 and are not
// touched by the exponential), then exp(s − max) / sum in float32 with the
// vector kernels. A row that sees no key becomes NaN, as in the reference.
func (j *attnJob) softmaxRow(row []float32, b, h, i int) {
	ninf := float32(math.Inf(-1))
	scale := float32(j.scale)
	mbase := b*j.mst[0] + h*j.mst[1] + i*j.mst[2]
	n := len(row)
	if j.causal {
		n = min(n, max(0, i+j.Skv-j.Sq+1))
	}
	live := row[:n]
	j.scaleMask(live, scale, mbase)
	mx := ninf
	if n > 0 {
		mx = kernels.Max(live)
	}
	if mx == ninf || mx != mx {
		nan := float32(math.NaN())
		for c := range row {
			row[c] = nan
		}
		return
	}
	sum := kernels.ExpSum(live, mx)
	kernels.ScaleAdd(live, 1/sum, nil)
	clear(row[n:])
}

// keysSeen returns how many leading keys any query row can see: Skv less
// the tail of key columns that the mask hides (-inf, or false) in every
// row. A KV cache's mask hides the slots past the tokens written, so a
// decode step attends over the tokens so far, not the whole capacity.
// Hidden keys carry zero weight, so dropping them changes nothing (except
// that non-finite values in hidden slots no longer turn a row into NaN,
// as they do in the reference). With no mask, or a mask that hides every
// key of every row, all Skv are kept (those rows become NaN, as in the
// reference).
// scaleMask scales the scores live (keys from the mask offset mbase on) and
// applies the mask: added where it is float, -inf where a bool mask is 0.
func (j *attnJob) scaleMask(live []float32, scale float32, mbase int) {
	switch {
	case j.hasMask && !j.boolMask && j.mst[3] == 1:
		kernels.ScaleAdd(live, scale, j.mf[mbase:mbase+len(live)])
	case j.hasMask:
		ninf := float32(math.Inf(-1))
		kernels.ScaleAdd(live, scale, nil)
		for c := range live {
			mi := mbase + c*j.mst[3]
			if j.boolMask {
				if j.mb[mi] == 0 {
					live[c] = ninf
				}
			} else {
				live[c] += j.mf[mi]
			}
		}
	default:
		kernels.ScaleAdd(live, scale, nil)
	}
}

func (j *attnJob) keysSeen() int {
	if !j.hasMask || j.mst[3] == 0 {
		return j.Skv
	}
	ninf := float32(math.Inf(-1))
	seen := 0
	nb, nh, nq := 1, 1, 1
	if j.mst[0] != 0 {
		nb = j.B
	}
	if j.mst[1] != 0 {
		nh = j.H
	}
	if j.mst[2] != 0 {
		nq = j.Sq
	}
	for b := 0; b < nb; b++ {
		for h := 0; h < nh; h++ {
			for i := 0; i < nq; i++ {
				base := b*j.mst[0] + h*j.mst[1] + i*j.mst[2]
				c := j.Skv
				for c > seen {
					mi := base + (c-1)*j.mst[3]
					if j.boolMask && j.mb[mi] != 0 || !j.boolMask && j.mf[mi] != ninf {
						break
					}
					c--
				}
				seen = max(seen, c)
				if seen == j.Skv {
					return seen
				}
			}
		}
	}
	if seen == 0 {
		return j.Skv
	}
	return seen
}
