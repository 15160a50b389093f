//go:build cgo

package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

// The f16 paths are checked against a float64 reference computed here from
// the very inputs the device sees (f16 values, or f32 weights rounded to
// f16 for the F16Weights opt-in), with error bounds derived from the
// arithmetic each shader does. With u = 2⁻¹¹ (f16's unit roundoff) and
// S = Σ_k |a_k·b_k| for an output element y:
//
//   - f16 storage, f32 arithmetic (matmul_f16): only the final store
//     rounds to f16; the f32 sum adds at most K·2⁻²⁴·S:
//     |err| ≤ u·|y| + K·2⁻²⁴·S + 2⁻²⁴ (f16's smallest subnormal).
//   - f16 arithmetic (matmul_f16a): each 16-term tile dot product is
//     summed in f16 (recursive summation: ≤ 16·u·S_tile, product roundings
//     included), the tiles in f32, then the store rounds:
//     |err| ≤ 17·u·S + u·|y| + 2⁻²⁴.
//   - f16 weights (matmul_wf16): the reference uses the f16-rounded
//     weights, so only the f32 sum differs: |err| ≤ K·2⁻²⁴·S + 1e-6.
//
// The bounds are worst cases: a wrong index or a missing tile is off by
// O(|a·b|), far outside them, so the tests can fail.

// withQuirks runs f with the device's flags replaced (the tests of this
// package do not run in parallel).
func withQuirks(d *device, q Quirks, f func()) {
	old := d.quirks
	d.quirks = q
	defer func() { d.quirks = old }()
	f()
}

// f16Tensor makes an f16 tensor of random values in [-2, 2).
func f16Tensor(r *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float16, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, 4*r.Float64()-2)
	}
	return t
}

// matmulRef computes Y = act(A·B + bias) in float64 for A [batch, M, K],
// B [K, N] (shared by the batch) and bias [N] (nil: none), with S per
// element; act is Relu when relu is set.
func matmulRef(a, b, bias []float64, batch, M, K, N int, relu bool) (y, s []float64) {
	y, s = make([]float64, batch*M*N), make([]float64, batch*M*N)
	for z := 0; z < batch; z++ {
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				var acc, abs float64
				for k := 0; k < K; k++ {
					p := a[(z*M+i)*K+k] * b[k*N+j]
					acc += p
					abs += math.Abs(p)
				}
				if bias != nil {
					acc += bias[j]
					abs += math.Abs(bias[j])
				}
				if relu {
					acc = max(acc, 0)
				}
				y[(z*M+i)*N+j], s[(z*M+i)*N+j] = acc, abs
			}
		}
	}
	return y, s
}

