package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// toHalf returns x rounded to dt (f16 or bf16).
func toHalf(x *ir.Tensor, dt ir.DType) *ir.Tensor {
	out := ir.NewTensor(dt, x.Shape)
	for i := 0; i < x.Len(); i++ {
		out.SetFloat64(i, x.Float64(i))
	}
	return out
}

// TestFastHalfQMatMul checks QMatMul with an F16 or BF16 weight against the
// reference kernel at every ISA level, for decode (one row), prefill
// (several rows, batched leading dims) and K with a tail.
func TestFastHalfQMatMul(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
			for _, sh := range []struct {
				x []int64
				n int64
			}{{[]int64{1, 96}, 37}, {[]int64{2, 7, 96}, 37}, {[]int64{33, 100}, 70}, {[]int64{1, 1, 512}, 300}, {[]int64{5}, 3}} {
				t.Run(fmt.Sprint(dt, sh.x, sh.n), func(t *testing.T) {
					k := sh.x[len(sh.x)-1]
					w := toHalf(randF32(r, sh.n, k), dt)
					x := randF32(r, sh.x...)
					n := nodeN("QMatMul", nil, []*ir.Tensor{x, w}, 1)
					want := refRun(t, n, []*ir.Tensor{x, w})[0]
					out := ir.NewTensor(ir.Float32, want.Shape)
					spec := &nodeSpec{n: n, pool: poolFor(2), out: []arg{{dt: ir.Float32, shape: want.Shape, ok: true}},
						in: []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: dt, shape: w.Shape, ok: true, c: w}}}
					kern := buildFastHalfQMatMul(spec)
					require.NotNil(t, kern)
					require.NoError(t, kern([]*ir.Tensor{x, w}, []*ir.Tensor{out}, make([]byte, spec.scratch)))
					requireClose(t, want, out, 1e-5)
				})
			}
		}
	})
}

// The half builder declines what it does not cover, leaving it to others.
func TestFastHalfQMatMulDeclines(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	x := randF32(r, 2, 64)
	for name, in := range map[string][]*ir.Tensor{
		"q8_0 weight":   {x, ir.NewTensor(ir.Q8_0, []int64{4, 64})},
		"f32 weight":    {x, ir.NewTensor(ir.Float32, []int64{4, 64})},
		"with scales":   {x, ir.NewTensor(ir.Float16, []int64{4, 64}), randF32(r, 4)},
		"f16 input":     {toHalf(x, ir.Float16), ir.NewTensor(ir.Float16, []int64{4, 64})},
		"inner differs": {x, ir.NewTensor(ir.Float16, []int64{4, 63})},
	} {
		t.Run(name, func(t *testing.T) {
			var args []arg
			for i, v := range in {
				a := arg{dt: v.DType, shape: v.Shape, ok: true}
				if i > 0 {
					a.c = v
				}
				args = append(args, a)
			}
			spec := &nodeSpec{n: nodeN("QMatMul", nil, in, 1), pool: poolFor(2),
				out: []arg{{dt: ir.Float32, shape: []int64{2, 4}, ok: true}}, in: args}
			require.Nil(t, buildFastHalfQMatMul(spec))
		})
	}
}

// A warm F16 QMatMul allocates nothing per run at any ISA level, at one row
// (GEMV), a few (dot-product kernels) and many (the packed GEMM's
// activation buffer comes from a pool).
func TestFastHalfQMatMulAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	forEachISA(t, testHalfAllocs)
}

func testHalfAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, m := range []int64{1, 4, 64} {
		w := toHalf(randF32(r, 96, 128), ir.Float16)
		x := randF32(r, m, 128)
		n := nodeN("QMatMul", nil, []*ir.Tensor{x, w}, 1)
		out := ir.NewTensor(ir.Float32, []int64{m, 96})
		spec := &nodeSpec{n: n, pool: poolFor(2), out: []arg{{dt: ir.Float32, shape: out.Shape, ok: true}},
			in: []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Float16, shape: w.Shape, ok: true, c: w}}}
		kern := buildFastHalfQMatMul(spec)
		require.NotNil(t, kern)
		in, outs, scratch := []*ir.Tensor{x, w}, []*ir.Tensor{out}, make([]byte, spec.scratch)
		require.NoError(t, kern(in, outs, scratch))
		allocs := testing.AllocsPerRun(20, func() {
			if err := kern(in, outs, scratch); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "M=%d", m)
	}
}
