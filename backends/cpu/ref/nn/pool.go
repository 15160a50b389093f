package nn

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("MaxPool", maxPool)
	ref.Register("AveragePool", averagePool)
	ref.Register("LpPool", lpPool)
	ref.Register("GlobalMaxPool", globalPool(globalMax))
	ref.Register("GlobalAveragePool", globalPool(globalAverage))
	ref.Register("GlobalLpPool", globalPool(globalLp))
}

// poolSetup is a validated pooling window over X (N×C×spatial).
type poolSetup struct {
	N, C    int
	spatial []int64
	win     *windows
	out     []int64
}

// setupPool reads kernel_shape (required), strides, dilations, pads,
// auto_pad and ceil_mode for a pooling op over x.
func setupPool(op string, n *ir.Node, x *ir.Tensor) (*poolSetup, error) {
	N, C, spatial, err := spatialInput(op, x)
	if err != nil {
		return nil, err
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		return nil, fmt.Errorf("%s needs kernel_shape", op)
	}
	g, err := resolveGeom(n, spatial, kernel, n.AttrInt("ceil_mode", 0) != 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	s := &poolSetup{N: N, C: C, spatial: spatial, win: buildWindows(g)}
	s.out = append([]int64{int64(N), int64(C)}, outShape(g)...)
	return s, nil
}

// maxPool is ONNX MaxPool-12 for float, int8 and uint8 inputs. Padding
// never wins; a NaN in a window wins (as numpy's max does). The optional second output holds, for each maximum (the first
// one in window order on ties), its flat index into X: row-major over
// N, C, D1..Dn with storage_order 0, and with the spatial part column-major
// (D1 fastest) with storage_order 1.
func maxPool(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if !x.DType.IsFloat() && x.DType != ir.Int8 && x.DType != ir.Uint8 {
		return nil, ref.Unsupported("MaxPool on %v", x.DType)
	}
	order := n.AttrInt("storage_order", 0)
	if order != 0 && order != 1 {
		return nil, fmt.Errorf("MaxPool storage_order %d, want 0 or 1", order)
	}
	s, err := setupPool("MaxPool", n, x)
	if err != nil {
		return nil, err
	}
	win := s.win
	spatialIndex := func(off int) int { return off } // storage_order 0: row-major
	if order == 1 {
		spatialIndex = func(off int) int { // column-major: D1 fastest
			idx, mul := 0, 1
			coords := rowMajorCoords(off, s.spatial)
			for d := range coords {
				idx += coords[d] * mul
				mul *= int(s.spatial[d])
			}
			return idx
		}
	}
	xv := toFloats(x)
	y := make([]float64, s.N*s.C*win.outSize)
	ind := make([]int64, len(y))
	for nc := 0; nc < s.N*s.C; nc++ {
		xc := xv[nc*win.inSize : (nc+1)*win.inSize]
		for o := 0; o < win.outSize; o++ {
			taps := win.taps[win.start[o]:win.start[o+1]]
			if len(taps) == 0 {
				return nil, fmt.Errorf("MaxPool: output position %d has a window with no input element (pads too large)", o)
			}
			best, arg := xc[taps[0].x], taps[0].x
			for _, t := range taps[1:] {
				if v := xc[t.x]; v > best || (math.IsNaN(v) && !math.IsNaN(best)) {
					best, arg = v, t.x
				}
			}
			y[nc*win.outSize+o] = best
			ind[nc*win.outSize+o] = int64(nc*win.inSize + spatialIndex(arg))
		}
	}
	out := []*ir.Tensor{fromFloats(x.DType, s.out, y)}
	if len(n.Outputs) > 1 {
		out = append(out, fromInts(ir.Int64, s.out, ind))
	}
	return out, nil
}

// rowMajorCoords splits a row-major offset into coordinates over dims.
func rowMajorCoords(off int, dims []int64) []int {
	c := make([]int, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		c[d] = off % int(dims[d])
		off /= int(dims[d])
	}
	return c
}

// averagePool is ONNX AveragePool-19 for float inputs: the mean over the
// window's in-bounds elements, or with count_include_pad over all window
// positions inside the padded input (positions a ceil_mode window hangs
// past the end padding never count).
func averagePool(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat("AveragePool input", x); err != nil {
		return nil, err
	}
	s, err := setupPool("AveragePool", n, x)
	if err != nil {
		return nil, err
	}
	includePad := n.AttrInt("count_include_pad", 0) != 0
	win := s.win
	xv := toFloats(x)
	y := make([]float64, s.N*s.C*win.outSize)
	for nc := 0; nc < s.N*s.C; nc++ {
		xc := xv[nc*win.inSize : (nc+1)*win.inSize]
		for o := 0; o < win.outSize; o++ {
			taps := win.taps[win.start[o]:win.start[o+1]]
			count := len(taps)
			if includePad {
				count = win.inPad[o]
			}
			if count == 0 {
				return nil, fmt.Errorf("AveragePool: output position %d has an empty window (pads too large)", o)
			}
			var sum float64
			for _, t := range taps {
				sum += xc[t.x]
			}
			y[nc*win.outSize+o] = sum / float64(count)
		}
	}
	return []*ir.Tensor{fromFloats(x.DType, s.out, y)}, nil
}

// lpNorm is (sum |v|^p)^(1/p) over vals.
func lpNorm(vals func(yield func(float64)), p float64) float64 {
	var sum float64
	vals(func(v float64) { sum += math.Pow(math.Abs(v), p) })
	return math.Pow(sum, 1/p)
}

// lpPool is ONNX LpPool-18 for float inputs: (sum |x|^p)^(1/p) over each
// window, padding counting as zeros.
func lpPool(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat("LpPool input", x); err != nil {
		return nil, err
	}
	p := float64(n.AttrInt("p", 2))
	if p <= 0 {
		return nil, fmt.Errorf("LpPool p %g must be positive", p)
	}
	s, err := setupPool("LpPool", n, x)
	if err != nil {
		return nil, err
	}
	win := s.win
	xv := toFloats(x)
	y := make([]float64, s.N*s.C*win.outSize)
	for nc := 0; nc < s.N*s.C; nc++ {
		xc := xv[nc*win.inSize : (nc+1)*win.inSize]
		for o := 0; o < win.outSize; o++ {
			taps := win.taps[win.start[o]:win.start[o+1]]
			y[nc*win.outSize+o] = lpNorm(func(yield func(float64)) {
				for _, t := range taps {
					yield(xc[t.x])
				}
			}, p)
		}
	}
	return []*ir.Tensor{fromFloats(x.DType, s.out, y)}, nil
}

// globalReduce reduces one channel's spatial values.
type globalReduce func(n *ir.Node, vals []float64) (float64, error)

func globalMax(_ *ir.Node, vals []float64) (float64, error) {
	best := math.Inf(-1)
	for i, v := range vals {
		if i == 0 || v > best || (math.IsNaN(v) && !math.IsNaN(best)) {
			best = v
		}
	}
	return best, nil
}

func globalAverage(_ *ir.Node, vals []float64) (float64, error) {
	var sum float64
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals)), nil
}

