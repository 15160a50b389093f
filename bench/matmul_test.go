package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

// matmulSizes are M×N×K, the sizes of bench/gemm's BenchmarkSgemm and of
// the numpy/OpenBLAS peer (bench/numpy/sgemm.py).
var matmulSizes = [][3]int{
	{256, 256, 256}, {1024, 1024, 1024},
	{1, 4096, 4096}, {16, 4096, 4096}, {512, 4096, 4096},
}

func uniformTensor(shape []int64, seed uint64) *ir.Tensor {
	rng := rand.New(rand.NewPCG(seed, 5))
	t := ir.NewTensor(ir.Float32, shape)
	f := t.Float32s()
	for i := range f {
		f[i] = float32(2*rng.Float64() - 1)
	}
	return t
}

// BenchmarkMatMulGraph times the whole weft path for one sgemm: a graph
// Y = MatMul(A, B) with B a constant weight [K,N], compiled by weft.New at
// -O2 with Options.Threads = 1 and 2 (GOMAXPROCS set to match), run with
// Model.RunInto, and reports GFLOP/s.
func BenchmarkMatMulGraph(b *testing.B) {
	for _, sh := range matmulSizes {
		M, N, K := sh[0], sh[1], sh[2]
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/t%d", M, N, K, threads), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
				bld := ir.NewBuilder("matmul")
				a := bld.Input("a", ir.Float32, ir.S(int64(M), int64(K)))
				w := bld.Const("w", uniformTensor([]int64{int64(K), int64(N)}, 2))
				bld.Output("y", bld.Op("MatMul", a, w))
				g, err := bld.Build()
				if err != nil {
					b.Fatal(err)
				}
				opts := weft.DefaultOptions()
				opts.Threads = threads
				m, err := weft.New(g, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				in := []*ir.Tensor{uniformTensor([]int64{int64(M), int64(K)}, 1)}
				out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{int64(M), int64(N)})}
				ctx := context.Background()
				if err := m.RunInto(ctx, in, out); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if err := m.RunInto(ctx, in, out); err != nil {
						b.Fatal(err)
					}
				}
				flops := 2 * float64(M) * float64(N) * float64(K) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
