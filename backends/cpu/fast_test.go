package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// runFast builds n with builder b alone (so a decline fails the test) and
// compares its result with the reference kernel's.
func runFast(t *testing.T, b intoBuilder, tc intoCase) {
	t.Helper()
	n := nodeN(tc.op, tc.attrs, tc.in, 1)
	want := refRun(t, n, tc.in)
	out := []*ir.Tensor{ir.NewTensor(want[0].DType, want[0].Shape)}
	for j := range out[0].Data {
		out[0].Data[j] = 0xAB
	}
	spec := &nodeSpec{n: n, pool: kernels.NewPool(3)}
	defer spec.pool.Close()
	for i, x := range tc.in {
		if x == nil {
			spec.in = append(spec.in, arg{})
			continue
		}
		a := arg{dt: x.DType, shape: x.Shape, ok: true}
		if i < len(tc.consts) && tc.consts[i] {
			a.c = x
		}
		spec.in = append(spec.in, a)
	}
	spec.out = []arg{{dt: out[0].DType, shape: out[0].Shape, ok: true}}
	k := b(spec)
	require.NotNil(t, k, "the fast kernel declined")
	scratch := ir.AlignedBytes(spec.scratch)
	for i := range scratch {
		scratch[i] = 0xCD
	}
	require.NoError(t, k(tc.in, out, scratch))
	tol := tc.tol
	if tol == 0 {
		tol = 1e-4
	}
	requireClose(t, want[0], out[0], tol)
}

// forEachISA runs f at every ISA level this machine has.
func forEachISA(t *testing.T, f func(t *testing.T)) { eachISA(t, false, f) }

// forEachFloatISA is forEachISA for tests of float kernels only: it
// leaves out the arm64 levels above NEON, which add integer dot products
// (SDOT, SMMLA: the quantized kernels, tested at every level with
// forEachISA) and run NEON's float kernels, so that an emulated arm64 run
// (qemu-user, `make arm64test`) does not repeat the same float work
// three times.
func forEachFloatISA(t *testing.T, f func(t *testing.T)) { eachISA(t, true, f) }

// eachISA runs f at every ISA level, without the integer-only arm64
// levels where floatOnly is set.
func eachISA(t *testing.T, floatOnly bool, f func(t *testing.T)) {
	prev := kernels.CurrentISA()
	defer kernels.SetISA(prev.String())
	for _, isa := range kernels.Levels() {
		if floatOnly && (isa == kernels.DotProd || isa == kernels.I8MM) {
			continue
		}
		if _, err := kernels.SetISA(isa.String()); err != nil {
			t.Fatal(err)
		}
		t.Run(isa.String(), f)
	}
}

var allActs = []string{"", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "GeluTanh", "SiLU", "Clip"}

func actAttrs(act string) []ir.AttrOption {
	if act == "" {
		return nil
	}
	as := []ir.AttrOption{ir.Str("activation", act)}
	switch act {
	case "LeakyRelu":
		as = append(as, ir.Float("activation_alpha", 0.1))
	case "Clip":
		as = append(as, ir.Float("activation_alpha", -0.5), ir.Float("activation_beta", 0.7))
	}
	return as
}

func TestFastMatMul(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		cases := []struct {
			a, b   []int64
			constB bool
		}{
			{[]int64{37, 65}, []int64{65, 33}, true},
			{[]int64{1, 129}, []int64{129, 77}, true},             // GEMV
			{[]int64{2, 3, 17, 40}, []int64{40, 50}, true},        // batch dims flattened
			{[]int64{300, 200}, []int64{200, 45}, false},          // non-constant B
			{[]int64{64}, []int64{64, 96}, true},                  // 1-D A
			{[]int64{2, 5, 19, 33}, []int64{2, 5, 33, 21}, false}, // attention-like
			{[]int64{3, 1, 20, 30}, []int64{4, 30, 17}, false},    // broadcast batch
			{[]int64{2, 40, 30}, []int64{2, 30, 50}, false},       // fewer batches than workers
		}
		for _, c := range cases {
			t.Run(fmt.Sprint(c.a, c.b), func(t *testing.T) {
				runFast(t, buildFastMatMul, intoCase{op: "MatMul", in: []*ir.Tensor{f(c.a...), f(c.b...)}, consts: []bool{false, c.constB}})
			})
		}
	})
}

