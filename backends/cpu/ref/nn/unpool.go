package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("MaxUnpool", maxUnpool)
	ref.Register("MaxRoiPool", maxRoiPool)
	ref.Register("LpNormalization", lpNormalization)
}

// maxUnpool is ONNX MaxUnpool-11 (float inputs): a zero tensor of the
// inferred shape N×C×((in-1)·stride + kernel - padB - padE) with each X
// value written at the flat index I holds (as MaxPool's Indices output
// produces them; a later duplicate index overwrites an earlier one).
//
// With the optional output_shape input the pads are ignored for the
// inferred shape (output_shape is what disambiguates the size), the
// indices still address that inferred shape, and the result is placed at
// the start of a zero tensor of output_shape, which must be at least as
// large in every dim. This is what the ONNX reference and its test data
// do; it differs from PyTorch's max_unpool, whose indices address
// output_size directly.
func maxUnpool(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, ind, shapeT := in[0], in[1], opt(in, 2)
	if err := needFloat("MaxUnpool X", x); err != nil {
		return nil, err
	}
	if ind.DType != ir.Int64 || !slices.Equal(ind.Shape, x.Shape) {
		return nil, fmt.Errorf("MaxUnpool indices are %v, want i64%v", ind, x.Shape)
	}
	N, C, spatial, err := spatialInput("MaxUnpool", x)
	if err != nil {
		return nil, err
	}
	r := len(spatial)
	kernel := n.AttrInts("kernel_shape", nil)
	if len(kernel) != r {
		return nil, fmt.Errorf("MaxUnpool kernel_shape %v, want %d dims", kernel, r)
	}
	if err := checkAttrLen(n, "strides", r); err != nil {
		return nil, err
	}
	if err := checkAttrLen(n, "pads", 2*r); err != nil {
		return nil, err
	}
	strides := n.AttrInts("strides", nil)
	pads := n.AttrInts("pads", nil)
	if shapeT != nil {
		pads = nil // output_shape replaces the pads
	}
	inferred := []int64{int64(N), int64(C)}
	for d := 0; d < r; d++ {
		s := int64(1)
		if strides != nil {
			s = strides[d]
		}
		var pb, pe int64
		if pads != nil {
			pb, pe = pads[d], pads[d+r]
		}
		if kernel[d] <= 0 || s <= 0 || pb < 0 || pe < 0 {
			return nil, fmt.Errorf("MaxUnpool axis %d: kernel %d, stride %d must be positive, pads %d, %d not negative", d, kernel[d], s, pb, pe)
		}
		o := (spatial[d]-1)*s + kernel[d] - pb - pe
		if o <= 0 {
			return nil, fmt.Errorf("MaxUnpool output dim %d is %d", d, o)
		}
		inferred = append(inferred, o)
	}
	y := ir.NewTensor(x.DType, inferred)
	size := int64(y.Len())
	for i := 0; i < x.Len(); i++ {
		j := ind.Int64(i)
		if j < 0 || j >= size {
			return nil, fmt.Errorf("MaxUnpool index %d at %d is outside the output of %d elements", j, i, size)
		}
		y.SetFloat64(int(j), x.Float64(i))
	}
	if shapeT == nil {
		return []*ir.Tensor{y}, nil
	}
	if !shapeT.DType.IsInt() || len(shapeT.Shape) != 1 || shapeT.Len() != r+2 {
		return nil, fmt.Errorf("MaxUnpool output_shape is %v, want a 1-D int tensor of %d dims", shapeT, r+2)
	}
	shape := shapeT.Int64s()
	for d := range shape {
		if shape[d] < inferred[d] {
			return nil, fmt.Errorf("MaxUnpool output_shape %v is smaller than the inferred shape %v", shape, inferred)
		}
	}
	return []*ir.Tensor{embed(y, shape)}, nil
}

// embed copies t into the leading corner of a zero tensor of shape.
func embed(t *ir.Tensor, shape []int64) *ir.Tensor {
	out := ir.NewTensor(t.DType, shape)
	dst := ref.Strides(shape)
	it := ref.NewIndexer(t.Shape, dst)
	size := t.DType.Size()
	for i := 0; i < t.Len(); i++ {
		o := int(it.Offsets[0])
		copy(out.Data[o*size:(o+1)*size], t.Data[i*size:(i+1)*size])
		it.Next()
	}
	return out
}

