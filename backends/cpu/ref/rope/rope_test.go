package rope

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// caches returns the cos/sin caches [maxPos, half] for base theta and
// rotary dim r: angle(p, i) = p · theta^(-2i/r).
func caches(maxPos, r int, theta float64) (*ir.Tensor, *ir.Tensor) {
	half := r / 2
	c, s := make([]float32, maxPos*half), make([]float32, maxPos*half)
	for p := 0; p < maxPos; p++ {
		for i := 0; i < half; i++ {
			a := float64(p) * math.Pow(theta, -2*float64(i)/float64(r))
			c[p*half+i], s[p*half+i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
	}
	sh := []int64{int64(maxPos), int64(half)}
	return ir.FromFloat32(sh, c), ir.FromFloat32(sh, s)
}

func run(t *testing.T, attrs []ir.AttrOption, in ...*ir.Tensor) (*ir.Tensor, error) {
	t.Helper()
	g := ir.NewGraph("t")
	vals := make([]*ir.Value, len(in))
	for i := range in {
		if in[i] != nil {
			vals[i] = g.AddInput("x", in[i].DType, ir.ShapeOf(in[i].Shape))
		}
	}
	a := ir.Attrs{}
	for _, o := range attrs {
		o(a)
	}
	n := g.AddNode("RotaryEmbedding", "rope", vals, 1, a)
	out, err := kernel(&ref.Context{}, n, in)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// TestRotation compares with the rotation written as complex
// multiplication: the pair (x1, x2) is the complex number x1 + i·x2,
// multiplied by e^{i·angle}.
func TestRotation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name          string
		B, H, S, D, R int
		interleaved   int64
		maxPos        int
	}{
		{"interleaved full", 2, 3, 5, 8, 0, 1, 16},
		{"neox full", 1, 4, 3, 6, 0, 0, 9},
		{"interleaved partial", 1, 2, 4, 10, 4, 1, 7},
		{"neox partial", 2, 1, 2, 8, 6, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.R
			if r == 0 {
				r = tc.D
			}
			cosT, sinT := caches(tc.maxPos, r, 10000)
			x := ir.NewTensor(ir.Float32, []int64{int64(tc.B), int64(tc.H), int64(tc.S), int64(tc.D)})
			xs := x.Float32s()
			for i := range xs {
				xs[i] = rng.Float32()*2 - 1
			}
			pos := make([]int64, tc.B*tc.S)
			for i := range pos {
				pos[i] = int64(rng.IntN(tc.maxPos))
			}
			posT := ir.FromInt64([]int64{int64(tc.B), int64(tc.S)}, pos)
			y, err := run(t, []ir.AttrOption{ir.Int("interleaved", tc.interleaved), ir.Int("rotary_embedding_dim", int64(tc.R))}, x, cosT, sinT, posT)
			require.NoError(t, err)
			ys := y.Float32s()
			half := r / 2
			for b := 0; b < tc.B; b++ {
				for h := 0; h < tc.H; h++ {
					for s := 0; s < tc.S; s++ {
						base := ((b*tc.H+h)*tc.S + s) * tc.D
						p := float64(pos[b*tc.S+s])
						for i := 0; i < half; i++ {
							i1, i2 := base+i, base+i+half
							if tc.interleaved == 1 {
								i1, i2 = base+2*i, base+2*i+1
							}
							angle := p / math.Pow(10000, float64(2*i)/float64(r))
							z := complex(float64(xs[i1]), float64(xs[i2])) * cmplx.Exp(complex(0, angle))
							require.InDelta(t, real(z), float64(ys[i1]), 1e-5)
							require.InDelta(t, imag(z), float64(ys[i2]), 1e-5)
						}
						for d := r; d < tc.D; d++ {
							require.Equal(t, xs[base+d], ys[base+d], "pass-through element %d", d)
						}
					}
				}
			}
		})
	}
}

// TestLiteral: position 1 of a 2-element head with angle π/2 maps
// (x1, x2) to (-x2, x1); position 0 is the identity.
func TestLiteral(t *testing.T) {
	cosT := ir.FromFloat32([]int64{2, 1}, []float32{1, 0})
	sinT := ir.FromFloat32([]int64{2, 1}, []float32{0, 1})
	x := ir.FromFloat32([]int64{1, 1, 2, 2}, []float32{3, 4, 3, 4})
	y, err := run(t, []ir.AttrOption{ir.Int("interleaved", 1)}, x, cosT, sinT, ir.FromInt64([]int64{1, 2}, []int64{0, 1}))
	require.NoError(t, err)
	require.Equal(t, []float32{3, 4, -4, 3}, y.Float32s())
}

func TestErrors(t *testing.T) {
	cosT, sinT := caches(4, 4, 10000)
	x := ir.NewTensor(ir.Float32, []int64{1, 1, 2, 4})
	pos := ir.FromInt64([]int64{1, 2}, []int64{0, 1})
	for _, tc := range []struct {
		name  string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		want  string
	}{
		{"position out of range", nil, []*ir.Tensor{x, cosT, sinT, ir.FromInt64([]int64{1, 2}, []int64{0, 4})}, "outside the caches"},
		{"negative position", nil, []*ir.Tensor{x, cosT, sinT, ir.FromInt64([]int64{1, 2}, []int64{-1, 0})}, "outside the caches"},
		{"no position ids", nil, []*ir.Tensor{x, cosT, sinT, nil}, "unsupported"},
		{"3-D X", nil, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 2, 4}), cosT, sinT, pos}, "unsupported"},
		{"odd rotary dim", []ir.AttrOption{ir.Int("rotary_embedding_dim", 3)}, []*ir.Tensor{x, cosT, sinT, pos}, "must be even"},
		{"cache width", nil, []*ir.Tensor{x, ir.NewTensor(ir.Float32, []int64{4, 3}), sinT, pos}, "max_position"},
		{"position shape", nil, []*ir.Tensor{x, cosT, sinT, ir.FromInt64([]int64{2}, []int64{0, 1})}, "position_ids has shape"},
		{"cache dtype", nil, []*ir.Tensor{x, ir.NewTensor(ir.Float64, []int64{4, 2}), sinT, pos}, "cos_cache"},
		{"int X", nil, []*ir.Tensor{ir.NewTensor(ir.Int32, []int64{1, 1, 2, 4}), cosT, sinT, pos}, "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.attrs, tc.in...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestRegistered(t *testing.T) {
	_, ok := ref.Lookup("RotaryEmbedding")
	require.True(t, ok)
}
