package nn

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestPoolsMatchPaddedScan checks 2-D MaxPool and AveragePool against an
// independent scan: the input is first copied into an explicitly padded
// grid whose pad cells are marked, then every window is read from that
// grid (cells past the padded grid, which only ceil_mode windows reach,
// are skipped).
func TestPoolsMatchPaddedScan(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 300; iter++ {
		var k, s, dl, in, pb, pe, out [2]int
		ceil := rng.Intn(2) == 1
		for d := 0; d < 2; d++ {
			k[d], s[d], dl[d] = 1+rng.Intn(3), 1+rng.Intn(3), 1+rng.Intn(2)
			span := (k[d]-1)*dl[d] + 1
			in[d] = span + rng.Intn(5)
			pb[d], pe[d] = rng.Intn(k[d]), rng.Intn(k[d]) // pads smaller than the kernel
			num := in[d] + pb[d] + pe[d] - span
			out[d] = num/s[d] + 1
			if ceil && num%s[d] != 0 {
				out[d]++
				if (out[d]-1)*s[d] >= in[d]+pb[d] {
					out[d]--
				}
			}
		}
		C := 1 + rng.Intn(2)
		x := make([]float64, C*in[0]*in[1])
		for i := range x {
			x[i] = float64(rng.Intn(19) - 9)
		}
		ph, pw := in[0]+pb[0]+pe[0], in[1]+pb[1]+pe[1]
		attrs := a(ir.Ints("kernel_shape", int64(k[0]), int64(k[1])), ir.Ints("strides", int64(s[0]), int64(s[1])),
			ir.Ints("dilations", int64(dl[0]), int64(dl[1])), ir.Ints("pads", int64(pb[0]), int64(pb[1]), int64(pe[0]), int64(pe[1])))
		if ceil {
			attrs = append(attrs, ir.Int("ceil_mode", 1))
		}
		name := fmt.Sprintf("iter %d: in %v k %v s %v d %v pads %v/%v ceil %v", iter, in, k, s, dl, pb, pe, ceil)
		xt := f32(sh(1, int64(C), int64(in[0]), int64(in[1])), x...)
		mp, err := call("MaxPool", attrs, 1, xt)
		require.NoError(t, err, name)
		apEx, err := call("AveragePool", attrs, 1, xt)
		require.NoError(t, err, name)
		apIn, err := call("AveragePool", append(attrs, ir.Int("count_include_pad", 1)), 1, xt)
		require.NoError(t, err, name)
		require.Equal(t, []int64{1, int64(C), int64(out[0]), int64(out[1])}, mp[0].Shape, name)
		for c := 0; c < C; c++ {
			// padded grid: NaN marks a pad cell
			grid := make([]float64, ph*pw)
			for i := range grid {
				grid[i] = math.NaN()
			}
			for h := 0; h < in[0]; h++ {
				for w := 0; w < in[1]; w++ {
					grid[(h+pb[0])*pw+w+pb[1]] = x[(c*in[0]+h)*in[1]+w]
				}
			}
			for oh := 0; oh < out[0]; oh++ {
				for ow := 0; ow < out[1]; ow++ {
					best, sum, real, cells := math.Inf(-1), 0.0, 0, 0
					for kh := 0; kh < k[0]; kh++ {
						for kw := 0; kw < k[1]; kw++ {
							gh, gw := oh*s[0]+kh*dl[0], ow*s[1]+kw*dl[1]
							if gh >= ph || gw >= pw {
								continue
							}
							cells++
							v := grid[gh*pw+gw]
							if math.IsNaN(v) {
								continue
							}
							real++
							sum += v
							best = math.Max(best, v)
						}
					}
					i := (c*out[0]+oh)*out[1] + ow
					require.Equal(t, best, mp[0].Float64(i), "%s: max at %d", name, i)
					require.InDelta(t, sum/float64(real), apEx[0].Float64(i), 1e-5, "%s: avg at %d", name, i)
					require.InDelta(t, sum/float64(cells), apIn[0].Float64(i), 1e-5, "%s: avg incl pad at %d", name, i)
				}
			}
		}
	}
}
