package recurrent

import (
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("RNN", rnnKernel)
	ref.Register("GRU", gruKernel)
	ref.Register("LSTM", lstmKernel)
}

// rnnKernel implements the simple RNN: Ht = f(Xt·Wᵀ + Ht-1·Rᵀ + Wb + Rb),
// f defaulting to Tanh.
func rnnKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	l, err := parseLayer(n, in, 1, false)
	if err != nil {
		return nil, err
	}
	acts, err := parseActivations(n, []string{"Tanh"}, l.numDir)
	if err != nil {
		return nil, err
	}
	return l.run(len(n.Outputs), func(d int, x, h, _ []float64) ([]float64, []float64) {
		f := acts[d][0]
		h2 := make([]float64, l.hidden)
		for j := range h2 {
			h2[j] = f.apply(l.clamp(l.wx(d, 0, j, x) + l.rh(d, 0, j, h)))
		}
		return h2, nil
	})
}

// gruKernel implements GRU with gate blocks ordered z, r, h in W, R and B:
//
//	zt = f(Xt·Wzᵀ + Ht-1·Rzᵀ + Wbz + Rbz)
//	rt = f(Xt·Wrᵀ + Ht-1·Rrᵀ + Wbr + Rbr)
//	ht = g(Xt·Whᵀ + (rt ⊙ Ht-1)·Rhᵀ + Rbh + Wbh)      linear_before_reset = 0
//	ht = g(Xt·Whᵀ + rt ⊙ (Ht-1·Rhᵀ + Rbh) + Wbh)      linear_before_reset != 0
//	Ht = (1 - zt) ⊙ ht + zt ⊙ Ht-1
//
// with f, g defaulting to Sigmoid, Tanh.
func gruKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	l, err := parseLayer(n, in, 3, false)
	if err != nil {
		return nil, err
	}
	acts, err := parseActivations(n, []string{"Sigmoid", "Tanh"}, l.numDir)
	if err != nil {
		return nil, err
	}
	lbr := n.AttrInt("linear_before_reset", 0) != 0
	return l.run(len(n.Outputs), func(d int, x, h, _ []float64) ([]float64, []float64) {
		f, g := acts[d][0], acts[d][1]
		z := make([]float64, l.hidden)
		r := make([]float64, l.hidden)
		for j := range z {
			z[j] = f.apply(l.clamp(l.wx(d, 0, j, x) + l.rh(d, 0, j, h)))
			r[j] = f.apply(l.clamp(l.wx(d, 1, j, x) + l.rh(d, 1, j, h)))
		}
		rh := make([]float64, l.hidden) // rt ⊙ Ht-1
		for j := range rh {
			rh[j] = r[j] * h[j]
		}
		h2 := make([]float64, l.hidden)
		for j := range h2 {
			var pre float64
			if lbr {
				pre = l.wx(d, 2, j, x) + r[j]*l.rh(d, 2, j, h)
			} else {
				pre = l.wx(d, 2, j, x) + l.rh(d, 2, j, rh)
			}
			hh := g.apply(l.clamp(pre))
			h2[j] = (1-z[j])*hh + z[j]*h[j]
		}
		return h2, nil
	})
}