// maxRoiPool is ONNX MaxRoiPool-1 (float inputs), Caffe-style ROI max
// pooling. Each roi [batch, x1, y1, x2, y2] is scaled by spatial_scale and
// rounded (half away from zero); the roi (at least 1×1, ends inclusive) is
// split into pooled_shape bins of height roiH/ph: bin i covers rows
// floor(i·binH) to ceil((i+1)·binH), clipped to the input. An empty bin
// yields 0.
func maxRoiPool(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, rois := in[0], in[1]
	if err := needFloat("MaxRoiPool X", x); err != nil {
		return nil, err
	}
	if err := needFloat("MaxRoiPool rois", rois); err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("MaxRoiPool X has shape %v, want N x C x H x W", x.Shape)
	}
	if len(rois.Shape) != 2 || rois.Shape[1] != 5 {
		return nil, fmt.Errorf("MaxRoiPool rois have shape %v, want num_rois x 5", rois.Shape)
	}
	pooled := n.AttrInts("pooled_shape", nil)
	if len(pooled) != 2 || pooled[0] <= 0 || pooled[1] <= 0 {
		return nil, fmt.Errorf("MaxRoiPool pooled_shape %v, want two positive dims", pooled)
	}
	scale := float64(n.AttrFloat("spatial_scale", 1))
	N, C, H, W := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	R, PH, PW := int(rois.Shape[0]), int(pooled[0]), int(pooled[1])
	xv := toFloats(x)
	y := make([]float64, R*C*PH*PW)
	for r := 0; r < R; r++ {
		b := rois.Float64(r * 5)
		if b != math.Trunc(b) || b < 0 || int(b) >= N {
			return nil, fmt.Errorf("MaxRoiPool roi %d has batch index %g, want an integer in [0, %d)", r, b, N)
		}
		x1 := int(math.Round(rois.Float64(r*5+1) * scale))
		y1 := int(math.Round(rois.Float64(r*5+2) * scale))
		x2 := int(math.Round(rois.Float64(r*5+3) * scale))
		y2 := int(math.Round(rois.Float64(r*5+4) * scale))
		binH := float64(max(y2-y1+1, 1)) / float64(PH)
		binW := float64(max(x2-x1+1, 1)) / float64(PW)
		for c := 0; c < C; c++ {
			xc := xv[(int(b)*C+c)*H*W:]
			for ph := 0; ph < PH; ph++ {
				h0 := min(max(int(math.Floor(float64(ph)*binH))+y1, 0), H)
				h1 := min(max(int(math.Ceil(float64(ph+1)*binH))+y1, 0), H)
				for pw := 0; pw < PW; pw++ {
					w0 := min(max(int(math.Floor(float64(pw)*binW))+x1, 0), W)
					w1 := min(max(int(math.Ceil(float64(pw+1)*binW))+x1, 0), W)
					v := 0.0
					if h1 > h0 && w1 > w0 {
						v = math.Inf(-1)
						for h := h0; h < h1; h++ {
							for w := w0; w < w1; w++ {
								v = max(v, xc[h*W+w])
							}
						}
					}
					y[((r*C+c)*PH+ph)*PW+pw] = v
				}
			}
		}
	}
	return []*ir.Tensor{fromFloats(x.DType, []int64{int64(R), int64(C), int64(PH), int64(PW)}, y)}, nil
}

// lpNormalization is ONNX LpNormalization-1 (float inputs, p 1 or 2):
// x divided by its Lp norm along axis. A zero norm gives NaN (0/0), as the
// ONNX reference implementation does.
func lpNormalization(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat("LpNormalization input", x); err != nil {
		return nil, err
	}
	p := n.AttrInt("p", 2)
	if p != 1 && p != 2 {
		return nil, fmt.Errorf("LpNormalization p %d, want 1 or 2", p)
	}
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("LpNormalization needs rank >= 1")
	}
	axis, err := ref.NormAxis(n.AttrInt("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	xv := toFloats(x)
	d := int(x.Shape[axis])
	inner := int(ir.NumElements(x.Shape[axis+1:]))
	outer := int(ir.NumElements(x.Shape[:axis]))
	y := make([]float64, len(xv))
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*d*inner + i
			norm := lpNorm(func(yield func(float64)) {
				for k := 0; k < d; k++ {
					yield(xv[base+k*inner])
				}
			}, float64(p))
			for k := 0; k < d; k++ {
				y[base+k*inner] = xv[base+k*inner] / norm
			}
		}
	}
	return []*ir.Tensor{fromFloats(x.DType, x.Shape, y)}, nil
}
