package cpu_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/zoo"
)

// BenchmarkZoo times Model.RunInto of the zoo's benchmark models at -O2
// with 1 and 2 threads (go test -bench Zoo ./backends/cpu; -v also logs
// the time per op type, the mean of tracedRuns traced runs).
func BenchmarkZoo(b *testing.B) {
	for _, name := range []string{"resnet18", "resnet50", "bert-4l", "gpt-6l"} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", name, threads), func(b *testing.B) {
				g, err := zoo.Build(name, zoo.Options{Seed: 1})
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
				in, out := benchIO(b, m)
				ctx := context.Background()
				if err := m.RunInto(ctx, in, out); err != nil {
					b.Fatal(err)
				}
				tr := runtime.NewTrace()
				for range tracedRuns {
					if err := m.RunInto(backends.WithTracer(ctx, tr), in, out); err != nil {
						b.Fatal(err)
					}
				}
				logOps(b, tr, tracedRuns)
				for b.Loop() {
					if err := m.RunInto(ctx, in, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchIO makes inputs (floats 0.5, integers 1: valid token ids and an
// all-ones mask) and output tensors of the model's static shapes.
func benchIO(b *testing.B, m *weft.Model) (in, out []*ir.Tensor) {
	for _, v := range m.Inputs() {
		t := ir.NewTensor(v.DType, v.Shape.Ints())
		for i := range int(ir.NumElements(t.Shape)) {
			switch {
			case v.DType.IsFloat():
				t.SetFloat64(i, 0.5)
			default:
				t.SetFloat64(i, 1)
			}
		}
		in = append(in, t)
	}
	for _, v := range m.Outputs() {
		if !v.Shape.Static() {
			b.Skipf("output %v has no static shape", v)
		}
		out = append(out, ir.NewTensor(v.DType, v.Shape.Ints()))
	}
	return in, out
}

// logOps logs the time per op type of one traced run, largest first.
// tracedRuns is how many traced runs logOps averages over.
const tracedRuns = 10

func logOps(b *testing.B, tr *runtime.Trace, runs int) {
	per := map[string]time.Duration{}
	for _, s := range tr.Spans() {
		if s.Kind == backends.SpanNode {
			per[s.Node.Op] += s.End.Sub(s.Start)
		}
	}
	ops := make([]string, 0, len(per))
	for op := range per {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return per[ops[i]] > per[ops[j]] })
	line := ""
	for _, op := range ops {
		line += fmt.Sprintf(" %s %.2fms", op, float64(per[op].Microseconds())/1000/float64(runs))
	}
	b.Log("per op:" + line)
}

// BenchmarkConvGEMMShapes times the SGEMMs of ResNet's 3×3 convolutions
// (M = out channels, N = output pixels, K = in channels·9) on one thread.
func BenchmarkConvGEMMShapes(b *testing.B) {
	for _, s := range [][3]int{{64, 3136, 576}, {128, 784, 1152}, {256, 196, 2304}, {512, 49, 4608}, {196, 256, 2304}, {49, 512, 4608}} {
		M, N, K := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", M, N, K), func(b *testing.B) {
			a, bb, c := make([]float32, M*K), make([]float32, K*N), make([]float32, M*N)
			pb := kernels.PackB(bb, N, K, N)
			b.Run("packedB", func(b *testing.B) {
				for b.Loop() {
					kernels.SgemmPacked(nil, M, a, K, pb, c, N, false)
				}
				b.ReportMetric(float64(2*M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run("Sgemm", func(b *testing.B) {
				for b.Loop() {
					kernels.Sgemm(nil, M, N, K, a, K, bb, N, c, N, false)
				}
				b.ReportMetric(float64(2*M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkBERTGEMMShapes times BERT-base's projections at sequence 128
// with packed weights on a 2-worker pool.
func BenchmarkBERTGEMMShapes(b *testing.B) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	for _, s := range [][3]int{{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}} {
		M, N, K := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", M, N, K), func(b *testing.B) {
			a, bb, c := make([]float32, M*K), make([]float32, K*N), make([]float32, M*N)
			pb := kernels.PackB(bb, N, K, N)
			for b.Loop() {
				kernels.SgemmPacked(pool, M, a, K, pb, c, N, false)
			}
			b.ReportMetric(float64(2*M*N*K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