func float64s(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

// requireWithin checks |got−want| ≤ bound(i) elementwise and returns the
// largest error seen.
func requireWithin(t *testing.T, want []float64, got *ir.Tensor, bound func(i int) float64, what string) float64 {
	t.Helper()
	require.Equal(t, len(want), got.Len(), what)
	worst := 0.0
	for i, w := range want {
		e := math.Abs(got.Float64(i) - w)
		require.LessOrEqual(t, e, bound(i), "%s: element %d: got %v, want %v", what, i, got.Float64(i), w)
		worst = max(worst, e)
	}
	return worst
}

func TestF16MatMul(t *testing.T) {
	d := testDevice(t)
	if !d.info.Storage16Bit {
		t.Skipf("%s has no storageBuffer16BitAccess", d.name)
	}
	const u = 1.0 / 2048
	cases := []struct {
		name           string
		batch, M, K, N int
		fused          bool
	}{
		{"2-D odd", 1, 5, 37, 19, false},
		{"batched", 3, 17, 33, 20, false},
		{"fused bias relu", 2, 9, 64, 23, true},
	}
	for _, arith := range []bool{false, true} {
		if arith && !d.info.ShaderFloat16 {
			continue
		}
		q := Quirks{F16Storage: true, F16Arith: arith}
		for ci, c := range cases {
			name := c.name + map[bool]string{false: " f32 arith", true: " f16 arith"}[arith]
			t.Run(name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(ci), 16))
				at, bt := f16Tensor(r, int64(c.batch), int64(c.M), int64(c.K)), f16Tensor(r, int64(c.K), int64(c.N))
				b := ir.NewBuilder("f16")
				x := b.Input("a", ir.Float16, ir.S(int64(c.batch), int64(c.M), int64(c.K)))
				w := b.Const("b", bt)
				var bias []float64
				if c.fused {
					bb := f16Tensor(r, int64(c.N))
					bias = float64s(bb)
					b.Output("y", b.OpA("FusedMatMul", []ir.AttrOption{ir.Str("activation", "Relu")}, x, w, b.Const("bias", bb)))
				} else {
					b.Output("y", b.Op("MatMul", x, w))
				}
				g, err := b.Build()
				require.NoError(t, err)
				require.NoError(t, passes.InferShapes(g))
				var got map[*ir.Value]*ir.Tensor
				withQuirks(d, q, func() {
					ds, err := planNode(g.Nodes[0], q, d.lim)
					require.NoError(t, err)
					require.Equal(t, map[bool]string{false: "matmul_f16", true: "matmul_f16a"}[arith], ds[0].shader)
					got = onDevice(t, d, g, map[*ir.Value]*ir.Tensor{x: at})
				})
				y := got[g.Outputs[0]]
				require.Equal(t, ir.Float16, y.DType)
				want, s := matmulRef(float64s(at), float64s(bt), bias, c.batch, c.M, c.K, c.N, c.fused)
				bound := func(i int) float64 {
					if arith {
						return 17*u*s[i] + u*math.Abs(want[i]) + 0x1p-24
					}
					return u*math.Abs(want[i]) + float64(c.K)*0x1p-24*s[i] + 0x1p-24
				}
				worst := requireWithin(t, want, y, bound, name)
				t.Logf("%s: largest error %.3g (|y| up to %.3g)", name, worst, maxAbs(want))
			})
		}
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// TestF16Weights: the WEFT_VULKAN_FP16_WEIGHTS=1 opt-in stores an f32
// MatMul's constant weights as f16; the result is the f32 product with
// the weights rounded to nearest f16, and without the opt-in nothing is
// rounded.
func TestF16Weights(t *testing.T) {
	d := testDevice(t)
	if !d.info.Storage16Bit {
		t.Skipf("%s has no storageBuffer16BitAccess", d.name)
	}
	const M, K, N = 7, 45, 21
	r := rand.New(rand.NewPCG(5, 16))
	at, bt := randTensor(r, in(M, K)), randTensor(r, in(K, N))
	b := ir.NewBuilder("wf16")
	x := b.Input("a", ir.Float32, ir.S(M, K))
	// The same weights twice: as MatMul's B (stored as f16) and as an
	// Add operand (kept f32), so that one constant has both copies.
	w := b.Const("w", bt)
	b.Output("y", b.Op("MatMul", x, w))
	b.Output("z", b.Op("Add", w, w))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))

	rounded := float64s(bt)
	changed := 0
	for i, v := range rounded {
		rounded[i] = float64(ir.F16ToF32(ir.F32ToF16(float32(v))))
		if rounded[i] != v {
			changed++
		}
	}
	require.Positive(t, changed, "the weights must lose bits in f16 for the test to mean something")
	for _, opt := range []bool{false, true} {
		q := d.quirks
		q.F16Weights = opt
		var got map[*ir.Value]*ir.Tensor
		withQuirks(d, q, func() {
			ds, err := planNode(g.Nodes[0], q, d.lim)
			require.NoError(t, err)
			require.Equal(t, map[bool]string{false: "matmul", true: "matmul_wf16"}[opt], ds[0].shader)
			exe, err := d.Compile(wholePartition(g))
			require.NoError(t, err)
			defer exe.(*executable).Close()
			e := exe.(*executable)
			_, half := e.constAt[constKey{w, true}]
			require.Equal(t, opt, half, "f16 copy of the weights")
			got = runExe(t, exe, g, map[*ir.Value]*ir.Tensor{x: at})
		})
		bw := float64s(bt)
		if opt {
			bw = rounded
		}
		want, s := matmulRef(float64s(at), bw, nil, 1, M, K, N, false)
		worst := requireWithin(t, want, got[g.Outputs[0]], func(i int) float64 { return K*0x1p-24*s[i] + 1e-6 }, "y")
		t.Logf("f16 weights %v: largest error %.3g against the f64 product with the weights %s", opt, worst,
			map[bool]string{false: "as they are", true: "rounded to f16"}[opt])
		ref := reference(t, g, map[*ir.Value]*ir.Tensor{x: at, w: bt})
		requireClose(t, ref[g.Outputs[1]], got[g.Outputs[1]], 1e-6, "z (f32 path unchanged)")
	}
}

