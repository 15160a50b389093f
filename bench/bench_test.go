package bench

import (
	"context"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/mlp/model"
	"github.com/weftrt/weft/ir"
)

// compileMLP builds and compiles the example MLP at the given -O level.
func compileMLP(b *testing.B, opt int) *weft.Model {
	b.Helper()
	g, err := model.Build()
	if err != nil {
		b.Fatal(err)
	}
	opts := weft.DefaultOptions()
	opts.OptLevel = opt
	m, err := weft.New(g, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// BenchmarkMLPRun measures one Model.Run of the example MLP (batch 4),
// at -O0 and -O2.
func BenchmarkMLPRun(b *testing.B) {
	for _, opt := range []int{0, 2} {
		b.Run(map[int]string{0: "O0", 2: "O2"}[opt], func(b *testing.B) {
			m := compileMLP(b, opt)
			in := map[string]*ir.Tensor{"x": model.Input()}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Run(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMLPRunParallel measures Model.Run from several goroutines at
// once on one model (Run is safe for concurrent use).
func BenchmarkMLPRunParallel(b *testing.B) {
	m := compileMLP(b, 2)
	in := map[string]*ir.Tensor{"x": model.Input()}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := m.Run(ctx, in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkMLPCompile measures building and compiling the example (-O2).
func BenchmarkMLPCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		g, err := model.Build()
		if err != nil {
			b.Fatal(err)
		}
		m, err := weft.New(g, weft.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}
