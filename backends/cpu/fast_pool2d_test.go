package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// TestRowMaxPool checks the row-wise MaxPool against the reference on
// random geometries (kernels 1-4, column strides 1-2, row strides 1-3,
// dilations, pads, ceil mode, 1-D and 2-D) with NaN and -Inf in the
// input, at every ISA level.
func TestRowMaxPool(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		ran := 0
		for i := 0; i < 80; i++ {
			oneD := r.IntN(5) == 0
			N, C, H, W := 1+r.IntN(2), 8+r.IntN(9), 8+r.IntN(30), 8+r.IntN(40)
			kh, kw := 1+r.IntN(4), 1+r.IntN(4)
			sh, sw := 1+r.IntN(3), 1+r.IntN(2)
			dh, dw := 1+r.IntN(2), 1+r.IntN(2)
			ph, pw := r.IntN(kh), r.IntN(kw)
			ceil := int64(r.IntN(2))
			xs := []int64{int64(N), int64(C), int64(H), int64(W)}
			attrs := []ir.AttrOption{ir.Ints("kernel_shape", int64(kh), int64(kw)), ir.Ints("strides", int64(sh), int64(sw)),
				ir.Ints("dilations", int64(dh), int64(dw)), ir.Ints("pads", int64(ph), int64(pw), int64(ph), int64(pw)), ir.Int("ceil_mode", ceil)}
			if oneD {
				xs = []int64{int64(N), int64(C) * 20, int64(W)}
				attrs = []ir.AttrOption{ir.Ints("kernel_shape", int64(kw)), ir.Ints("strides", int64(sw)),
					ir.Ints("dilations", int64(dw)), ir.Ints("pads", int64(pw), int64(pw)), ir.Int("ceil_mode", ceil)}
			}
			if (W+2*pw-(kw-1)*dw-1) < 0 || !oneD && (H+2*ph-(kh-1)*dh-1) < 0 {
				continue
			}
			x := randF32(r, xs...)
			v := x.Float32s()
			v[r.IntN(len(v))] = float32(math.NaN())
			v[r.IntN(len(v))] = float32(math.Inf(-1))
			spec := &nodeSpec{n: node("MaxPool", attrs, []*ir.Tensor{x}), pool: poolFor(1 + r.IntN(3))}
			spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}}
			ref, err := refTry(spec.n, []*ir.Tensor{x})
			if err != nil {
				continue // a geometry the reference refuses
			}
			spec.out = []arg{{dt: ir.Float32, shape: ref.Shape, ok: true}}
			k := buildRowMaxPool(spec)
			if k == nil {
				continue // small, or windows of padding only
			}
			ran++
			t.Run(fmt.Sprint(xs, attrs), func(t *testing.T) {
				out := []*ir.Tensor{ir.NewTensor(ir.Float32, ref.Shape)}
				scratch := ir.AlignedBytes(spec.scratch)
				for range 2 {
					if err := k([]*ir.Tensor{x}, out, scratch); err != nil {
						t.Fatal(err)
					}
					got, want := out[0].Float32s(), ref.Float32s()
					for i := range want {
						if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("y[%d] = %v, want %v", i, got[i], want[i])
						}
					}
				}
			})
		}
		if ran < 20 {
			t.Fatalf("only %d random cases reached the row kernel", ran)
		}
	})
}

