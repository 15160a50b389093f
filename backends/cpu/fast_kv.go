package cpu

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// The KV-cache ops of decoder graphs (ir/ops.go): KVCacheUpdate writes the
// new rows into the cache in place (the planned executor binds its output
// to the input tensor: slotAlias), KVAttention attends over the cache up to
// each query's position a tile of rows at a time: f32 and f16 rows where
// they lie (f16 widened in registers), Q8_0 tiles widened to f32 in
// scratch first. The AVX2 kernels are in fast_kv_amd64.s, plain Go
// versions below.

func init() {
	registerIntoFirst(buildKVCacheUpdate, "KVCacheUpdate")
	registerIntoFirst(buildKVAttention, "KVAttention")
}

// kvCacheOK reports whether a is a rank-4 cache of a supported dtype.
func kvCacheOK(a arg) bool {
	if !a.ok || len(a.shape) != 4 {
		return false
	}
	switch a.dt {
	case ir.Float32, ir.Float16:
		return true
	case ir.Q8_0:
		return a.shape[3]%int64(ir.Q8_0.BlockSize()) == 0
	}
	return false
}

// kvPositions reads Positions [B, S] and checks every entry against the
// capacity P.
func kvPositions(t *ir.Tensor, P int) ([]int64, error) {
	var ps []int64
	if len(t.Data) >= 8 && aligned(t) {
		ps = unsafe.Slice((*int64)(unsafe.Pointer(&t.Data[0])), len(t.Data)/8)
	} else {
		ps = t.Int64s()
	}
	for i, p := range ps {
		if p < 0 || p >= int64(P) {
			return nil, fmt.Errorf("position %d (entry %d of Positions) is outside the cache of %d", p, i, P)
		}
	}
	return ps, nil
}

// buildKVCacheUpdate stores the S new rows of every kv head at their
// positions, in the cache's dtype, in place. Single-threaded: a decode step
// writes Hkv·D elements.
func buildKVCacheUpdate(s *nodeSpec) intoKernel {
	c, nw, pos, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if len(s.in) != 3 || len(s.out) != 1 || !kvCacheOK(c) || !nw.ok || nw.dt != ir.Float32 || len(nw.shape) != 4 ||
		!pos.ok || pos.dt != ir.Int64 || y.dt != c.dt || !slices.Equal(y.shape, c.shape) {
		return nil
	}
	B, H, P, D, S := int(c.shape[0]), int(c.shape[1]), int(c.shape[2]), int(c.shape[3]), int(nw.shape[2])
	if !slices.Equal(nw.shape, []int64{int64(B), int64(H), int64(S), int64(D)}) || !slices.Equal(pos.shape, []int64{int64(B), int64(S)}) {
		return nil
	}
	dt := c.dt
	rb := int(dt.Bytes(int64(D)))
	return func(in, out []*ir.Tensor, _ []byte) error {
		ps, err := kvPositions(in[2], P)
		if err != nil {
			return err
		}
		cache, src := in[0].Data, in[1].Float32s()
		if S == 1 {
			for b := 0; b < B; b++ {
				for h := 0; h < H; h++ {
					at := ((b*H+h)*P + int(ps[b])) * rb
					prefetchRowsW(cache[at : at+rb])
				}
			}
		}
		// Head by head: a head's new rows are consecutive in the input,
		// and its cache rows at consecutive positions are too (a prompt's),
		// so both sides stream. Positions repeated within a call keep the
		// last row written, in token order, either way.
		for b := 0; b < B; b++ {
			for h := 0; h < H; h++ {
				for si := 0; si < S; si++ {
					x := src[((b*H+h)*S+si)*D : ((b*H+h)*S+si+1)*D]
					at := ((b*H+h)*P + int(ps[b*S+si])) * rb
					storeKVRow(dt, cache[at:at+rb], x)
				}
			}
		}
		if out[0] != in[0] {
			copy(out[0].Data, cache) // not bound in place (e.g. a graph output)
		}
		return nil
	}
}

