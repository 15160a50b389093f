package vision

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("GridSample", gridSampleKernel) }

// gridSampler holds one GridSample node's settings and input geometry.
type gridSampler struct {
	mode, padding string // mode: linear, nearest or cubic (normalized names)
	alignCorners  bool
	dims          []int     // spatial dims of X
	lo, hi        []float64 // the per-dim coordinate borders
}

// gridSampleKernel implements GridSample for any number r of spatial dims:
// X [N, C, D1..Dr], grid [N, O1..Ok, r] holding normalized coordinates in
// [-1, 1] listed innermost dim first (x, y, ...); Y is [N, C, O1..Ok].
// It follows the ONNX reference: coordinates are denormalized (align_corners
// picks whether ±1 are the centres or the outer edges of the corner
// pixels); with border or reflection padding a coordinate outside the
// borders is clamped or reflected first; then nearest (round half to even;
// half away from zero in 3-D, like PyTorch), linear or cubic (Keys, a =
// -0.75) interpolation reads pixels, each tap outside the image being 0
// (zeros), clamped (border) or reflected (reflection).
func gridSampleKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, grid := in[0], in[1]
	if !x.DType.Valid() || x.DType == ir.Bool {
		return nil, ref.Unsupported("GridSample of dtype %v", x.DType)
	}
	if !grid.DType.IsFloat() {
		return nil, fmt.Errorf("grid is %v, want a float type", grid.DType)
	}
	r := len(x.Shape) - 2
	if r < 1 {
		return nil, fmt.Errorf("X has shape %v, want [N, C, D1, ...]", x.Shape)
	}
	if len(grid.Shape) != r+2 || grid.Shape[0] != x.Shape[0] || grid.Shape[r+1] != int64(r) {
		return nil, fmt.Errorf("grid has shape %v, want [%d, ..., %d] of rank %d for X %v", grid.Shape, x.Shape[0], r, r+2, x.Shape)
	}
	g := &gridSampler{padding: n.AttrString("padding_mode", "zeros"), alignCorners: n.AttrInt("align_corners", 0) != 0}
	switch m := n.AttrString("mode", "linear"); m {
	case "bilinear", "linear":
		g.mode = "linear"
	case "bicubic", "cubic":
		g.mode = "cubic"
	case "nearest":
		g.mode = "nearest"
	default:
		return nil, ref.Unsupported("GridSample mode %q", m)
	}
	switch g.padding {
	case "zeros", "border", "reflection":
	default:
		return nil, ref.Unsupported("padding_mode %q", g.padding)
	}
	for _, d := range x.Shape[2:] {
		g.dims = append(g.dims, int(d))
		if g.alignCorners {
			g.lo, g.hi = append(g.lo, 0), append(g.hi, float64(d)-1)
		} else {
			g.lo, g.hi = append(g.lo, -0.5), append(g.hi, float64(d)-0.5)
		}
	}

	batch, channels := int(x.Shape[0]), int(x.Shape[1])
	outSpatial := grid.Shape[1 : r+1]
	points := int(ir.NumElements(outSpatial))
	image := int(ir.NumElements(x.Shape[2:]))
	out := ir.NewTensor(x.DType, append([]int64{x.Shape[0], x.Shape[1]}, outSpatial...))
	coord := make([]float64, r)
	for b := 0; b < batch; b++ {
		for p := 0; p < points; p++ {
			for i := 0; i < r; i++ {
				// grid lists x (the last dim) first.
				coord[i] = g.denormalize(grid.Float64((b*points+p)*r+r-1-i), i)
			}
			taps, weights := g.taps(coord)
			for c := 0; c < channels; c++ {
				base := (b*channels + c) * image
				sum := 0.0
				for k, t := range taps {
					if t >= 0 {
						sum += weights[k] * x.Float64(base+t)
					}
				}
				out.SetFloat64((b*channels+c)*points+p, sum)
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// denormalize maps a normalized coordinate of spatial dim i to pixels,
// then rounds (nearest) and applies border/reflection padding to it.
func (g *gridSampler) denormalize(v float64, i int) float64 {
	d := float64(g.dims[i])
	var x float64
	if g.alignCorners {
		x = (v + 1) / 2 * (d - 1)
	} else {
		x = ((v+1)*d - 1) / 2
	}
	if g.mode == "nearest" {
		if len(g.dims) == 3 {
			x = math.Round(x) // half away from zero
		} else {
			x = math.RoundToEven(x)
		}
	}
	if x < g.lo[i] || x > g.hi[i] {
		switch g.padding {
		case "border":
			x = math.Min(math.Max(x, 0), d-1)
		case "reflection":
			x = reflect(x, g.lo[i], g.hi[i])
		}
	}
	return x
}

// reflect folds x back into [lo, hi] by mirroring at the borders.
func reflect(x, lo, hi float64) float64 {
	span := hi - lo
	if span <= 0 {
		return lo
	}
	switch {
	case x < lo:
		d := lo - x
		k := math.Floor(d / span)
		rem := d - k*span
		if int64(k)%2 == 0 {
			return lo + rem
		}
		return hi - rem
	case x > hi:
		d := x - hi
		k := math.Floor(d / span)
		rem := d - k*span
		if int64(k)%2 == 0 {
			return hi - rem
		}
		return lo + rem
	}
	return x
}

// taps returns the linear pixel offsets (within one image; -1 for a zero
// pixel) and weights that interpolate the point at coord.
func (g *gridSampler) taps(coord []float64) ([]int, []float64) {
	r := len(coord)
	idx := make([][]int, r)
	w := make([][]float64, r)
	for i, v := range coord {
		switch g.mode {
		case "nearest":
			idx[i], w[i] = []int{int(v)}, []float64{1} // int() truncates, as the reference's astype
		case "linear":
			x0 := math.Floor(v)
			t := v - x0
			idx[i], w[i] = []int{int(x0), int(x0) + 1}, []float64{1 - t, t}
		default:
			x0 := math.Floor(v)
			t := v - x0
			k := int(x0)
			idx[i] = []int{k - 1, k, k + 1, k + 2}
			w[i] = []float64{cubic(t+1, -0.75), cubic(t, -0.75), cubic(1-t, -0.75), cubic(2-t, -0.75)}
		}
	}
	// Expand the per-dim taps into their product.
	offs, weights := []int{0}, []float64{1}
	for i := 0; i < r; i++ {
		var no []int
		var nw []float64
		for k, o := range offs {
			for j, p := range idx[i] {
				q := g.pixel(p, i)
				if o < 0 || q < 0 {
					no, nw = append(no, -1), append(nw, 0)
					continue
				}
				no = append(no, o*g.dims[i]+q)
				nw = append(nw, weights[k]*w[i][j])
			}
		}
		offs, weights = no, nw
	}
	return offs, weights
}

// pixel maps a tap index along spatial dim i into the image by the padding
// mode, or returns -1 for a zero (padding) pixel.
func (g *gridSampler) pixel(p, i int) int {
	d := g.dims[i]
	if p >= 0 && p < d {
		return p
	}
	switch g.padding {
	case "border":
		return min(max(p, 0), d-1)
	case "reflection":
		q := int(reflect(float64(p), g.lo[i], g.hi[i]))
		return min(max(q, 0), d-1)
	}
	return -1
}