func globalLp(n *ir.Node, vals []float64) (float64, error) {
	p := float64(n.AttrInt("p", 2))
	if p <= 0 {
		return 0, fmt.Errorf("GlobalLpPool p %g must be positive", p)
	}
	return lpNorm(func(yield func(float64)) {
		for _, v := range vals {
			yield(v)
		}
	}, p), nil
}

// globalPool builds the kernel of a Global*Pool op (float inputs): one
// value per (n, c) over all spatial positions; output N×C×1×...×1.
func globalPool(reduce globalReduce) ref.Kernel {
	return func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		if err := ref.Need(in, 0); err != nil {
			return nil, err
		}
		x := in[0]
		if err := needFloat(n.Op+" input", x); err != nil {
			return nil, err
		}
		N, C, spatial, err := spatialInput(n.Op, x)
		if err != nil {
			return nil, err
		}
		size := int(ir.NumElements(spatial))
		if size == 0 {
			return nil, fmt.Errorf("%s over empty spatial dims %v", n.Op, spatial)
		}
		xv := toFloats(x)
		y := make([]float64, N*C)
		for nc := range y {
			if y[nc], err = reduce(n, xv[nc*size:(nc+1)*size]); err != nil {
				return nil, err
			}
		}
		shape := []int64{int64(N), int64(C)}
		for range spatial {
			shape = append(shape, 1)
		}
		return []*ir.Tensor{fromFloats(x.DType, shape, y)}, nil
	}
}