// u16View views bytes as little-endian uint16s (the cache data is
// aligned: NewTensor's, or a planned buffer).
func u16View(b []byte) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// storeKVRow writes x into one cache row of dtype dt.
func storeKVRow(dt ir.DType, dst []byte, x []float32) {
	switch dt {
	case ir.Float32:
		copy(unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), len(x)), x)
	case ir.Float16:
		storeHalf(unsafe.Slice((*uint16)(unsafe.Pointer(&dst[0])), len(x)), x)
	default:
		_ = quant.QuantizeRow(dt, dst, x) // the builder checked dtype and size
	}
}

// storeHalfGo rounds src to f16 into dst.
func storeHalfGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = ir.F32ToF16(v)
	}
}

// loadQ8Go widens Q8_0 blocks (a 2-byte f16 scale and 32 int8 codes) at
// src into dst (len(dst)/32 blocks).
func loadQ8Go(dst []float32, src []byte) {
	const bs, bb = 32, 34
	nb := len(dst) / bs
	src = src[:nb*bb]
	for b := 0; b < nb; b++ {
		blk := src[b*bb : b*bb+bb]
		sc := ir.F16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		o := dst[b*bs : b*bs+bs]
		for i := range o {
			o[i] = sc * float32(int8(blk[2+i]))
		}
	}
}

// kvTile is the number of cache rows KVAttention widens at a time (Q8_0
// caches); f32 and f16 rows are read where they lie, kvTileDirect at a
// time: the longer tile makes fewer passes of the online softmax (each
// with its maximum, its exponentials' call and a rescale of the
// accumulators), which took the decode attention of 12 heads at 192
// positions from about 10.8 to 8.6 µs (warm) against 32 rows.
const (
	kvTile       = 32
	kvTileDirect = 256
)

// minKVParallel is the multiply-adds below which KVAttention stays on the
// calling goroutine (a pool dispatch costs more than it saves).
const minKVParallel = 1 << 15