func TestFastFusedMatMul(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		for _, act := range allActs {
			for _, bias := range [][]int64{nil, {45}, {1, 45}, {1}} {
				t.Run(fmt.Sprint(act, bias), func(t *testing.T) {
					in := []*ir.Tensor{f(2, 23, 67), f(67, 45)}
					if bias != nil {
						in = append(in, f(bias...))
					}
					runFast(t, buildFastFusedMatMul, intoCase{op: "FusedMatMul", attrs: actAttrs(act), in: in, consts: []bool{false, true, true}})
				})
			}
		}
	})
}

func TestFastConv(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		cases := []struct {
			x, w  []int64
			attrs []ir.AttrOption
		}{
			{[]int64{1, 5, 13, 11}, []int64{7, 5, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
			{[]int64{2, 16, 9, 9}, []int64{24, 16, 1, 1}, nil}, // pointwise
			{[]int64{1, 3, 29, 31}, []int64{17, 3, 7, 7}, []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}},
			{[]int64{1, 8, 15, 15}, []int64{33, 8, 3, 3}, []ir.AttrOption{ir.Ints("dilations", 2, 2), ir.Str("auto_pad", "SAME_UPPER")}},
			{[]int64{2, 6, 80}, []int64{10, 6, 5}, []ir.AttrOption{ir.Ints("strides", 3)}}, // 1-D
			{[]int64{1, 32, 14, 14}, []int64{64, 32, 1, 1}, []ir.AttrOption{ir.Ints("strides", 2, 2)}},
			// Fewer output pixels than channels: the transposed GEMM.
			{[]int64{1, 16, 5, 5}, []int64{40, 16, 1, 1}, nil},
			{[]int64{2, 8, 6, 6}, []int64{48, 8, 3, 3}, []ir.AttrOption{ir.Ints("pads", 1, 1, 1, 1)}},
		}
		for _, c := range cases {
			t.Run(fmt.Sprint(c.x, c.w), func(t *testing.T) {
				x, w := f(c.x...), f(c.w...)
				b := f(c.w[0])
				runFast(t, buildFastConv, intoCase{op: "Conv", attrs: c.attrs, in: []*ir.Tensor{x, w, b}, consts: []bool{false, true, true}})
				runFast(t, buildFastConv, intoCase{op: "Conv", attrs: c.attrs, in: []*ir.Tensor{x, w}, consts: []bool{false, true}})
				y := refRun(t, nodeN("Conv", c.attrs, []*ir.Tensor{x, w}, 1), []*ir.Tensor{x, w})[0]
				for _, act := range allActs {
					attrs := append(append([]ir.AttrOption{}, c.attrs...), actAttrs(act)...)
					z := f(y.Shape...)
					runFast(t, buildFastFusedConv, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, b, z}, consts: []bool{false, true, true}})
					runFast(t, buildFastFusedConv, intoCase{op: "FusedConv", attrs: attrs, in: []*ir.Tensor{x, w, nil, z}, consts: []bool{false, true}})
				}
			})
		}
	})
}

