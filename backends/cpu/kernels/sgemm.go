package kernels

import (
	"fmt"
	"sync"
)

//go:generate go run gen_sgemm.go

// Cache blocking. A KC-deep panel of B (KC×NR floats, 24 KiB for the
// AVX-512 kernel) stays in L1 while the MC×KC block of packed A (about
// third of L2) streams past it; B as a whole is expected to live in L3.
var (
	kcBlock = 192
	mcBlock = 336
)

// The generic (plain Go) micro-tile.
const (
	genericMR = 4
	genericNR = 16
)

// PackedB is a K×N right-hand matrix packed into the panel layout the
// SGEMM micro-kernels read: K is cut into blocks of kc rows, N into panels
// of nr columns (the last one zero-padded), and each (block, panel) is a
// contiguous kc×nr row-major tile. Pack constant weights once and reuse
// the PackedB for every call; its layout depends on the ISA level in use
// when it was packed.
type PackedB struct {
	K, N   int
	nr, kc int
	isa    ISA
	data   []float32
}

// panels returns the number of nr-wide column panels.
func (p *PackedB) panels() int { return (p.N + p.nr - 1) / p.nr }

// panel returns the packed tile of K block kb and column panel j.
func (p *PackedB) panel(kb, j int) []float32 {
	k0 := kb * p.kc
	kcb := min(p.kc, p.K-k0)
	off := k0*p.panels()*p.nr + j*kcb*p.nr
	return p.data[off : off+kcb*p.nr]
}

// PackedBLen returns the number of float32s PackB needs for a K×N matrix at
// the current ISA level (for callers that place packed weights themselves,
// with PackBInto).
func PackedBLen(K, N int) int {
	_, nr := archShape(CurrentISA())
	return K * ((N + nr - 1) / nr) * nr
}

// PackB packs the K×N row-major matrix b (element (k, n) at b[k*ldb+n]).
func PackB(b []float32, ldb, K, N int) *PackedB {
	return PackBInto(make([]float32, PackedBLen(K, N)), b, ldb, K, N, false)
}

// PackBT packs the K×N matrix given transposed: bt is N×K row-major with
// element (k, n) at bt[n*ldbt+k] (the [out, in] layout of linear-layer
// weights and of Gemm with transB=1).
func PackBT(bt []float32, ldbt, K, N int) *PackedB {
	return PackBInto(make([]float32, PackedBLen(K, N)), bt, ldbt, K, N, true)
}

// PackBInto packs into dst (len(dst) >= PackedBLen(K, N)): b is K×N with
// leading dimension ld, or N×K when trans is set.
func PackBInto(dst, b []float32, ld, K, N int, trans bool) *PackedB {
	p := new(PackedB)
	p.Pack(dst, b, ld, K, N, trans)
	return p
}

// Pack is PackBInto into an existing PackedB, which then uses dst: with a
// reused p and dst, packing does not allocate.
func (p *PackedB) Pack(dst, b []float32, ld, K, N int, trans bool) {
	isa := CurrentISA()
	_, nr := archShape(isa)
	*p = PackedB{K: K, N: N, nr: nr, kc: kcBlock, isa: isa}
	if K < 0 || N < 0 {
		panic(fmt.Sprintf("kernels: PackB with K=%d N=%d", K, N))
	}
	rows, cols := K, N
	if trans {
		rows, cols = N, K
	}
	checkMatrix("B", b, rows, cols, ld)
	if n := PackedBLen(K, N); len(dst) < n {
		panic(fmt.Sprintf("kernels: PackBInto dst has %d floats, want %d", len(dst), n))
	}
	p.data = dst[:PackedBLen(K, N)]
	np := p.panels()
	for k0 := 0; k0 < K; k0 += p.kc {
		kcb := min(p.kc, K-k0)
		for j := 0; j < np; j++ {
			t := p.panel(k0/p.kc, j)
			n0 := j * nr
			nc := min(nr, N-n0)
			for kk := 0; kk < kcb; kk++ {
				row := t[kk*nr : kk*nr+nr]
				if trans {
					for c := 0; c < nc; c++ {
						row[c] = b[(n0+c)*ld+k0+kk]
					}
				} else {
					copy(row[:nc], b[(k0+kk)*ld+n0:(k0+kk)*ld+n0+nc])
				}
				clear(row[nc:])
			}
		}
	}
}