// buildKVAttention computes each (batch, head) as one task, or, where
// query heads share a KV head and the cache is f16 (AVX-512, head size 64
// or 128) or Q8_0, each group of them (fast_kv_group.go): the cache rows
// up to the largest position of its queries, a tile at a time (widened to
// f32 unless the cache is f32), with an online softmax per query (running
// maximum and sum, float32 accumulators).
func buildKVAttention(s *nodeSpec) intoKernel {
	q, k, v, pos, y := s.input(0), s.input(1), s.input(2), s.input(3), s.out[0]
	if len(s.in) != 4 || len(s.out) != 1 || !q.ok || q.dt != ir.Float32 || len(q.shape) != 4 || !kvCacheOK(k) || !kvCacheOK(v) ||
		k.dt != v.dt || !pos.ok || pos.dt != ir.Int64 || y.dt != ir.Float32 {
		return nil
	}
	B, H, S, D := int(q.shape[0]), int(q.shape[1]), int(q.shape[2]), int(q.shape[3])
	Hkv, P, Dv := int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
	if int(k.shape[0]) != B || int(k.shape[3]) != D || !slices.Equal(v.shape, []int64{int64(B), int64(Hkv), int64(P), int64(Dv)}) ||
		Hkv == 0 || H%Hkv != 0 || !slices.Equal(pos.shape, []int64{int64(B), int64(S)}) ||
		!slices.Equal(y.shape, []int64{int64(B), int64(H), int64(S), int64(Dv)}) {
		return nil
	}
	j := kvAttnJob{B: B, H: H, Hkv: Hkv, S: S, D: D, Dv: Dv, P: P, dt: k.dt}
	j.scale = float32(1 / math.Sqrt(float64(D)))
	if s.n.Has("scale") {
		j.scale = s.n.AttrFloat("scale", 0)
	}
	// Per worker: the K and V tiles (Q8_0 only), the tile's scores, and
	// per query its running maximum, sum and Dv accumulators.
	var l layout
	if j.dt == ir.Q8_0 {
		j.kOff, j.vOff = l.add(kvTile*D), l.add(kvTile*Dv)
	}
	j.tile = kvTileDirect
	if j.dt == ir.Q8_0 {
		j.tile = kvTile
	}
	// The grouped path (fast_kv_group.go) keeps ng·tile scores and the
	// states and queries of kvGroupS·ng queries; the per-head path one
	// tile's and S's.
	workers := s.pool.Workers()
	j.gs, j.nsub = kvGroupPlan(H/Hkv, B*Hkv, workers)
	qn := S
	if H > Hkv {
		qn = max(S, min(S, kvGroupS)*j.gs)
	}
	j.scOff, j.stOff, j.qsOff = l.add(j.tile*j.gs), l.add(qn*(Dv+2)), l.add(qn*D)
	j.per = l.n
	s.scratch = workers * j.per * 4
	pool := s.pool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		ps, err := kvPositions(in[3], P)
		if err != nil {
			return err
		}
		job := kvAttnJobs.Get().(*kvAttnJob)
		*job = j
		job.q, job.k, job.v, job.y, job.pos = in[0].Float32s(), in[1].Data, in[2].Data, out[0].Float32s(), ps
		switch j.dt {
		case ir.Float32:
			job.kf, job.vf = in[1].Float32s(), in[2].Float32s()
		case ir.Float16:
			job.kh, job.vh = u16View(in[1].Data), u16View(in[2].Data)
		}
		// Work: every query reads the rows up to its position.
		macs := 0
		for _, p := range ps {
			macs += int(p+1) * (D + Dv)
		}
		macs *= H
		tasks := B * H
		if job.grp = job.grouped(); job.grp {
			tasks = B * Hkv * j.nsub
		}
		job.regions = min(workers, tasks)
		if macs < minKVParallel || workers == 1 {
			job.regions = 1
			job.buf = f32View(scratch, j.per)
			for t := 0; t < tasks; t++ {
				job.Task(0, t)
			}
		} else {
			job.buf = f32View(scratch, workers*j.per)
			// Region order: a worker's next head is usually task t+1,
			// whose first rows Task prefetches as it ends.
			pool.RunRegions(tasks, job)
		}
		*job = kvAttnJob{}
		kvAttnJobs.Put(job)
		return nil
	}
}

// kvAttnJob is one KVAttention run; task t is head t%H of batch t/H.
type kvAttnJob struct {
	B, H, Hkv, S, D, Dv, P        int
	tile                          int // cache rows per pass
	dt                            ir.DType
	scale                         float32
	kOff, vOff, scOff, stOff, per int
	qsOff                         int  // the queries times scale
	gs, nsub                      int  // grouped path: query heads a task, tasks a KV head
	regions                       int  // the workers the run's regions go to (1: serial)
	grp                           bool // this run takes the grouped path
	q, y                          []float32
	k, v                          []byte    // the caches
	kf, vf                        []float32 // f32 caches, viewed
	kh, vh                        []uint16  // f16 caches, viewed
	pos                           []int64
	buf                           []float32
}

var kvAttnJobs = sync.Pool{New: func() any { return new(kvAttnJob) }}