func TestFastQMatMul(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
			for _, xs := range [][]int64{{1, 96}, {2, 7, 96}, {33, 96}} {
				t.Run(fmt.Sprint(dt, xs), func(t *testing.T) {
					wf := randF32(r, 37, 96)
					w, err := quant.Quantize(wf, dt)
					require.NoError(t, err)
					x := randF32(r, xs...)
					n := nodeN("QMatMul", nil, []*ir.Tensor{x, w}, 1)
					// The kernel quantizes the activations to int8 blocks
					// of 32 (scale amax/127, round to nearest): the oracle
					// is the reference on activations rounded that way.
					want := refRun(t, n, []*ir.Tensor{q8Round(x), w})[0]
					out := ir.NewTensor(ir.Float32, want.Shape)
					spec := &nodeSpec{n: n, pool: poolFor(2), out: []arg{{dt: ir.Float32, shape: want.Shape, ok: true}},
						in: []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: dt, shape: w.Shape, ok: true, c: w}}}
					k := buildFastQMatMul(spec)
					require.NotNil(t, k)
					require.NoError(t, k([]*ir.Tensor{x, w}, []*ir.Tensor{out}, nil))
					requireClose(t, want, out, 1e-4)
				})
			}
		}
	})
}

func TestFastAttention(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
		boolMask := ir.NewTensor(ir.Bool, []int64{1, 1, 19, 23})
		for i := range boolMask.Data {
			if r.IntN(4) != 0 {
				boolMask.Data[i] = 1
			}
		}
		boolMask.Data[0], boolMask.Data[1] = 0, 0
		for j := 0; j < 23; j++ {
			boolMask.Data[5*23+j] = 0 // row 5 sees no key: NaN
		}
		// KV-cache masks: row i of batch b sees keys 0..pos[b]+i, the rest
		// (a tail the kernel skips) is -inf, or false.
		ninf := float32(math.Inf(-1))
		cacheMask := func(dt ir.DType, sq, skv int, pos ...int) *ir.Tensor {
			m := ir.NewTensor(dt, []int64{int64(len(pos)), 1, int64(sq), int64(skv)})
			for b, p := range pos {
				for i := 0; i < sq; i++ {
					for j := 0; j < skv; j++ {
						at := (b*sq+i)*skv + j
						switch {
						case dt == ir.Bool && j <= p+i:
							m.Data[at] = 1
						case dt == ir.Float32 && j > p+i:
							m.Float32s()[at] = ninf
						}
					}
				}
			}
			return m
		}
		allHidden := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 80})
		for i := range allHidden.Float32s() {
			allHidden.Float32s()[i] = ninf
		}
		cases := []struct {
			name  string
			in    []*ir.Tensor
			attrs []ir.AttrOption
		}{
			{"cache-decode", []*ir.Tensor{f(1, 4, 1, 64), f(1, 2, 80, 64), f(1, 2, 80, 16), cacheMask(ir.Float32, 1, 80, 6)}, nil},
			{"cache-prefill", []*ir.Tensor{f(1, 2, 7, 64), f(1, 2, 80, 64), f(1, 2, 80, 12), cacheMask(ir.Float32, 7, 80, 3)}, nil},
			{"cache-per-batch", []*ir.Tensor{f(2, 2, 3, 64), f(2, 2, 80, 64), f(2, 2, 80, 64), cacheMask(ir.Float32, 3, 80, 2, 20)}, nil},
			{"cache-bool", []*ir.Tensor{f(1, 2, 3, 64), f(1, 2, 80, 64), f(1, 2, 80, 16), cacheMask(ir.Bool, 3, 80, 9)}, nil},
			{"cache-causal", []*ir.Tensor{f(1, 2, 3, 64), f(1, 2, 80, 64), f(1, 2, 80, 16), cacheMask(ir.Float32, 3, 80, 9)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
			{"all-hidden", []*ir.Tensor{f(1, 2, 1, 64), f(1, 2, 80, 64), f(1, 2, 80, 64), allHidden}, nil},
			{"plain", []*ir.Tensor{f(2, 3, 19, 16), f(2, 3, 23, 16), f(2, 3, 23, 12)}, nil},
			{"gqa-causal", []*ir.Tensor{f(1, 4, 19, 16), f(1, 2, 23, 16), f(1, 2, 23, 16)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
			{"gpt-causal", []*ir.Tensor{f(1, 3, 65, 64), f(1, 3, 65, 64), f(1, 3, 65, 64)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
			{"bert-mask", []*ir.Tensor{f(1, 2, 129, 64), f(1, 2, 129, 64), f(1, 2, 129, 64), f(1, 1, 1, 129)}, nil},
			{"float-mask", []*ir.Tensor{f(2, 3, 19, 16), f(2, 3, 23, 16), f(2, 3, 23, 12), f(2, 1, 1, 23)}, []ir.AttrOption{ir.Float("scale", 0.3)}},
			{"bool-mask", []*ir.Tensor{f(1, 2, 19, 16), f(1, 2, 23, 16), f(1, 2, 23, 16), boolMask}, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				runFast(t, buildFastAttention, intoCase{op: "Attention", attrs: c.attrs, in: c.in})
			})
		}
	})
}

func TestFastDeclines(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	f := func(s ...int64) *ir.Tensor { return randF32(r, s...) }
	decline := func(b intoBuilder, op string, attrs []ir.AttrOption, in ...*ir.Tensor) {
		n := nodeN(op, attrs, in, 1)
		want := refRun(t, n, in)
		spec := &nodeSpec{n: n, pool: poolFor(0), out: []arg{{dt: want[0].DType, shape: want[0].Shape, ok: true}}}
		for _, x := range in {
			spec.in = append(spec.in, arg{dt: x.DType, shape: x.Shape, ok: true, c: x})
		}
		require.Nil(t, b(spec), "%s %v should decline", op, in)
	}
	decline(buildFastConv, "Conv", nil, f(1, 1, 3, 3), f(1, 1, 2, 2)) // too small (grouped convs are taken now)
	w := ir.NewTensor(ir.Int8, []int64{40, 64})
	decline(buildFastQMatMul, "QMatMul", nil, f(2, 64), w, f(40))
	decline(buildFastMatMul, "MatMul", nil, f(2, 3), f(3, 2)) // too small to pay for the pool
}

// q8Round rounds x as the quantized activations see it: blocks of 32 along
// the last axis, scale d = amax/127, x ≈ d·round(x/d).
func q8Round(x *ir.Tensor) *ir.Tensor {
	y := x.Clone()
	v := y.Float32s()
	for b := 0; b < len(v); b += 32 {
		blk := v[b:min(b+32, len(v))]
		var amax float64
		for _, e := range blk {
			amax = math.Max(amax, math.Abs(float64(e)))
		}
		d := float32(amax / 127)
		if d == 0 {
			continue
		}
		inv := 1 / d
		for i, e := range blk {
			blk[i] = float32(math.Round(float64(e*inv))) * d
		}
	}
	return y
}

// TestGeluF32 checks the epilogue GELU (kernels.GeluErf) at the ISA in use
// on a fine grid; kernels/vec_test.go covers every ISA level.
func TestGeluF32(t *testing.T) {
	var xs []float32
	for x := -12.0; x <= 12; x += 1.0 / 1024 {
		xs = append(xs, float32(x))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), 0, -0, 1e-30, -1e-30, 88, -88)
	y := append([]float32{}, xs...)
	kernels.GeluErf(y)
	for i, v := range xs {
		x := float64(v)
		want := 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
		if math.IsInf(x, 0) || math.IsNaN(want) {
			if x > 0 {
				require.Equal(t, v, y[i])
			}
			continue
		}
		require.InDelta(t, want, float64(y[i]), 4e-7*math.Max(1, math.Abs(x)), "gelu(%v)", v)
	}
	nan := []float32{float32(math.NaN())}
	kernels.GeluErf(nan)
	require.True(t, math.IsNaN(float64(nan[0])))
}

func BenchmarkGelu(b *testing.B) {
	y := make([]float32, 128*3072)
	for i := range y {
		y[i] = float32(i%200)/50 - 2
	}
	n := nodeN("FusedMatMul", actAttrs("Gelu"), []*ir.Tensor{randF32(rand.New(rand.NewPCG(1, 1)), 2, 2), randF32(rand.New(rand.NewPCG(1, 1)), 2, 2)}, 1)
	exact, _ := fusedAct(n)
	w := make([]float32, len(y))
	b.Run("float64", func(b *testing.B) {
		for b.Loop() {
			copy(w, y)
			exact(w)
		}
	})
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			copy(w, y)
			kernels.GeluErf(w)
		}
	})
}

