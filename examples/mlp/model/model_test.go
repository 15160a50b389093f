package model

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/conform"
	"github.com/weftrt/weft/ir"
)

func run(t *testing.T, opt int) *ir.Tensor {
	t.Helper()
	g, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	opts := weft.DefaultOptions()
	opts.OptLevel = opt
	m, err := weft.New(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	outs, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": Input()})
	if err != nil {
		t.Fatal(err)
	}
	return outs["probs"]
}

func TestMLP(t *testing.T) {
	p0, p2 := run(t, 0), run(t, 2)
	if p2 == nil || p2.DType != ir.Float32 || len(p2.Shape) != 2 || p2.Shape[0] != Batch || p2.Shape[1] != Out {
		t.Fatalf("probs = %v, want f32[%d %d]", p2, Batch, Out)
	}
	// Softmax rows are distributions.
	for r := 0; r < Batch; r++ {
		sum := 0.0
		for c := 0; c < Out; c++ {
			p := p2.Float64(r*Out + c)
			if p <= 0 || p >= 1 {
				t.Errorf("probs[%d,%d] = %v", r, c, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("row %d sums to %v", r, sum)
		}
	}
	// -O0 and -O2 must agree.
	if err := conform.Compare(p0, p2, conform.Tolerance{RTol: 1e-5, ATol: 1e-7}); err != nil {
		t.Errorf("-O0 vs -O2: %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	g1, _ := Build()
	g2, _ := Build()
	if !bytes.Equal(g1.Consts[0].Const.Data, g2.Consts[0].Const.Data) || !bytes.Equal(Input().Data, Input().Data) {
		t.Error("weights or input differ between builds")
	}
}