// Task computes every query of one head: the cache rows up to the largest
// position, a tile at a time; f32 and f16 rows are read where they lie
// (f16 widened in registers), Q8_0 tiles are widened into scratch first.
func (j *kvAttnJob) Task(w, t int) {
	if j.grp {
		j.groupTask(w, t)
		return
	}
	b, h := t/j.H, t%j.H
	S, D, Dv, P := j.S, j.D, j.Dv, j.P
	kvh := b*j.Hkv + h/(j.H/j.Hkv)
	buf := j.buf[w*j.per : (w+1)*j.per]
	scores := buf[j.scOff : j.scOff+j.tile]
	st := buf[j.stOff : j.stOff+S*(Dv+2)]
	// The queries times scale, so that the scores come out scaled (one
	// multiplication per query element instead of one per score).
	qs := buf[j.qsOff : j.qsOff+S*D]
	for s := 0; s < S; s++ {
		row := (b*j.H+h)*S + s
		for i, v := range j.q[row*D : (row+1)*D] {
			qs[s*D+i] = v * j.scale
		}
	}
	last := int64(0)
	for s := 0; s < S; s++ {
		kvInitState(st[s*(Dv+2) : (s+1)*(Dv+2)])
		last = max(last, j.pos[b*S+s])
	}
	half := j.dt == ir.Float16
	krb, vrb := int(j.dt.Bytes(int64(D))), int(j.dt.Bytes(int64(Dv)))
	// The cache rows between this head's and the next task's, where this
	// worker runs it next (0 where it shares this KV head or goes to
	// another worker, or where the head's rows are too many): the f16
	// kernels prefetch the next head's rows with this head's, so that a
	// worker streams its heads' short runs of keys and values without
	// starting each one cold.
	ahead := 0
	if half && j.nextHere(t) && (int(last)+1)*(krb+vrb) <= kvAheadBytes {
		ahead = (b*j.Hkv + (h+1)/(j.H/j.Hkv) - kvh) * P
	}
	// This head's first tile at once (the next head's, as this one ends).
	j.prefetchHead(kvh, min(kvTile, int(last)+1), krb, vrb)
	for j0 := 0; j0 <= int(last); j0 += j.tile {
		n := min(j.tile, int(last)+1-j0)
		var kt, vt []float32
		var kh, vh []uint16
		switch j.dt {
		case ir.Float32:
			kt = j.kf[(kvh*P+j0)*D : (kvh*P+j0+n)*D]
			vt = j.vf[(kvh*P+j0)*Dv : (kvh*P+j0+n)*Dv]
		case ir.Float16:
			kh = j.kh[(kvh*P+j0)*D : (kvh*P+j0+n)*D]
			vh = j.vh[(kvh*P+j0)*Dv : (kvh*P+j0+n)*Dv]
		default:
			kt, vt = buf[j.kOff:j.kOff+n*D], buf[j.vOff:j.vOff+n*Dv]
			loadQ8(kt, j.k[(kvh*P+j0)*krb:(kvh*P+j0+n)*krb])
			loadQ8(vt, j.v[(kvh*P+j0)*vrb:(kvh*P+j0+n)*vrb])
		}
		for s := 0; s < S; s++ {
			p := int(j.pos[b*S+s])
			if p < j0 {
				continue
			}
			m := min(n, p+1-j0) // keys of this tile the query sees
			qi := qs[s*D : (s+1)*D]
			sc := scores[:m]
			if half {
				// The values' first rows are the stream after the keys.
				scoresKVHalfNext(qi, kh, D, m, sc, vh[:min(m, kvPFRows)*Dv], ahead*D)
			} else {
				scoresKV(qi, kt, D, m, sc)
			}
			state := st[s*(Dv+2) : (s+1)*(Dv+2)]
			acc := state[2:]
			kvSoftmaxStep(state, sc)
			if half {
				accumKVHalfNext(acc, sc, vh, Dv, m, j.nextKeys(t, j0+j.tile, int(last)), ahead*Dv)
			} else {
				accumKV(acc, sc, vt, Dv, m)
			}
		}
	}
	if !half && t+1 < j.B*j.H && (t+1)/j.H == b {
		j.prefetchHead(b*j.Hkv+(h+1)/(j.H/j.Hkv), min(kvTile, int(last)+1), krb, vrb)
	}
	for s := 0; s < S; s++ {
		row := (b*j.H+h)*S + s
		kvFinish(st[s*(Dv+2):(s+1)*(Dv+2)], j.y[row*Dv:(row+1)*Dv])
	}
}

// kvPFRows is how many rows ahead of its loads an f16 kernel prefetches a
// cache stream (KVPFS in fast_kv_amd64.s).
const kvPFRows = 32

