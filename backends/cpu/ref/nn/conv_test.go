package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestConv(t *testing.T) {
	x5 := iota32(0, 1, 1, 5, 5)
	x75 := iota32(0, 1, 1, 7, 5)
	ones3 := f32(sh(1, 1, 3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1)
	cases := []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		shape []int64
		want  []float64
	}{
		// ONNX operator doc examples (5x5 / 7x5 inputs, 3x3 ones kernel).
		{"pads 1", a(ir.Ints("pads", 1, 1, 1, 1)), []*ir.Tensor{x5, ones3}, sh(1, 1, 5, 5),
			[]float64{12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}},
		{"no pads", nil, []*ir.Tensor{x5, ones3}, sh(1, 1, 3, 3), []float64{54, 63, 72, 99, 108, 117, 144, 153, 162}},
		{"strides pads", a(ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)), []*ir.Tensor{x75, ones3}, sh(1, 1, 4, 3),
			[]float64{12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}},
		{"strides no pads", a(ir.Ints("strides", 2, 2)), []*ir.Tensor{x75, ones3}, sh(1, 1, 3, 2),
			[]float64{54, 72, 144, 162, 234, 252}},
		{"asymmetric pads", a(ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 0, 1, 0)), []*ir.Tensor{x75, ones3}, sh(1, 1, 4, 2),
			[]float64{21, 33, 99, 117, 189, 207, 171, 183}},
		{"same lower stride 2", a(ir.Str("auto_pad", "SAME_LOWER"), ir.Ints("strides", 2, 2)), []*ir.Tensor{x5, ones3}, sh(1, 1, 3, 3),
			[]float64{12, 27, 24, 63, 108, 81, 72, 117, 84}},
		{"kernel_shape attr", a(ir.Ints("kernel_shape", 3, 3)), []*ir.Tensor{x5, ones3}, sh(1, 1, 3, 3), []float64{54, 63, 72, 99, 108, 117, 144, 153, 162}},
		// 1-D, odd total padding: SAME_UPPER pads the end, SAME_LOWER the start.
		{"1d same upper", a(ir.Str("auto_pad", "SAME_UPPER"), ir.Ints("strides", 2)),
			[]*ir.Tensor{f32(sh(1, 1, 4), 1, 2, 3, 4), f32(sh(1, 1, 3), 1, 10, 100)}, sh(1, 1, 2), []float64{321, 43}},
		{"1d same lower", a(ir.Str("auto_pad", "SAME_LOWER"), ir.Ints("strides", 2)),
			[]*ir.Tensor{f32(sh(1, 1, 4), 1, 2, 3, 4), f32(sh(1, 1, 3), 1, 10, 100)}, sh(1, 1, 2), []float64{210, 432}},
		{"1d valid", a(ir.Str("auto_pad", "VALID"), ir.Ints("strides", 2)),
			[]*ir.Tensor{f32(sh(1, 1, 4), 1, 2, 3, 4), f32(sh(1, 1, 3), 1, 10, 100)}, sh(1, 1, 1), []float64{321}},
		{"1d dilation bias", a(ir.Ints("dilations", 2)),
			[]*ir.Tensor{f32(sh(1, 1, 6), 1, 2, 3, 4, 5, 6), f32(sh(1, 1, 2), 1, 10), f32(sh(1), 0.5)}, sh(1, 1, 4),
			[]float64{31.5, 42.5, 53.5, 64.5}},
		{"1d groups", a(ir.Int("group", 2)),
			[]*ir.Tensor{f32(sh(1, 2, 3), 1, 2, 3, 4, 5, 6), f32(sh(2, 1, 2), 1, 1, 1, -1)}, sh(1, 2, 2), []float64{3, 5, -1, -1}},
		{"channels 1x1 bias", nil,
			[]*ir.Tensor{f32(sh(1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8), f32(sh(2, 2, 1, 1), 1, 1, 2, -1), f32(sh(2), 1, 100)},
			sh(1, 2, 2, 2), []float64{7, 9, 11, 13, 97, 98, 99, 100}},
		{"batch 2 depthwise multiplier", a(ir.Int("group", 1)),
			[]*ir.Tensor{f32(sh(2, 1, 3), 1, 2, 3, -1, -2, -3), f32(sh(2, 1, 1), 2, -1)}, sh(2, 2, 3),
			[]float64{2, 4, 6, -1, -2, -3, -2, -4, -6, 1, 2, 3}},
		// 3-D, stride 2, pads 1: each window sees exactly one corner element.
		{"3d stride pads", a(ir.Ints("strides", 2, 2, 2), ir.Ints("pads", 1, 1, 1, 1, 1, 1)),
			[]*ir.Tensor{iota32(1, 1, 1, 2, 2, 2), f32(sh(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)}, sh(1, 1, 2, 2, 2),
			[]float64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"3d full", nil, []*ir.Tensor{iota32(1, 1, 1, 2, 2, 2), f32(sh(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)}, sh(1, 1, 1, 1, 1),
			[]float64{36}},
		// 2-D, non-square kernel, stride 3x1, dilation 1x2, asymmetric pads, odd sizes.
		{"2d mixed", a(ir.Ints("strides", 3, 1), ir.Ints("dilations", 1, 2), ir.Ints("pads", 0, 1, 1, 0)),
			[]*ir.Tensor{iota32(1, 1, 1, 4, 3), f32(sh(1, 1, 2, 2), 1, 10, 100, 1000)}, sh(1, 1, 2, 2),
			// rows {0,1} and {3,pad}; cols {-1,1} and {0,2} (x[i][j] = 3i+j+1)
			[]float64{10*2 + 1000*5, 1 + 10*3 + 100*4 + 1000*6, 10 * 11, 10 + 10*12}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, "Conv", c.attrs, 1, c.in...)
			expect(t, out[0], ir.Float32, c.shape, 1e-4, c.want...)
		})
	}
	for _, dt := range []ir.DType{ir.Float64, ir.Float16, ir.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			out := run(t, "Conv", nil, 1, f(dt, sh(1, 1, 3), 1, 2, 3), f(dt, sh(1, 1, 2), 0.5, -1), f(dt, sh(1), 0.25))
			expect(t, out[0], dt, sh(1, 1, 2), 1e-6, -1.25, -1.75)
		})
	}
}

