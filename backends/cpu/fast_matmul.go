package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerIntoFirst(buildFastMatMul, "MatMul")
	registerIntoFirst(buildFastFusedMatMul, "FusedMatMul")
}

// minFastFlops is the smallest product (M·N·K) the SGEMM path takes; below
// it the plain loop is as fast and the pool's hand-off is pure overhead.
var minFastFlops = 4096

// buildFastMatMul handles float32 MatMul with SGEMM.
func buildFastMatMul(s *nodeSpec) intoKernel {
	if len(s.in) != 2 || len(s.out) != 1 {
		return nil
	}
	return fastMatMul(s, s.in[0], s.in[1], arg{}, nil, false)
}

// buildFastFusedMatMul handles float32 FusedMatMul: SGEMM with the bias
// and activation epilogue fused into it (kernels.Epilogue, per tile). The bias must be [N] (after dropping leading
// 1s), a scalar, or absent.
func buildFastFusedMatMul(s *nodeSpec) intoKernel {
	if len(s.in) < 2 || len(s.in) > 3 || len(s.out) != 1 {
		return nil
	}
	act, ok := fastAct(s.n)
	if !ok {
		return nil
	}
	relu := s.n.AttrString("activation", "") == "Relu"
	if relu {
		act = nil // fused into the epilogue's pass
	}
	return fastMatMul(s, s.in[0], s.in[1], s.input(2), act, relu)
}

