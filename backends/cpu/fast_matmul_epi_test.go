package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

// TestFastFusedMatMulPaths runs FusedMatMul's fused epilogue through every
// SGEMM path of fastMatMul (constant 2-D B, runtime 2-D B, batched B one
// task per batch, batched B one SGEMM per batch) against the reference.
func TestFastFusedMatMulPaths(t *testing.T) {
	cases := []struct {
		name   string
		a, b   []int64
		constB bool
	}{
		{"constB", []int64{3, 29, 70}, []int64{70, 77}, true},
		{"runtimeB", []int64{3, 29, 70}, []int64{70, 77}, false},
		{"batchedSmall", []int64{4, 17, 33}, []int64{4, 33, 40}, false},
		{"batchedBig", []int64{2, 150, 140}, []int64{2, 140, 130}, false},
	}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		for _, c := range cases {
			n := c.b[len(c.b)-1]
			for _, act := range []string{"", "Relu", "Gelu", "GeluTanh", "SiLU", "Sigmoid", "Clip"} {
				for _, bias := range [][]int64{nil, {n}, {1, n}, {1}} {
					t.Run(fmt.Sprint(c.name, act, bias), func(t *testing.T) {
						in := []*ir.Tensor{f(c.a...), f(c.b...)}
						if bias != nil {
							in = append(in, f(bias...))
						}
						runFast(t, buildFastFusedMatMul, intoCase{op: "FusedMatMul", attrs: actAttrs(act), in: in, consts: []bool{false, c.constB, true}})
					})
				}
			}
		}
	})
}

// TestFastFusedMatMulNoAlloc: a run of the fused kernel allocates nothing.
func TestFastFusedMatMulNoAlloc(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	in := []*ir.Tensor{randF32(r, 64, 128), randF32(r, 128, 96), randF32(r, 96)}
	n := nodeN("FusedMatMul", actAttrs("Gelu"), in, 1)
	pool := kernels.NewPool(2)
	defer pool.Close()
	spec := &nodeSpec{n: n, pool: pool, out: []arg{{dt: ir.Float32, shape: []int64{64, 96}, ok: true}}}
	for i, x := range in {
		a := arg{dt: x.DType, shape: x.Shape, ok: true}
		if i > 0 {
			a.c = x // constant weight and bias
		}
		spec.in = append(spec.in, a)
	}
	k := buildFastFusedMatMul(spec)
	require.NotNil(t, k)
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{64, 96})}
	scratch := ir.AlignedBytes(spec.scratch)
	require.NoError(t, k(in, out, scratch))
	if a := testing.AllocsPerRun(20, func() { _ = k(in, out, scratch) }); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}