// kvAheadBytes is the most bytes of keys and values a head's rows may
// take for its task to prefetch the next head's along with them. The
// next head's rows then arrive a whole head early; where they are many,
// they no longer wait in the caches until they are read but push out
// the rows being read, which are fetched again. Llama-110M Q4_0 decode
// at 1,900–1,920 positions (480 KB of f16 keys and values a head) took a
// median 3565 µs a token with the next head prefetched and 2933–3088
// without (two threads; 6733 against 5680–5733 on one; in-process
// rounds alternating the two); at 150–520 positions (up to 130 KB a
// head) the two ran alike, within the noise.
const kvAheadBytes = 64 << 10

// A head's decode attention reads short streams: its keys, then its
// values (at 192 positions a row of 64 f16 is 24 KB of each), then the
// next head's keys. A kernel that prefetches a fixed distance ahead
// spends the end of each stream on lines past it that nobody reads, and
// the next stream starts with nothing in flight. So the per-head f16
// path hands the prefetch on: a stream's last kvPFRows rows are read
// without prefetching past them, and the next stream's first rows are
// prefetched as they start.

// kvHandOff is the number of leading rows of an n-row stream read with
// prefetching ahead, the rest being the stream's tail. It is a multiple of
// 4, the scores kernels' row block, so that every score has the bits of
// one call over all n rows.
func kvHandOff(n int) int {
	if n <= kvPFRows {
		return 0
	}
	return (n - kvPFRows) &^ 3
}

// scoresKVHalfNext is scoresKVHalfPF over n rows that hands the prefetch on
// to next (the stream read after these rows) for the last ones, and
// prefetches each row's counterpart ahead elements further on (0: none),
// the next head's, which then arrives while this head computes.
func scoresKVHalfNext(q []float32, k []uint16, d, n int, out []float32, next []uint16, ahead int) {
	h := kvHandOff(n)
	if h > 0 {
		scoresKVHalfPF(q, k[:h*d], d, h, out[:h], kvPFRows, ahead)
	}
	prefetchHalf(next)
	scoresKVHalfPF(q, k[h*d:n*d], d, n-h, out[h:n], 0, ahead)
}

// accumKVHalfNext is accumKVHalfPF over n rows with the prefetches of
// scoresKVHalfNext. The split falls where kvHandOff says whatever next is, so a
// query's sums depend only on its rows (its position).
func accumKVHalfNext(acc, w []float32, v []uint16, d, n int, next []uint16, ahead int) {
	h := kvHandOff(n)
	if h > 0 {
		accumKVHalfPF(acc, w[:h], v[:h*d], d, h, kvPFRows, ahead)
	}
	prefetchHalf(next)
	accumKVHalfPF(acc, w[h:n], v[h*d:n*d], d, n-h, 0, ahead)
}

// prefetchHalf prefetches the f16 values of r.
func prefetchHalf(r []uint16) {
	if len(r) > 0 {
		prefetchRows(unsafe.Slice((*byte)(unsafe.Pointer(&r[0])), 2*len(r)))
	}
}

// nextHere reports whether task t+1 exists and is likely to run on the
// worker that runs task t: it is not the first task of a region
// (Pool.RunRegions: region k of w starts at task k·tasks/w).
func (j *kvAttnJob) nextHere(t int) bool {
	tasks := j.B * j.H
	if t+1 >= tasks {
		return false
	}
	for k := 1; k < j.regions; k++ {
		if k*tasks/j.regions == t+1 {
			return false
		}
	}
	return true
}

// nextKeys returns the first rows of the keys that per-head task t reads
// after the values of the tile before row j1 (last the largest position
// of its queries): the next tile's, else the next head's of the same
// batch, else none.
func (j *kvAttnJob) nextKeys(t, j1, last int) []uint16 {
	b, h := t/j.H, t%j.H
	kvh := b*j.Hkv + h/(j.H/j.Hkv)
	if j1 > last {
		if h+1 == j.H {
			return nil
		}
		kvh, j1 = b*j.Hkv+(h+1)/(j.H/j.Hkv), 0
	}
	r := kvh*j.P + j1
	return j.kh[r*j.D : (r+min(kvPFRows, last+1-j1))*j.D]
}