func TestConvErrors(t *testing.T) {
	x := f32(sh(1, 2, 4, 4))
	w := f32(sh(2, 2, 3, 3))
	expectErr(t, false, "Conv", nil, 1, f32(sh(2, 4)), f32(sh(2, 4)))
	expectErr(t, false, "Conv", nil, 1, x, f32(sh(2, 3, 3, 3)))                            // channel mismatch
	expectErr(t, false, "Conv", a(ir.Int("group", 2)), 1, x, f32(sh(3, 1, 3, 3)))          // M % group
	expectErr(t, false, "Conv", a(ir.Int("group", 0)), 1, x, w)                            // bad group
	expectErr(t, false, "Conv", a(ir.Ints("kernel_shape", 2, 2)), 1, x, w)                 // kernel_shape mismatch
	expectErr(t, false, "Conv", nil, 1, x, w, f32(sh(3)))                                  // bias shape
	expectErr(t, false, "Conv", nil, 1, x, f32(sh(2, 2, 5, 5)))                            // kernel larger than input
	expectErr(t, false, "Conv", a(ir.Str("auto_pad", "SAME")), 1, x, w)                    // unknown auto_pad
	expectErr(t, false, "Conv", a(ir.Ints("strides", 1)), 1, x, w)                         // strides length
	expectErr(t, false, "Conv", a(ir.Ints("strides", 0, 1)), 1, x, w)                      // zero stride
	expectErr(t, false, "Conv", a(ir.Ints("pads", 1, 1)), 1, x, w)                         // pads length
	expectErr(t, false, "Conv", a(ir.Ints("pads", -1, 0, 0, 0)), 1, x, w)                  // negative pad
	expectErr(t, false, "Conv", nil, 1, x, f32(sh(2, 2, 3)))                               // rank mismatch
	expectErr(t, false, "Conv", nil, 1, x, f(ir.Float64, sh(2, 2, 3, 3)))                  // dtype mismatch
	expectErr(t, true, "Conv", nil, 1, f(ir.Int32, sh(1, 1, 3)), f(ir.Int32, sh(1, 1, 1))) // ints
}