func TestParTransposeAndIm2col(t *testing.T) {
	pool := kernels.NewPool(3)
	defer pool.Close()
	r := rand.New(rand.NewPCG(15, 16))
	for _, s := range [][2]int{{1, 1}, {3, 70000}, {129, 131}, {2048, 49}, {17, 1025}} {
		src := randF32(r, int64(s[0]), int64(s[1])).Float32s()
		want, got := make([]float32, len(src)), make([]float32, len(src))
		for i := 0; i < s[0]; i++ {
			for j := 0; j < s[1]; j++ {
				want[j*s[0]+i] = src[i*s[1]+j]
			}
		}
		parTranspose(pool, got, src, s[0], s[1])
		require.Equal(t, want, got, "%v", s)
	}
	// parIm2col against im2col, with padding and strides.
	n := nodeN("Conv", []ir.AttrOption{ir.Ints("pads", 1, 2, 1, 0), ir.Ints("strides", 2, 1)}, []*ir.Tensor{randF32(r, 1, 7, 9, 8), randF32(r, 4, 7, 3, 3)}, 1)
	g, ok := geom2(n, []int64{9, 8}, []int64{3, 3}, false)
	require.True(t, ok)
	var lo, hi [2][]int
	for d := range 2 {
		for k := 0; k < 3; k++ {
			l, h := g[d].validRange(k)
			lo[d], hi[d] = append(lo[d], l), append(hi[d], h)
		}
	}
	x := randF32(r, 7, 9, 8).Float32s()
	size := 7 * 9 * g[0].out * g[1].out
	want, got := make([]float32, size), make([]float32, size)
	im2col(want, x, 7, g[0], g[1], lo[0], hi[0], lo[1], hi[1])
	parIm2col(pool, got, x, 7, g[0], g[1], lo[0], hi[0], lo[1], hi[1])
	require.Equal(t, want, got)
}

