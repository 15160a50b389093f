package cpu

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// The small per-token ops of decoder graphs (frontend/llama), as into
// kernels so that a decode or prefill step allocates nothing: f32
// RMSNormalization over the last axis, f32 RotaryEmbedding and QGather
// (the token embedding kept in its stored format). They run on
// the calling goroutine (a decode step's rows are far too small to split),
// accumulate in float64 and round once, as the reference kernels do.

func init() {
	registerIntoFirst(buildFastRMSNorm, "RMSNormalization")
	registerIntoFirst(buildFastRope, "RotaryEmbedding")
	registerIntoFirst(buildQGather, "QGather")
}

// buildQGather decodes the table rows the indices name (QGather: a token
// embedding kept in its stored format) straight into the output.
//
// Where a kernel holds a copy of the table (liveCopy: the classifier of a
// model whose output matrix is its token embedding), the rows are read
// from the copy, unpacking a packed Q4_0 or Q8_0 row in the scratch
// memory. The copy replaced the table's file pages, and a few rows read
// from the mapping would fault most of them back in: the kernel maps a whole
// large folio of the page cache on a fault (Linux 6.18), and 1,920 tokens
// of a prompt brought back 104 of the 145 MB of Qwen2-0.5B's Q8_0
// embedding.
func buildQGather(s *nodeSpec) intoKernel {
	t, idx, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !t.ok || !idx.ok || idx.dt != ir.Int64 || y.dt != ir.Float32 || len(t.shape) != 2 ||
		t.dt == ir.Float32 || !quant.Decodable(t.dt) || !slices.Equal(y.shape, append(append([]int64{}, idx.shape...), t.shape[1])) {
		return nil
	}
	V, D := int(t.shape[0]), int(t.shape[1])
	rb := int(t.dt.Bytes(int64(D)))
	dt := t.dt
	if dt == ir.Q4_0 || dt == ir.Q8_0 {
		s.scratch = rb // a packed row, unpacked
	}
	type found struct {
		src *byte // the table's first byte
		c   *weightCopy
	}
	var held atomic.Pointer[found] // the copy of the table, once found
	return func(in, out []*ir.Tensor, scratch []byte) error {
		tab, ys := in[0].Data, out[0].Float32s()
		if len(tab) != V*rb {
			return fmt.Errorf("QGather table has %d bytes, want %d rows of %d", len(tab), V, rb)
		}
		var c *weightCopy
		if f := held.Load(); f != nil && f.src == unsafe.SliceData(tab) {
			c = f.c
		} else if c = liveCopy(tab, V, D); c != nil {
			held.Store(&found{unsafe.SliceData(tab), c})
		}
		packed := ir.Invalid
		if c != nil {
			tab, packed = c.data, c.packed
		}
		var ps []int64
		if pt := in[1]; len(pt.Data) >= 8 && aligned(pt) {
			ps = unsafe.Slice((*int64)(unsafe.Pointer(&pt.Data[0])), len(pt.Data)/8)
		} else {
			ps = pt.Int64s()
		}
		for i, r := range ps {
			if r < 0 || r >= int64(V) {
				return fmt.Errorf("index %d (element %d of Indices) is outside the table's %d rows", r, i, V)
			}
			row := tab[int(r)*rb : int(r+1)*rb]
			if packed != ir.Invalid {
				if err := kernels.UnpackRowsTo(packed, scratch[:rb], row, 1, D); err != nil {
					return err
				}
				row = scratch[:rb]
			}
			if err := quant.DecodeRow(dt, ys[i*D:(i+1)*D], row); err != nil {
				return err
			}
		}
		return nil
	}
}

// buildFastRMSNorm handles f32 RMSNormalization whose axis is the last one
// and whose Scale is one row of the last dim (any leading 1s).
func buildFastRMSNorm(s *nodeSpec) intoKernel {
	x, sc, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !allF32(x, sc, y) || len(x.shape) == 0 || !slices.Equal(x.shape, y.shape) {
		return nil
	}
	r := len(x.shape)
	if a := s.n.AttrInt("axis", -1); a != -1 && a != int64(r-1) {
		return nil
	}
	cols := int(x.shape[r-1])
	if ir.NumElements(sc.shape) != int64(cols) || len(sc.shape) == 0 || sc.shape[len(sc.shape)-1] != int64(cols) || len(sc.shape) > r {
		return nil
	}
	rows := int(ir.NumElements(x.shape)) / max(cols, 1)
	eps := float64(s.n.AttrFloat("epsilon", 1e-5))
	return func(in, out []*ir.Tensor, _ []byte) error {
		xs, ss, ys := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		for i := 0; i < rows; i++ {
			row, yr := xs[i*cols:(i+1)*cols], ys[i*cols:(i+1)*cols]
			// The sum of squares in float32 SIMD lanes and the scaling in
			// one pass (kernels.NormAffine with mean 0), as LayerNorm's
			// kernel does: 25 of these run in each decode step of a
			// 12-layer model.
			inv := float32(1 / math.Sqrt(float64(kernels.SumSqDev(row, 0))/float64(cols)+eps))
			kernels.NormAffine(row, yr, ss, nil, 0, inv)
		}
		return nil
	}
}