// checkMatrix panics unless m holds a rows×cols matrix with leading
// dimension ld. The kernels trust their callers (the CPU backend checks
// shapes), but a wrong slice must never write out of bounds silently.
func checkMatrix(name string, m []float32, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols || len(m) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("kernels: matrix %s: %d floats with ld %d cannot hold %d×%d", name, len(m), ld, rows, cols))
	}
}

// Sgemm computes C = A·B, or C += A·B when accumulate is set, for row-major
// A (M×K, leading dimension lda), B (K×N, ldb) and C (M×N, ldc), spread
// over pool (nil: serial). It packs B on every call; pack constant B once
// with PackB and call SgemmPacked instead.
func Sgemm(pool *Pool, M, N, K int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	n := PackedBLen(K, N)
	buf := getFloats(n)
	pb := PackBInto(*buf, b, ldb, K, N, false)
	SgemmPacked(pool, M, a, lda, pb, c, ldc, accumulate)
	putFloats(buf)
}

// SgemmPacked computes C = A·B (or C += A·B) with B pre-packed: A is M×K
// (leading dimension lda), C is M×N (ldc), K and N come from pb.
func SgemmPacked(pool *Pool, M int, a []float32, lda int, pb *PackedB, c []float32, ldc int, accumulate bool) {
	SgemmPackedBuf(pool, M, a, lda, pb, c, ldc, accumulate, nil)
}

// SgemmPackedBuf is SgemmPacked with caller-owned memory for packing A:
// with len(abuf) >= M·K the call never allocates (nil: a pooled buffer).
func SgemmPackedBuf(pool *Pool, M int, a []float32, lda int, pb *PackedB, c []float32, ldc int, accumulate bool, abuf []float32) {
	SgemmPackedEpi(pool, M, a, lda, pb, c, ldc, accumulate, abuf, nil)
}

// Epilogue is the elementwise tail of a GEMM, applied by SgemmPackedEpi to
// each block of C (the rows of one M block × a group of column panels, at
// least 64 columns and about 64 KiB) as soon as its last K block is
// accumulated, while the block is still in cache, by the task that
// computed it:
//
//	C = Act(Relu(C + Bias + Z))
//
// each part optional. The zero Epilogue does nothing.
type Epilogue struct {
	// Bias is nil, one float (added to every element) or N floats (Bias[n]
	// added to column n of every row).
	Bias []float32
	// Z, when non-nil, is an M×N matrix with leading dimension LDZ added
	// element by element (a residual). It may not overlap C.
	Z   []float32
	LDZ int
	// Relu clamps negative results to 0 after the additions.
	Relu bool
	// Act, when non-nil, is applied in place to row segments of C (one
	// block wide) after everything else; it must be elementwise.
	Act func(y []float32)
}

// active reports whether e changes anything.
func (e *Epilogue) active() bool {
	return e != nil && (e.Bias != nil || e.Z != nil || e.Relu || e.Act != nil)
}

// apply runs the epilogue over rows [r0, r0+rows) × columns [n0, n0+nc)
// of c.
func (e *Epilogue) apply(c []float32, ldc, r0, rows, n0, nc int) {
	var cb []float32
	var sb float32
	switch len(e.Bias) {
	case 0:
	case 1:
		sb = e.Bias[0]
	default:
		cb = e.Bias[n0 : n0+nc]
	}
	for r := r0; r < r0+rows; r++ {
		row := c[r*ldc+n0 : r*ldc+n0+nc]
		if cb != nil {
			ScaleAdd(row, 1, cb)
		}
		if e.Z != nil {
			ScaleAdd(row, 1, e.Z[r*e.LDZ+n0:r*e.LDZ+n0+nc])
		}
		if sb != 0 || e.Relu {
			for i, v := range row {
				v += sb
				if e.Relu && v < 0 {
					v = 0
				}
				row[i] = v
			}
		}
		if e.Act != nil {
			e.Act(row)
		}
	}
}