// fastMatMul builds Y = act(A·B + bias). A 2-D B (constant: packed here,
// once) multiplies all rows of A at once; a batched B loops over the
// broadcast batch with one SGEMM per matrix.
func fastMatMul(s *nodeSpec, a, b, bias arg, act func([]float32), relu bool) intoKernel {
	y := s.out[0]
	if !a.ok || !b.ok || !allF32(a, b, bias, y) || len(a.shape) < 1 || len(b.shape) < 2 {
		return nil
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	ra, rb := len(as), len(bs)
	M, K, N := int(as[ra-2]), int(as[ra-1]), int(bs[rb-1])
	if int(bs[rb-2]) != K || M*N*K < minFastFlops {
		return nil
	}
	batch, err := ref.BroadcastShapes(as[:ra-2], bs[:rb-2])
	if err != nil {
		return nil
	}
	want := append([]int64{}, batch...)
	if len(a.shape) > 1 {
		want = append(want, int64(M))
	}
	want = append(want, int64(N))
	if !slices.Equal(want, y.shape) {
		return nil
	}
	// The bias: a row vector [N] (leading 1s allowed) or a scalar.
	var colBias, scalarBias bool
	if bias.ok {
		bn := numel(bias.shape)
		lead := true
		for i, d := range bias.shape {
			if i < len(bias.shape)-1 && d != 1 {
				lead = false
			}
		}
		switch {
		case len(bias.shape) > len(y.shape) || !lead:
			return nil
		case bn == 1:
			scalarBias = true
		case bn == N && bias.shape[len(bias.shape)-1] == int64(N):
			colBias = true
		default:
			return nil
		}
	}
	pool := s.pool
	rowsTotal := numel(y.shape) / N
	if rowsTotal*N*K < serialMACs {
		pool = nil // a hand-off to the workers costs more than it saves
	}
	// The epilogue runs inside the GEMM, per tile (kernels.Epilogue).
	hasEpi := bias.ok || act != nil || relu
	epiOf := func(in []*ir.Tensor) kernels.Epilogue {
		e := kernels.Epilogue{Act: act, Relu: relu}
		if colBias {
			e.Bias = in[2].Float32s()[:N]
		} else if scalarBias {
			e.Bias = in[2].Float32s()[:1]
		}
		return e
	}
	var l layout
	if rb == 2 {
		// Every row of A (batch dims flattened) times one B.
		rows := numel(a.shape) / K
		if b.c != nil {
			pb := sharedPackB(b.c.Float32s(), N, K, N, false)
			aOff := l.add(rows * K)
			s.scratch = l.bytes()
			return func(in, out []*ir.Tensor, scratch []byte) error {
				e := epiOf(in)
				kernels.SgemmPackedEpi(pool, rows, in[0].Float32s(), K, pb, out[0].Float32s(), N, false, region(scratch, aOff, rows*K), &e)
				return nil
			}
		}
		pbOff, aOff := gemmLayout(&l, rows, N, K)
		s.scratch = l.bytes()
		return func(in, out []*ir.Tensor, scratch []byte) error {
			e := epiOf(in)
			sgemmEpi(pool, rows, N, K, in[0].Float32s(), in[1].Float32s(), out[0].Float32s(), scratch, pbOff, aOff, &e)
			return nil
		}
	}
	nb := numel(batch)
	aOff, bOff := make([]int, nb), make([]int, nb)
	it := ref.NewIndexer(batch, ref.BroadcastStrides(as[:ra-2], batch), ref.BroadcastStrides(bs[:rb-2], batch))
	for i := 0; i < nb; i++ {
		aOff[i], bOff[i] = int(it.Offsets[0])*M*K, int(it.Offsets[1])*K*N
		it.Next()
	}
	if workers := pool.Workers(); nb >= workers && workers > 1 && M*N*K <= 1<<21 {
		// Many small products (attention scores): one batch per task,
		// each worker packing into its own scratch.
		pbLen := (kernels.PackedBLen(K, N) + 15) &^ 15
		s.scratch = workers * pbLen * 4
		return func(in, out []*ir.Tensor, scratch []byte) error {
			j := bmmJobs.Get().(*bmmJob)
			pbs := j.pbs
			if len(pbs) < workers {
				pbs = make([]kernels.PackedB, workers)
			}
			*j = bmmJob{M: M, N: N, K: K, a: in[0].Float32s(), b: in[1].Float32s(), y: out[0].Float32s(), aOff: aOff, bOff: bOff,
				buf: region(scratch, 0, workers*pbLen), pbLen: pbLen, pbs: pbs}
			if hasEpi {
				j.epi = epiOf(in)
			}
			pool.RunTasks(nb, j)
			*j = bmmJob{pbs: pbs}
			bmmJobs.Put(j)
			return nil
		}
	}
	pbOff, apOff := gemmLayout(&l, M, N, K)
	s.scratch = l.bytes()
	return func(in, out []*ir.Tensor, scratch []byte) error {
		av, bv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		e := epiOf(in)
		for bi := range aOff {
			sgemmEpi(pool, M, N, K, av[aOff[bi]:aOff[bi]+M*K], bv[bOff[bi]:bOff[bi]+K*N], yv[bi*M*N:(bi+1)*M*N], scratch, pbOff, apOff, &e)
		}
		return nil
	}
}

// bmmJob is a batched MatMul with one task per batch.
type bmmJob struct {
	M, N, K    int
	a, b, y    []float32
	aOff, bOff []int
	buf        []float32 // workers × pbLen floats
	pbLen      int
	pbs        []kernels.PackedB // one per worker
	epi        kernels.Epilogue  // fused into each batch's SGEMM
}

var bmmJobs = sync.Pool{New: func() any { return new(bmmJob) }}

// Task multiplies batch bi on worker w.
func (j *bmmJob) Task(w, bi int) {
	M, N, K := j.M, j.N, j.K
	pb := &j.pbs[w]
	pb.Pack(j.buf[w*j.pbLen:(w+1)*j.pbLen], j.b[j.bOff[bi]:j.bOff[bi]+K*N], N, K, N, false)
	kernels.SgemmPackedEpi(nil, M, j.a[j.aOff[bi]:j.aOff[bi]+M*K], K, pb, j.y[bi*M*N:(bi+1)*M*N], N, false, nil, &j.epi)
}