// buildFastRope handles f32 RotaryEmbedding on [B, H, S, D] with position
// ids.
func buildFastRope(s *nodeSpec) intoKernel {
	x, cs, sn, pos, y := s.input(0), s.input(1), s.input(2), s.input(3), s.out[0]
	if len(s.in) != 4 || len(s.out) != 1 || !allF32(x, cs, sn, y) || !pos.ok || pos.dt != ir.Int64 || len(x.shape) != 4 || !slices.Equal(x.shape, y.shape) {
		return nil
	}
	B, H, S, D := int(x.shape[0]), int(x.shape[1]), int(x.shape[2]), int(x.shape[3])
	R := int(s.n.AttrInt("rotary_embedding_dim", 0))
	if R == 0 {
		R = D
	}
	half := R / 2
	inter := s.n.AttrInt("interleaved", 0)
	if R < 0 || R > D || R%2 != 0 || (inter != 0 && inter != 1) || len(cs.shape) != 2 || int(cs.shape[1]) != half ||
		!slices.Equal(cs.shape, sn.shape) || !slices.Equal(pos.shape, []int64{int64(B), int64(S)}) {
		return nil
	}
	maxPos := int(cs.shape[0])
	pool := s.pool
	return func(in, out []*ir.Tensor, _ []byte) error {
		var ps []int64
		if pt := in[3]; len(pt.Data) >= 8 && aligned(pt) {
			ps = unsafe.Slice((*int64)(unsafe.Pointer(&pt.Data[0])), len(pt.Data)/8)
		} else {
			ps = pt.Int64s()
		}
		for i, p := range ps[:B*S] {
			if p < 0 || p >= int64(maxPos) {
				return fmt.Errorf("position_ids[%d, %d] = %d is outside the caches' %d positions", i/S, i%S, p, maxPos)
			}
		}
		job := ropeJob{xs: in[0].Float32s(), cos: in[1].Float32s(), sin: in[2].Float32s(), ys: out[0].Float32s(), ps: ps,
			H: H, S: S, D: D, R: R, inter: inter == 1}
		// A prompt's rotations in parallel, a token at a time per task;
		// a decode step's (a few hundred) where they are.
		if rows := B * S; rows > 1 && rows*H*half >= minRopeParallel {
			j := ropeJobs.Get().(*ropeJob)
			*j = job
			pool.RunRegions(rows, j)
			*j = ropeJob{}
			ropeJobs.Put(j)
			return nil
		}
		for t := 0; t < B*S; t++ {
			job.Task(0, t)
		}
		return nil
	}
}

// minRopeParallel is the rotations below which RotaryEmbedding stays on
// the calling goroutine.
const minRopeParallel = 1 << 14

// ropeJob is one RotaryEmbedding run; task t rotates every head of token
// t%S of batch t/S (positions checked by the caller).
type ropeJob struct {
	xs, cos, sin, ys []float32
	ps               []int64
	H, S, D, R       int
	inter            bool
}

var ropeJobs = sync.Pool{New: func() any { return new(ropeJob) }}

// Task rotates token t's heads, in float64 as the reference does.
func (j *ropeJob) Task(_, t int) {
	b, si := t/j.S, t%j.S
	H, S, D, R := j.H, j.S, j.D, j.R
	half := R / 2
	p := int(j.ps[t])
	c, sv := j.cos[p*half:(p+1)*half], j.sin[p*half:(p+1)*half]
	for h := 0; h < H; h++ {
		base := ((b*H+h)*S + si) * D
		xr, yr := j.xs[base:base+D], j.ys[base:base+D]
		if j.inter {
			ropePairs(xr[:R], c, sv, yr[:R])
		} else {
			ropeHalf(xr[:half], xr[half:R], c, sv, yr[:half], yr[half:R])
		}
		copy(yr[R:], xr[R:])
	}
}

// ropeHalfGo rotates the pairs (x1[i], x2[i]) into (y1[i], y2[i]) with
// c[i], s[i] (NeoX order), in float64 as the reference does: each product
// rounded (the conversions forbid a fused multiply-add, so the bits are
// the same on every architecture and as ropeHalf's SIMD kernels'), then
// the result rounded to float32 once.
func ropeHalfGo(x1s, x2s, cs, ss, y1s, y2s []float32) {
	// The halves as slices of one length: no bounds checks in the loop.
	x2s, y1s, y2s, cs, ss = x2s[:len(x1s)], y1s[:len(x1s)], y2s[:len(x1s)], cs[:len(x1s)], ss[:len(x1s)]
	for i, x1f := range x1s {
		x1, x2 := float64(x1f), float64(x2s[i])
		cc, sn := float64(cs[i]), float64(ss[i])
		y1s[i] = float32(float64(x1*cc) - float64(x2*sn))
		y2s[i] = float32(float64(x2*cc) + float64(x1*sn))
	}
}

// ropePairsGo is ropeHalfGo for the interleaved pairs (x[2i], x[2i+1]),
// i < len(c).
func ropePairsGo(x, c, s, y []float32) {
	for i := range c {
		x1, x2 := float64(x[2*i]), float64(x[2*i+1])
		cc, sn := float64(c[i]), float64(s[i])
		y[2*i] = float32(float64(x1*cc) - float64(x2*sn))
		y[2*i+1] = float32(float64(x2*cc) + float64(x1*sn))
	}
}