func TestFastMaxPool(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	withNaN := randF32(r, 1, 16, 33, 30)
	withNaN.Float32s()[100] = float32(math.NaN())
	withNaN.Float32s()[33*30*5+7] = float32(math.NaN())
	cases := []struct {
		name  string
		x     *ir.Tensor
		attrs []ir.AttrOption
	}{
		{"resnet", randF32(r, 1, 8, 56, 56), []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}},
		{"ceil-dil", randF32(r, 2, 8, 61, 59), []ir.AttrOption{ir.Ints("kernel_shape", 3, 2), ir.Ints("strides", 2, 3), ir.Ints("dilations", 2, 1), ir.Int("ceil_mode", 1)}},
		{"same", randF32(r, 1, 7, 40, 41), []ir.AttrOption{ir.Ints("kernel_shape", 4, 4), ir.Str("auto_pad", "SAME_LOWER")}},
		{"1-D", randF32(r, 3, 40, 100), []ir.AttrOption{ir.Ints("kernel_shape", 5), ir.Ints("pads", 2, 1)}},
		{"nan", withNaN, []ir.AttrOption{ir.Ints("kernel_shape", 2, 2), ir.Ints("pads", 1, 0, 0, 1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runFast(t, buildFastMaxPool, intoCase{op: "MaxPool", attrs: c.attrs, in: []*ir.Tensor{c.x}, tol: 1e-7})
		})
	}
}
