package recurrent

import (
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// lstmKernel implements LSTM with gate blocks ordered i, o, f, c in W, R
// and B, and peepholes P ordered i, o, f:
//
//	it = f(Xt·Wiᵀ + Ht-1·Riᵀ + Pi ⊙ Ct-1 + Wbi + Rbi)
//	ft = f(Xt·Wfᵀ + Ht-1·Rfᵀ + Pf ⊙ Ct-1 + Wbf + Rbf)   (1 - it with input_forget)
//	ct = g(Xt·Wcᵀ + Ht-1·Rcᵀ + Wbc + Rbc)
//	Ct = ft ⊙ Ct-1 + it ⊙ ct
//	ot = f(Xt·Woᵀ + Ht-1·Roᵀ + Po ⊙ Ct + Wbo + Rbo)
//	Ht = ot ⊙ h(Ct)
//
// with f, g, h defaulting to Sigmoid, Tanh, Tanh. clip bounds the inputs of
// the gate activations f and g; like ONNX Runtime, it leaves Ct alone.
func lstmKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	l, err := parseLayer(n, in, 4, true)
	if err != nil {
		return nil, err
	}
	acts, err := parseActivations(n, []string{"Sigmoid", "Tanh", "Tanh"}, l.numDir)
	if err != nil {
		return nil, err
	}
	coupled := n.AttrInt("input_forget", 0) != 0
	const gateI, gateO, gateF, gateC = 0, 1, 2, 3
	return l.run(len(n.Outputs), func(d int, x, h, c []float64) ([]float64, []float64) {
		f, g, hAct := acts[d][0], acts[d][1], acts[d][2]
		H := l.hidden
		pi, po, pf := l.p[d][:H], l.p[d][H:2*H], l.p[d][2*H:]
		h2 := make([]float64, H)
		c2 := make([]float64, H)
		for j := 0; j < H; j++ {
			it := f.apply(l.clamp(l.wx(d, gateI, j, x) + l.rh(d, gateI, j, h) + pi[j]*c[j]))
			var ft float64
			if coupled {
				ft = 1 - it
			} else {
				ft = f.apply(l.clamp(l.wx(d, gateF, j, x) + l.rh(d, gateF, j, h) + pf[j]*c[j]))
			}
			ct := g.apply(l.clamp(l.wx(d, gateC, j, x) + l.rh(d, gateC, j, h)))
			c2[j] = ft*c[j] + it*ct
			ot := f.apply(l.clamp(l.wx(d, gateO, j, x) + l.rh(d, gateO, j, h) + po[j]*c2[j]))
			h2[j] = ot * hAct.apply(c2[j])
		}
		return h2, c2
	})
}
