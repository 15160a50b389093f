package llm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// fake is a Runner with declared inputs and outputs that computes nothing.
type fake struct{ in, out []*ir.Value }

func (f *fake) Inputs() []*ir.Value  { return f.in }
func (f *fake) Outputs() []*ir.Value { return f.out }
func (f *fake) RunInto(context.Context, []*ir.Tensor, []*ir.Tensor) error {
	return nil
}

// graphIO declares the interface of a model with the given geometry;
// edit may change it.
func graphIO(seq, layers, kvh, p, hd, vocab int) *fake {
	g := ir.NewGraph("t")
	f := &fake{}
	S, P := int64(seq), int64(p)
	f.in = append(f.in, g.AddInput("tokens", ir.Int64, ir.S(1, S)), g.AddInput("positions", ir.Int64, ir.S(1, S)))
	f.out = append(f.out, g.NewValue("logits", ir.Float32, ir.S(1, S, int64(vocab))))
	for l := 0; l < layers; l++ {
		f.in = append(f.in, g.AddInput(cacheKey(l), ir.Float32, ir.S(1, int64(kvh), P, int64(hd))),
			g.AddInput(cacheValue(l), ir.Float32, ir.S(1, int64(kvh), P, int64(hd))))
	}
	return f
}

func TestNewChecksGraphs(t *testing.T) {
	m, err := New(graphIO(1, 2, 2, 16, 4, 10), graphIO(4, 2, 2, 16, 4, 10))
	require.NoError(t, err)
	require.Equal(t, [5]int{2, 2, 4, 16, 10}, [5]int{m.Layers, m.KVHeads, m.HeadDim, m.Capacity, m.Vocab})

	// Inputs in another order are matched by name.
	f := graphIO(1, 1, 1, 8, 2, 5)
	f.in[0], f.in[2] = f.in[2], f.in[0]
	_, err = New(f)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		rs   []Runner
		want string
	}{
		{"no decode graph", []Runner{graphIO(4, 1, 1, 8, 2, 5)}, "no decode graph"},
		{"none", nil, "no decode graph"},
		{"duplicate", []Runner{graphIO(1, 1, 1, 8, 2, 5), graphIO(1, 1, 1, 8, 2, 5)}, "two graphs"},
		{"geometry", []Runner{graphIO(1, 1, 1, 8, 2, 5), graphIO(2, 1, 1, 9, 2, 5)}, "differs"},
		{"missing output", []Runner{func() Runner { f := graphIO(1, 1, 1, 8, 2, 5); f.out = nil; return f }()}, "no output"},
		{"extra output", []Runner{func() Runner {
			f := graphIO(1, 1, 1, 8, 2, 5)
			f.out = append(f.out, f.in[2])
			return f
		}()}, "2 outputs"},
		{"cache type", []Runner{func() Runner { f := graphIO(1, 1, 1, 8, 2, 5); f.in[2].DType = ir.Int8; return f }()}, "unsupported"},
		{"symbolic", []Runner{func() Runner {
			f := graphIO(1, 1, 1, 8, 2, 5)
			f.in[0].Shape = ir.Shape{{Size: 1}, ir.Sym("s")}
			return f
		}()}, "static"},
		{"positions shape", []Runner{func() Runner {
			f := graphIO(1, 1, 1, 8, 2, 5)
			f.in[1].Shape = ir.S(1, 2)
			return f
		}()}, `"positions" has shape`},
		{"value cache shape", []Runner{func() Runner {
			f := graphIO(1, 1, 1, 8, 2, 5)
			f.in[3].Shape = ir.S(1, 1, 7, 2)
			return f
		}()}, `"cache_value.0" has shape`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.rs...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPick: the smallest bucket that holds the rest of the input and fits
// in the cache; else the largest that fits.
func TestPick(t *testing.T) {
	m, err := New(graphIO(1, 1, 1, 20, 2, 5), graphIO(4, 1, 1, 20, 2, 5), graphIO(16, 1, 1, 20, 2, 5))
	require.NoError(t, err)
	for _, tc := range []struct{ pos, n, want int }{
		{0, 1, 1}, {0, 2, 4}, {0, 4, 4}, {0, 5, 16}, {0, 40, 16}, {5, 12, 4}, {5, 3, 4}, {17, 3, 1}, {16, 4, 4},
	} {
		m.pos = tc.pos
		require.Equal(t, tc.want, m.pick(tc.n).seq, "pos %d, n %d", tc.pos, tc.n)
	}
}