func TestConvInteger(t *testing.T) {
	// ONNX operator doc examples: x-1 = 1..9 over a 2x2 ones kernel.
	x := f(ir.Uint8, sh(1, 1, 3, 3), 2, 3, 4, 5, 6, 7, 8, 9, 10)
	w := f(ir.Uint8, sh(1, 1, 2, 2), 1, 1, 1, 1)
	out := run(t, "ConvInteger", nil, 1, x, w, f(ir.Uint8, sh(), 1))
	expect(t, out[0], ir.Int32, sh(1, 1, 2, 2), 0, 12, 16, 24, 28)
	out = run(t, "ConvInteger", a(ir.Ints("pads", 1, 1, 1, 1)), 1, x, w, f(ir.Uint8, sh(), 1))
	expect(t, out[0], ir.Int32, sh(1, 1, 4, 4), 0, 1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9)
	// Per-output-channel w zero point, int8 weights, no x zero point.
	out = run(t, "ConvInteger", nil, 1, f(ir.Uint8, sh(1, 1, 1, 2), 1, 2), f(ir.Int8, sh(2, 1, 1, 1), 3, -5), nil, f(ir.Int8, sh(2), 1, -2))
	expect(t, out[0], ir.Int32, sh(1, 2, 1, 2), 0, 2, 4, -3, -6)
	expectErr(t, false, "ConvInteger", nil, 1, x, w, f(ir.Uint8, sh(2), 1, 1))
	expectErr(t, false, "ConvInteger", nil, 1, x, w, nil, f(ir.Uint8, sh(3), 1, 1, 1))
	expectErr(t, true, "ConvInteger", nil, 1, f32(sh(1, 1, 3)), f32(sh(1, 1, 1)))
}

func TestQLinearConv(t *testing.T) {
	// x - 10 = [0, 10, 20] (scale 0.5); w - zp = [1, 4] with scales [1, 0.25];
	// y_scale 2, y_zp 100, bias [0, 10].
	// ch0: [0,10,20]·0.25 = [0, 2.5->2, 5]; ch1: [10,50,90]·0.0625 = [0.625->1, 3.125->3, 5.625->6].
	out := run(t, "QLinearConv", nil, 1,
		f(ir.Uint8, sh(1, 1, 1, 3), 10, 20, 30), f32(sh(), 0.5), f(ir.Uint8, sh(), 10),
		f(ir.Uint8, sh(2, 1, 1, 1), 2, 4), f32(sh(2), 1, 0.25), f(ir.Uint8, sh(2), 1, 0),
		f32(sh(), 2), f(ir.Uint8, sh(), 100), f(ir.Int32, sh(2), 0, 10))
	expect(t, out[0], ir.Uint8, sh(1, 2, 1, 3), 0, 100, 102, 105, 101, 103, 106)
	// int8 output saturates.
	out = run(t, "QLinearConv", nil, 1,
		f(ir.Int8, sh(1, 1, 2), 100, -100), f32(sh(), 1), f(ir.Int8, sh(), 0),
		f(ir.Int8, sh(1, 1, 1), 2), f32(sh(), 1), f(ir.Int8, sh(), 0),
		f32(sh(), 1), f(ir.Int8, sh(), 0))
	expect(t, out[0], ir.Int8, sh(1, 1, 2), 0, 127, -128)
	expectErr(t, false, "QLinearConv", nil, 1,
		f(ir.Int8, sh(1, 1, 2)), f32(sh(), 1), nil, f(ir.Int8, sh(1, 1, 1)), f32(sh(3), 1, 1, 1), nil, f32(sh(), 1), nil)
	expectErr(t, false, "QLinearConv", nil, 1,
		f(ir.Int8, sh(1, 1, 2)), f32(sh(), 1), nil, f(ir.Int8, sh(1, 1, 1)), f32(sh(), 1), nil, f32(sh(), 1), nil, f32(sh(1)))
}

