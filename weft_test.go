package weft_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

// buildMLP writes y = softmax(relu(x·W1 + b1)·W2 + b2) with the builder.
func buildMLP(t *testing.T) (*ir.Graph, [][]float64, []float64, [][]float64, []float64) {
	w1 := [][]float64{{0.5, -1, 0.25}, {1, 0.5, -0.5}}
	b1 := []float64{0.1, 0.2, -0.3}
	w2 := [][]float64{{1, -1}, {0.5, 0.5}, {-1, 2}}
	b2 := []float64{0, 0.5}
	flat := func(m [][]float64) []float64 {
		var out []float64
		for _, r := range m {
			out = append(out, r...)
		}
		return out
	}
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 2}})
	W1 := b.Const("w1", ir.FromFloat64(ir.Float32, []int64{2, 3}, flat(w1)))
	B1 := b.Const("b1", ir.FromFloat64(ir.Float32, []int64{3}, b1))
	W2 := b.Const("w2", ir.FromFloat64(ir.Float32, []int64{3, 2}, flat(w2)))
	B2 := b.Const("b2", ir.FromFloat64(ir.Float32, []int64{2}, b2))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, W1), B1))
	y := b.OpA("Softmax", []ir.AttrOption{ir.Int("axis", -1)}, b.Op("Add", b.Op("MatMul", h, W2), B2))
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	return g, w1, b1, w2, b2
}

func TestBuilderModelEndToEnd(t *testing.T) {
	for _, level := range []int{0, 1, 2} {
		g, w1, b1, w2, b2 := buildMLP(t)
		m, err := weft.New(g, weft.Options{OptLevel: level, Verify: true})
		require.NoError(t, err)
		xs := [][]float64{{1, 2}, {-0.5, 0.25}, {3, -1}}
		x := ir.FromFloat64(ir.Float32, []int64{3, 2}, []float64{1, 2, -0.5, 0.25, 3, -1})
		var wg sync.WaitGroup
		for r := 0; r < 4; r++ { // concurrent runs share the session
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": x})
				require.NoError(t, err)
				y := out["y"]
				require.Equal(t, []int64{3, 2}, y.Shape)
				for i, row := range xs {
					// independent float64 reference
					h := make([]float64, 3)
					for j := range h {
						h[j] = b1[j]
						for k := range row {
							h[j] += row[k] * w1[k][j]
						}
						h[j] = math.Max(h[j], 0)
					}
					z := make([]float64, 2)
					for j := range z {
						z[j] = b2[j]
						for k := range h {
							z[j] += h[k] * w2[k][j]
						}
					}
					e0, e1 := math.Exp(z[0]), math.Exp(z[1])
					require.InDelta(t, e0/(e0+e1), y.Float64(i*2), 1e-6)
					require.InDelta(t, e1/(e0+e1), y.Float64(i*2+1), 1e-6)
				}
			}()
		}
		wg.Wait()
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := weft.Open("model.tflite", weft.DefaultOptions())
	require.ErrorIs(t, err, ir.ErrUnsupported)
	_, err = weft.Open("/nonexistent/model.onnx", weft.DefaultOptions())
	require.ErrorContains(t, err, "/nonexistent/model.onnx")
}