// kvSoftmaxStep folds a tile's scores sc into a query's online-softmax
// state (running maximum, sum, then the accumulators): the accumulators
// and sum are rescaled where the maximum rises, and sc becomes the
// weights e^(score−max), whose sum is added.
func kvSoftmaxStep(state, sc []float32) {
	mx := kernels.Max(sc)
	if mx > state[0] {
		corr := expKV(state[0] - mx)
		state[0] = mx
		state[1] *= corr
		for i := range state[2:] {
			state[2+i] *= corr
		}
	}
	// The weights e^(score−max) and their sum, in SIMD lanes.
	state[1] += kernels.ExpSum(sc, state[0])
}

// kvInitState clears a query's online-softmax state.
func kvInitState(state []float32) {
	state[0] = float32(math.Inf(-1)) // running maximum
	state[1] = 0                     // running sum
	clear(state[2:])
}

// kvFinish writes a query's output: its accumulators over its sum.
func kvFinish(state, yo []float32) {
	inv := 1 / state[1]
	for i, a := range state[2:] {
		yo[i] = a * inv
	}
}

// prefetchHead prefetches the first n cache rows of keys and values of KV
// head kvh (rows of krb and vrb bytes).
func (j *kvAttnJob) prefetchHead(kvh, n, krb, vrb int) {
	r := kvh * j.P
	prefetchRows(j.k[r*krb : (r+n)*krb])
	prefetchRows(j.v[r*vrb : (r+n)*vrb])
}

// expKV is e^x for the softmax weights (x ≤ 0), in float32: 2^k·e^r
// with k = round(x/ln 2) and |r| ≤ ln2/2, e^r by its Taylor polynomial of
// degree 7 (relative error below 2e-7); below −87 (where e^x leaves the
// normal float32 range) it is 0.
func expKV(x float32) float32 {
	if x < -87 || x != x {
		if x != x {
			return x
		}
		return 0
	}
	const log2e, ln2hi, ln2lo = 1.44269504088896341, 0.693359375, -2.12194440e-4
	k := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - k*ln2hi - k*ln2lo
	p := float32(1.0 / 5040)
	p = p*r + 1.0/720
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// scoresKVGo sets out[c] = q·k[c·d:(c+1)·d] for c < n.
func scoresKVGo(q, k []float32, d, n int, out []float32) {
	for c := 0; c < n; c++ {
		out[c] = dotKVGo(q[:d], k[c*d:(c+1)*d])
	}
}

// scoresKVHalfGo is scoresKVGo over f16 rows.
func scoresKVHalfGo(q []float32, k []uint16, d, n int, out []float32) {
	for c := 0; c < n; c++ {
		out[c] = dotKVHalfGo(q[:d], k[c*d:(c+1)*d])
	}
}

// accumKVGo adds Σ_c w[c]·v[c·d:(c+1)·d] (c < n) to acc[:d].
func accumKVGo(acc, w, v []float32, d, n int) {
	for c := 0; c < n; c++ {
		axpyKVGo(acc[:d], w[c], v[c*d:(c+1)*d])
	}
}

// accumKVHalfGo is accumKVGo over f16 rows.
func accumKVHalfGo(acc, w []float32, v []uint16, d, n int) {
	for c := 0; c < n; c++ {
		axpyKVHalfGo(acc[:d], w[c], v[c*d:(c+1)*d])
	}
}

// dotKVGo is a·b with four partial sums (len(b) ≥ len(a)).
func dotKVGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotKVHalfGo is a·b with b f16 bits.
func dotKVHalfGo(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * ir.F16ToF32(b[i])
	}
	return s
}

// axpyKVGo is y += a·x.
func axpyKVGo(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// axpyKVHalfGo is y += a·x with x f16 bits.
func axpyKVHalfGo(y []float32, a float32, x []uint16) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * ir.F16ToF32(x[i])
	}
}