// im2colConv is an independent Conv: it materialises, per batch and group,
// the column matrix col[(ic, kernel position), output position] (zero for
// padding) and multiplies the weights by it. Geometry comes from explicit
// per-axis begin pads and output sizes computed here.
func im2colConv(x []float64, xs []int64, w []float64, ws []int64, b []float64, group int, strides, dils, padB, outS []int) []float64 {
	N, C, M := int(xs[0]), int(xs[1]), int(ws[0])
	r := len(xs) - 2
	in := make([]int, r)
	ks := make([]int, r)
	inSize, kSize, outSize := 1, 1, 1
	for d := 0; d < r; d++ {
		in[d], ks[d] = int(xs[d+2]), int(ws[d+2])
		inSize *= in[d]
		kSize *= ks[d]
		outSize *= outS[d]
	}
	cg, mg := C/group, M/group
	rows := cg * kSize
	y := make([]float64, N*M*outSize)
	col := make([]float64, rows*outSize)
	for n := 0; n < N; n++ {
		for g := 0; g < group; g++ {
			for row := 0; row < rows; row++ {
				ic, kflat := row/kSize, row%kSize
				for o := 0; o < outSize; o++ {
					// unflatten kernel and output positions
					kf, of := kflat, o
					inOff, ok := 0, true
					coords := make([]int, r)
					for d := r - 1; d >= 0; d-- {
						kd, od := kf%ks[d], of%outS[d]
						kf /= ks[d]
						of /= outS[d]
						coords[d] = od*strides[d] - padB[d] + kd*dils[d]
						if coords[d] < 0 || coords[d] >= in[d] {
							ok = false
						}
					}
					v := 0.0
					if ok {
						for d := 0; d < r; d++ {
							inOff = inOff*in[d] + coords[d]
						}
						v = x[(n*C+g*cg+ic)*inSize+inOff]
					}
					col[row*outSize+o] = v
				}
			}
			for j := 0; j < mg; j++ {
				m := g*mg + j
				for o := 0; o < outSize; o++ {
					s := 0.0
					if b != nil {
						s = b[m]
					}
					for row := 0; row < rows; row++ {
						s += w[m*rows+row] * col[row*outSize+o]
					}
					y[(n*M+m)*outSize+o] = s
				}
			}
		}
	}
	return y
}

func TestConvMatchesIm2col(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		r := 1 + rng.Intn(3)
		group := 1 + rng.Intn(3)
		cg, mg := 1+rng.Intn(3), 1+rng.Intn(3)
		N := 1 + rng.Intn(2)
		C, M := cg*group, mg*group
		autoPad := []string{"NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"}[rng.Intn(5)]
		xs := []int64{int64(N), int64(C)}
		ws := []int64{int64(M), int64(cg)}
		var strides, dils, pads []int64
		padB, padE := make([]int, r), make([]int, r)
		outS := make([]int, r)
		for d := 0; d < r; d++ {
			k := 1 + rng.Intn(3)
			s := 1 + rng.Intn(3)
			dl := 1 + rng.Intn(2)
			span := (k-1)*dl + 1
			in := span + rng.Intn(6)
			pb, pe := rng.Intn(3), rng.Intn(3)
			switch autoPad {
			case "NOTSET":
				padB[d], padE[d] = pb, pe
				outS[d] = (in+pb+pe-span)/s + 1
			case "VALID":
				outS[d] = (in-span)/s + 1
			default:
				outS[d] = (in + s - 1) / s
				total := max(0, (outS[d]-1)*s+span-in)
				padB[d] = total / 2
				if autoPad == "SAME_LOWER" {
					padB[d] = total - total/2
				}
			}
			xs = append(xs, int64(in))
			ws = append(ws, int64(k))
			strides = append(strides, int64(s))
			dils = append(dils, int64(dl))
			pads = append(pads, int64(pb))
		}
		for d := 0; d < r; d++ {
			pads = append(pads, int64(padE[d]))
		}
		if autoPad == "NOTSET" {
			for d := 0; d < r; d++ {
				pads[d] = int64(padB[d])
			}
		}
		rnd := func(n int64) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(float32(rng.NormFloat64()))
			}
			return v
		}
		xv, wv := rnd(ir.NumElements(xs)), rnd(ir.NumElements(ws))
		var bv []float64
		in := []*ir.Tensor{f32(xs, xv...), f32(ws, wv...)}
		if rng.Intn(2) == 0 {
			bv = rnd(int64(M))
			in = append(in, f32(sh(int64(M)), bv...))
		}
		attrs := a(ir.Int("group", int64(group)), ir.Ints("strides", strides...), ir.Ints("dilations", dils...), ir.Str("auto_pad", autoPad))
		if autoPad == "NOTSET" {
			attrs = append(attrs, ir.Ints("pads", pads...))
		}
		name := fmt.Sprintf("iter %d: x%v w%v group %d strides %v dils %v pads %v %s", iter, xs, ws, group, strides, dils, pads, autoPad)
		out, err := call("Conv", attrs, 1, in...)
		require.NoError(t, err, name)
		want := im2colConv(xv, xs, wv, ws, bv, group, toInt(strides), toInt(dils), padB, outS)
		wantShape := []int64{int64(N), int64(M)}
		for _, o := range outS {
			wantShape = append(wantShape, int64(o))
		}
		require.Equal(t, wantShape, out[0].Shape, name)
		for i, wv := range want {
			require.InDelta(t, wv, out[0].Float64(i), 1e-4*(1+math.Abs(wv)), "%s: element %d", name, i)
		}
	}
}

func toInt(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}