// TestQMatMulHalfWeights: QMatMul with F16 weights (through 16-bit
// storage, and as words without it) and BF16 weights; the weights are
// exact in their dtype, so the reference is the f64 product with the
// widened weights and only the f32 sum differs: |err| ≤ K·2⁻²⁴·S + 1e-6.
func TestQMatMulHalfWeights(t *testing.T) {
	d := testDevice(t)
	const M, N, K = 6, 11, 37 // K odd: rows of W end mid-word
	for _, c := range []struct {
		dt      ir.DType
		storage bool
		shader  string
	}{
		{ir.Float16, true, "qmatmul_f16"},
		{ir.Float16, false, "qmatmul"},
		{ir.BFloat16, true, "qmatmul"},
	} {
		if c.storage && !d.info.Storage16Bit {
			continue
		}
		name := fmt.Sprintf("%v/16-bit storage %v", c.dt, c.storage)
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 3))
			wt := ir.NewTensor(c.dt, []int64{N, K})
			for i := 0; i < wt.Len(); i++ {
				wt.SetFloat64(i, 4*r.Float64()-2)
			}
			xt := randTensor(r, in(M, K))
			b := ir.NewBuilder("qh")
			x := b.Input("x", ir.Float32, ir.S(M, K))
			b.Output("y", b.Op("QMatMul", x, b.Const("w", wt)))
			g, err := b.Build()
			require.NoError(t, err)
			require.NoError(t, passes.InferShapes(g))
			q := d.quirks
			q.F16Storage = c.storage
			var got map[*ir.Value]*ir.Tensor
			withQuirks(d, q, func() {
				ds, err := planNode(g.Nodes[0], q, d.lim)
				require.NoError(t, err)
				require.Equal(t, c.shader, ds[0].shader)
				got = onDevice(t, d, g, map[*ir.Value]*ir.Tensor{x: xt})
			})
			// W is [N, K]: the reference wants B [K, N].
			bw := make([]float64, K*N)
			for n := 0; n < N; n++ {
				for k := 0; k < K; k++ {
					bw[k*N+n] = wt.Float64(n*K + k)
				}
			}
			want, s := matmulRef(float64s(xt), bw, nil, 1, M, K, N, false)
			worst := requireWithin(t, want, got[g.Outputs[0]], func(i int) float64 { return K*0x1p-24*s[i] + 1e-6 }, name)
			t.Logf("%s: largest error %.3g", name, worst)
		})
	}
}

// TestF16KillSwitches opens fresh devices under the f16 kill switches:
// the device is created with only the features the flags allow, and the
// kernels follow (declined, or the variant without f16 arithmetic).
func TestF16KillSwitches(t *testing.T) {
	d0 := testDevice(t)
	if !d0.info.Storage16Bit || !d0.info.ShaderFloat16 {
		t.Skipf("%s lacks 16-bit storage or shaderFloat16", d0.name)
	}
	r := rand.New(rand.NewPCG(8, 8))
	at, bt := f16Tensor(r, 1, 9, 40), f16Tensor(r, 40, 13)
	b := ir.NewBuilder("ks")
	x := b.Input("a", ir.Float16, ir.S(1, 9, 40))
	b.Output("y", b.Op("MatMul", x, b.Const("b", bt)))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	want, s := matmulRef(float64s(at), float64s(bt), nil, 1, 9, 40, 13, false)
	for _, c := range []struct {
		key     string
		flags   []string // the f16 flags left
		shader  string   // "" when declined
		decline string
	}{
		{"WEFT_VULKAN_FP16", nil, "", "f16 storage not enabled"},
		{"WEFT_VULKAN_FP16_STORAGE", []string{"f16_arith"}, "", "WEFT_VULKAN_FP16_STORAGE=0"},
		{"WEFT_VULKAN_FP16_ARITH", []string{"f16_storage"}, "matmul_f16", ""},
	} {
		t.Run(c.key, func(t *testing.T) {
			devs, why := probe(func(k string) string {
				if k == c.key {
					return "0"
				}
				return ""
			})
			require.NotEmpty(t, devs, why)
			defer func() {
				for _, dv := range devs {
					require.NoError(t, dv.(*device).Close())
				}
			}()
			d := devs[0].(*device)
			var f16 []string
			for _, f := range d.quirks.Flags() {
				if f == "f16_storage" || f == "f16_arith" {
					f16 = append(f16, f)
				}
			}
			require.Equal(t, c.flags, f16)
			if c.shader == "" {
				err := d.Supports(g.Nodes[0])
				require.ErrorIs(t, err, ir.ErrUnsupported)
				require.ErrorContains(t, err, c.decline)
				return
			}
			ds, err := planNode(g.Nodes[0], d.quirks, d.lim)
			require.NoError(t, err)
			require.Equal(t, c.shader, ds[0].shader)
			got := onDevice(t, d, g, map[*ir.Value]*ir.Tensor{x: at})
			requireWithin(t, want, got[g.Outputs[0]], func(i int) float64 {
				return math.Abs(want[i])/2048 + 40*0x1p-24*s[i] + 0x1p-24
			}, c.key)
		})
	}
}
