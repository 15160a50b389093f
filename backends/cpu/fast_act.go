package cpu

import (
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// fastAct returns the epilogue activation of a fused node: fusedAct's,
// except that the exp/erf-based activations run the vector kernels
// (kernels.GeluErf, GeluTanh, SiLU, Sigmoid: float32, AVX-512/AVX2 where
// the machine has them, within a few 1e-7 of the float64 formulas; see
// kernels/vec.go) instead of float64 math per element.
func fastAct(n *ir.Node) (func(y []float32), bool) {
	if f := vecAct(n.AttrString("activation", "")); f != nil {
		return f, true
	}
	return fusedAct(n)
}

// vecAct returns the vector kernel of an activation name as FusedMatMul,
// FusedConv and the chains spell it, or nil.
func vecAct(name string) func(y []float32) {
	switch name {
	case "Gelu":
		return kernels.GeluErf
	case "GeluTanh":
		return kernels.GeluTanh
	case "SiLU":
		return kernels.SiLU
	case "Sigmoid":
		return kernels.Sigmoid
	}
	return nil
}