// TestRowMaxPool3 checks the pools that kernels.MaxPool3S2Row runs
// (columns 3 wide, stride 2, pad 1 before) against the reference: ResNet's
// stem pool and odd widths, ceil mode, row kernels of 1-3 taps at row
// strides 1-3 and row dilation 2, with NaN, +Inf and -Inf in the input.
func TestRowMaxPool3(t *testing.T) {
	cases := []struct {
		N, C, H, W     int64
		kh, sh, dh, ph int64
		padE, ceil     int64
	}{
		{1, 64, 112, 112, 3, 2, 1, 1, 1, 0},
		{1, 16, 33, 47, 3, 2, 1, 1, 1, 0},
		{2, 24, 20, 31, 3, 2, 1, 1, 0, 1},
		{1, 12, 17, 64, 2, 1, 1, 0, 1, 0},
		{1, 20, 19, 65, 1, 3, 1, 0, 0, 0},
		{1, 9, 21, 100, 3, 1, 2, 2, 1, 1},
		{1, 40, 40, 17, 3, 3, 1, 1, 1, 1},
	}
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, c := range cases {
			x := randF32(r, c.N, c.C, c.H, c.W)
			v := x.Float32s()
			for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				v[r.IntN(len(v))] = float32(f)
			}
			attrs := []ir.AttrOption{ir.Ints("kernel_shape", c.kh, 3), ir.Ints("strides", c.sh, 2),
				ir.Ints("dilations", c.dh, 1), ir.Ints("pads", c.ph, 1, c.ph, c.padE), ir.Int("ceil_mode", c.ceil)}
			spec := &nodeSpec{n: node("MaxPool", attrs, []*ir.Tensor{x}), pool: poolFor(1 + r.IntN(3))}
			spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}}
			want, err := refTry(spec.n, []*ir.Tensor{x})
			require.NoError(t, err)
			spec.out = []arg{{dt: ir.Float32, shape: want.Shape, ok: true}}
			g, ok := geom2(spec.n, x.Shape[2:], []int64{c.kh, 3}, c.ceil != 0)
			require.True(t, ok)
			if kernels.CurrentISA() == kernels.AVX512 && !useMaxPool3(g[1], windowTaps(g[0])) {
				t.Fatalf("%+v: not the 3-wide stride-2 kernel", c)
			}
			k := buildRowMaxPool(spec)
			require.NotNil(t, k, "%+v", c)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, want.Shape)}
			require.NoError(t, k([]*ir.Tensor{x}, out, ir.AlignedBytes(spec.scratch)))
			got, wv := out[0].Float32s(), want.Float32s()
			for i := range wv {
				if got[i] != wv[i] && !(got[i] != got[i] && wv[i] != wv[i]) {
					t.Fatalf("%+v: y[%d] = %v, want %v", c, i, got[i], wv[i])
				}
			}
		}
	})
}

// refTry runs the reference kernel of n, returning its error.
func refTry(n *ir.Node, in []*ir.Tensor) (*ir.Tensor, error) {
	k, ok := ref.Lookup(n.Op)
	if !ok {
		return nil, fmt.Errorf("no reference kernel for %s", n.Op)
	}
	out, err := k(&ref.Context{Ctx: context.Background(), Env: backends.NewEnv(nil)}, n, in)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// BenchmarkRowMaxPool times ResNet's stem MaxPool (64×112², 3×3 stride 2
// pad 1) with the 3-wide stride-2 row kernel (win3), the general row
// kernel and the tap-list kernel, alternating.
func BenchmarkRowMaxPool(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randF32(r, 1, 64, 112, 112)
	attrs := []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprint("threads=", threads), func(b *testing.B) {
			mk := func(build intoBuilder) (intoKernel, []byte) {
				spec := &nodeSpec{n: node("MaxPool", attrs, []*ir.Tensor{x}), pool: poolFor(threads)}
				spec.in = []arg{{dt: ir.Float32, shape: x.Shape, ok: true}}
				spec.out = []arg{{dt: ir.Float32, shape: []int64{1, 64, 56, 56}, ok: true}}
				return build(spec), ir.AlignedBytes(spec.scratch)
			}
			kNew, sNew := mk(buildRowMaxPool)
			maxPool3Enabled = false
			kRow, sRow := mk(buildRowMaxPool)
			maxPool3Enabled = true
			kOld, sOld := mk(buildFastMaxPool)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 64, 56, 56})}
			in := []*ir.Tensor{x}
			var dNew, dRow, dOld time.Duration
			for b.Loop() {
				t0 := time.Now()
				_ = kNew(in, out, sNew)
				t1 := time.Now()
				_ = kRow(in, out, sRow)
				t2 := time.Now()
				_ = kOld(in, out, sOld)
				dNew += t1.Sub(t0)
				dRow += t2.Sub(t1)
				dOld += time.Since(t2)
			}
			b.ReportMetric(float64(dNew.Microseconds())/float64(b.N), "win3-µs")
			b.ReportMetric(float64(dRow.Microseconds())/float64(b.N), "row-µs")
			b.ReportMetric(float64(dOld.Microseconds())/float64(b.N), "taps-µs")
		})
	}
}