// check panics unless e fits an M×N product.
func (e *Epilogue) check(M, N int) {
	if n := len(e.Bias); n > 1 && n < N {
		panic(fmt.Sprintf("kernels: epilogue bias has %d floats, want 1 or %d", n, N))
	}
	if e.Z != nil {
		checkMatrix("Z", e.Z, M, N, e.LDZ)
	}
}

// SgemmPackedEpi is SgemmPackedBuf followed by the epilogue epi (nil: none),
// fused: each block of C gets its epilogue right after its last K block,
// inside the same task, so there is no second pass over C and no second
// hand-off to the pool.
func SgemmPackedEpi(pool *Pool, M int, a []float32, lda int, pb *PackedB, c []float32, ldc int, accumulate bool, abuf []float32, epi *Epilogue) {
	K, N := pb.K, pb.N
	checkMatrix("A", a, M, K, lda)
	checkMatrix("C", c, M, N, ldc)
	hasEpi := epi.active()
	if hasEpi {
		epi.check(M, N)
	}
	if M == 0 || N == 0 {
		return
	}
	if K == 0 {
		if !accumulate {
			for i := 0; i < M; i++ {
				clear(c[i*ldc : i*ldc+N])
			}
		}
		if hasEpi {
			epi.apply(c, ldc, 0, M, 0, N)
		}
		return
	}
	isa := pb.isa
	if isa > CurrentISA() {
		isa = CurrentISA()
	}
	mr, nr := archShape(pb.isa)
	if nr != pb.nr {
		panic("kernels: PackedB panel width does not match its ISA")
	}
	j := jobPool.Get().(*sgemmJob)
	*j = sgemmJob{M: M, a: a, lda: lda, pb: pb, c: c, ldc: ldc, acc: accumulate, mr: mr, nr: nr, isa: isa,
		fullKernel: archKernel(isa, nr, mr)}
	if hasEpi {
		j.epi, j.hasEpi = *epi, true
	}
	// M blocks of at most mcBlock rows (a multiple of mr), then enough
	// column chunks that the pool can balance the load.
	mBlocks := (M + mcBlock - 1) / mcBlock
	j.mc = roundUp((M+mBlocks-1)/mBlocks, mr)
	mBlocks = (M + j.mc - 1) / j.mc
	np := pb.panels()
	chunks := 1
	if w := pool.Workers(); w > 1 {
		chunks = min(np, max(1, (6*w+mBlocks-1)/mBlocks))
	}
	j.chunk = (np + chunks - 1) / chunks
	j.nChunks = (np + j.chunk - 1) / j.chunk
	var pooled *[]float32
	if j.nChunks > 1 {
		// Several tasks share each M block: pack all of A once, in
		// parallel, instead of once per task.
		if len(abuf) >= M*K {
			j.apack = abuf[:M*K]
		} else {
			pooled = getFloats(M * K)
			j.apack = *pooled
		}
		j.packing = true
		pool.RunTasks(mBlocks*((K+pb.kc-1)/pb.kc), j)
		j.packing = false
	}
	pool.RunTasks(mBlocks*j.nChunks, j)
	if pooled != nil {
		putFloats(pooled)
	}
	*j = sgemmJob{}
	jobPool.Put(j)
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// sgemmJob is one SgemmPacked call; task t is M block t/nChunks times
// column chunk t%nChunks.
type sgemmJob struct {
	M      int
	a      []float32
	lda    int
	pb     *PackedB
	c      []float32
	ldc    int
	acc    bool
	mr, nr int
	isa    ISA

	mc             int
	chunk, nChunks int

	// apack holds all of A packed when several tasks share an M block:
	// the block (mb, kb) starts at mb*mc*K + k0*mcb. packing selects the
	// packing phase, whose task t is block (t/kBlocks, t%kBlocks).
	apack   []float32
	packing bool

	fullKernel func(k int, a, b, c *float32, ldc int, mask uint32, acc int) // mr-row kernel, or nil

	epi    Epilogue // applied to each tile after its last K block when hasEpi
	hasEpi bool
}

var jobPool = sync.Pool{New: func() any { return new(sgemmJob) }}

// sgemmScratch is one worker's packed A block and edge tile.
type sgemmScratch struct {
	a    []float32
	tile [14 * 32]float32
}

var scratchPool = sync.Pool{New: func() any { return new(sgemmScratch) }}

// Task runs one (M block, column chunk) of the product.
func (j *sgemmJob) Task(_, t int) {
	pb := j.pb
	K := pb.K
	if j.packing {
		kBlocks := (K + pb.kc - 1) / pb.kc
		mb, kb := t/kBlocks, t%kBlocks
		i0, k0 := mb*j.mc, kb*pb.kc
		mcb := min(j.mc, j.M-i0)
		packA(j.apack[i0*K+k0*mcb:], j.a, j.lda, i0, mcb, k0, min(pb.kc, K-k0), j.mr)
		return
	}
	mb, nc := t/j.nChunks, t%j.nChunks
	i0 := mb * j.mc
	mcb := min(j.mc, j.M-i0)
	p0 := nc * j.chunk
	p1 := min(p0+j.chunk, pb.panels())
	s := scratchPool.Get().(*sgemmScratch)
	if need := j.mc * min(pb.kc, K); j.apack == nil && cap(s.a) < need {
		s.a = make([]float32, need)
	}
	for kb := 0; kb*pb.kc < K; kb++ {
		k0 := kb * pb.kc
		kcb := min(pb.kc, K-k0)
		var apk []float32
		if j.apack != nil {
			apk = j.apack[i0*K+k0*mcb : i0*K+(k0+kcb)*mcb]
		} else {
			apk = s.a
			packA(apk, j.a, j.lda, i0, mcb, k0, kcb, j.mr)
		}
		acc := j.acc || kb > 0
		full := mcb / j.mr * j.mr // rows covered by whole mr-row tiles
		if !j.hasEpi || k0+kcb < K {
			for p := p0; p < p1; p++ {
				j.panelTiles(i0, mcb, full, p, kb, kcb, apk, acc, s)
			}
			continue
		}
		// The last K block with the epilogue: panels in groups, each
		// group's columns finished for the whole M block and then given
		// the epilogue while still in cache (L1/L2), in row segments long
		// enough to amortize the vector kernels' set-up.
		group := max((epiMinCols+j.nr-1)/j.nr, epiGroupBytes/(4*mcb*j.nr))
		for g0 := p0; g0 < p1; g0 += group {
			g1 := min(g0+group, p1)
			for p := g0; p < g1; p++ {
				j.panelTiles(i0, mcb, full, p, kb, kcb, apk, acc, s)
			}
			c0 := g0 * j.nr
			j.epi.apply(j.c, j.ldc, i0, mcb, c0, min(g1*j.nr, pb.N)-c0)
		}
	}
	scratchPool.Put(s)
}

// The epilogue runs over groups of column panels: at least epiMinCols
// columns (a row segment per vector-kernel call), and as many more as keep
// the group's block of C within epiGroupBytes.
const (
	epiMinCols    = 64
	epiGroupBytes = 64 << 10
)

// panelTiles computes rows [i0, i0+mcb) of column panel p for K block kb
// (kcb deep, A packed in apk); full is the number of rows covered by whole
// mr-row tiles.
func (j *sgemmJob) panelTiles(i0, mcb, full, p, kb, kcb int, apk []float32, acc bool, s *sgemmScratch) {
	pb := j.pb
	bp := pb.panel(kb, p)
	n0 := p * j.nr
	ncols := min(j.nr, pb.N-n0)
	ir := 0
	// Hot loop: whole tiles straight into the assembly kernel.
	if fn := j.fullKernel; fn != nil && (ncols == j.nr || j.isa == AVX512) && full > 0 {
		iacc := 0
		if acc {
			iacc = 1
		}
		mask := uint32(uint64(1)<<ncols - 1)
		cs := j.c[(i0+full-1)*j.ldc+n0 : (i0+full-1)*j.ldc+n0+ncols] // bounds check of the last row
		_ = cs
		for ; ir < full; ir += j.mr {
			fn(kcb, &apk[ir*kcb], &bp[0], &j.c[(i0+ir)*j.ldc+n0], j.ldc, mask, iacc)
		}
	}
	for ; ir < mcb; ir += j.mr {
		rows := min(j.mr, mcb-ir)
		ap := apk[ir*kcb : (ir+rows)*kcb]
		j.micro(rows, ncols, kcb, ap, bp, j.c[(i0+ir)*j.ldc+n0:], acc, s)
	}
}

// micro computes one rows×ncols tile of C with the best kernel for the job.
func (j *sgemmJob) micro(rows, ncols, kcb int, ap, bp, c []float32, acc bool, s *sgemmScratch) {
	fn := archKernel(j.isa, j.nr, rows)
	iacc := 0
	if acc {
		iacc = 1
	}
	switch {
	case fn == nil:
		genericKernel(rows, ncols, kcb, j.nr, ap, bp, c, j.ldc, acc)
	case j.isa == AVX512:
		// Masked loads and stores handle the column edge.
		fn(kcb, &ap[0], &bp[0], &c[0], j.ldc, uint32(uint64(1)<<ncols-1), iacc)
	case ncols == j.nr:
		fn(kcb, &ap[0], &bp[0], &c[0], j.ldc, 0, iacc)
	default:
		edgeTile(fn, rows, ncols, j.nr, kcb, ap, bp, c, j.ldc, acc, s.tile[:rows*j.nr])
	}
}

// edgeTile runs kernel fn, which has no column masks, for a rows×ncols
// tile at a column edge (ncols < nr): the full rows×nr tile into t, then
// its valid columns added to (acc) or copied into c (leading dimension
// ldc).
func edgeTile(fn func(k int, a, b, c *float32, ldc int, mask uint32, acc int), rows, ncols, nr, kcb int, ap, bp, c []float32, ldc int, acc bool, t []float32) {
	fn(kcb, &ap[0], &bp[0], &t[0], nr, 0, 0)
	for r := 0; r < rows; r++ {
		src := t[r*nr : r*nr+ncols]
		dst := c[r*ldc : r*ldc+ncols]
		if acc {
			for i, v := range src {
				dst[i] += v
			}
		} else {
			copy(dst, src)
		}
	}
}

// packA packs rows [i0, i0+mcb) × columns [k0, k0+kcb) of A into dst as
// panels of mr rows (the last may be shorter), each stored k-major:
// element (r, kk) of the panel starting at row ir is dst[ir*kcb+kk*rows+r].
func packA(dst, a []float32, lda, i0, mcb, k0, kcb, mr int) {
	for ir := 0; ir < mcb; ir += mr {
		rows := min(mr, mcb-ir)
		packPanel(dst[ir*kcb:(ir+rows)*kcb], a[(i0+ir)*lda+k0:], lda, rows, kcb) // vec_pack*.go
	}
}

// floatBufs recycles the B packing buffers of Sgemm.
var floatBufs sync.Pool

func getFloats(n int) *[]float32 {
	p, ok := floatBufs.Get().(*[]float32)
	if ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	if ok {
		floatBufs.Put(p) // too small for this call; keep it for others
	}
	b := make([]float32, n)
	return &b
}

func putFloats(p *[]float32) { floatBufs.Put(p) }
