package vision

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("RoiAlign", roiAlignKernel) }

// roiAlignKernel implements RoiAlign: X [N, C, H, W], rois [R, 4] as
// (x1, y1, x2, y2) in input coordinates before spatial_scale, batch_indices
// [R]; Y is [R, C, output_height, output_width]. Each output bin averages
// (mode avg) or takes the maximum of (mode max) bilinear samples on a
// sampling_ratio² grid (ceil(roi size / output size) per side when 0).
//
// As in ONNX Runtime, whose behaviour the operator's tests encode: with
// coordinate_transformation_mode half_pixel the roi is shifted by -0.5 pixel,
// with output_half_pixel (the legacy mode) it is not but is at least 1×1;
// a sample more than one pixel outside the image counts as 0; and max mode
// takes the maximum over the weighted corner values w·v of every sample,
// not over interpolated values.
func roiAlignKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	x, rois, bi := in[0], in[1], in[2]
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("RoiAlign of dtype %v", x.DType)
	}
	if !rois.DType.IsFloat() || !bi.DType.IsInt() {
		return nil, fmt.Errorf("rois is %v and batch_indices %v, want float and integer", rois.DType, bi.DType)
	}
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("X has shape %v, want [N, C, H, W]", x.Shape)
	}
	if len(rois.Shape) != 2 || rois.Shape[1] != 4 {
		return nil, fmt.Errorf("rois has shape %v, want [num_rois, 4]", rois.Shape)
	}
	numRois := int(rois.Shape[0])
	if len(bi.Shape) != 1 || int(bi.Shape[0]) != numRois {
		return nil, fmt.Errorf("batch_indices has shape %v, want [%d]", bi.Shape, numRois)
	}
	// The importer sets output_half_pixel explicitly for RoiAlign before
	// opset 16, which had no attribute and behaved that way.
	halfPixel := false
	switch m := n.AttrString("coordinate_transformation_mode", "half_pixel"); m {
	case "half_pixel":
		halfPixel = true
	case "output_half_pixel":
	default:
		return nil, ref.Unsupported("coordinate_transformation_mode %q", m)
	}
	maxMode := false
	switch m := n.AttrString("mode", "avg"); m {
	case "avg":
	case "max":
		maxMode = true
	default:
		return nil, ref.Unsupported("RoiAlign mode %q", m)
	}
	oh, ow := int(n.AttrInt("output_height", 1)), int(n.AttrInt("output_width", 1))
	ratio := int(n.AttrInt("sampling_ratio", 0))
	scale := float64(n.AttrFloat("spatial_scale", 1))
	if oh < 1 || ow < 1 || ratio < 0 {
		return nil, fmt.Errorf("output %dx%d and sampling_ratio %d, want positive sizes and ratio >= 0", oh, ow, ratio)
	}
	N, C, H, W := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	out := ir.NewTensor(x.DType, []int64{int64(numRois), int64(C), int64(oh), int64(ow)})
	offset := 0.0
	if halfPixel {
		offset = 0.5
	}
	for r := 0; r < numRois; r++ {
		b := int(bi.Int64(r))
		if b < 0 || b >= N {
			return nil, fmt.Errorf("batch_indices[%d] is %d, outside [0, %d)", r, b, N)
		}
		x1, y1 := rois.Float64(r*4)*scale-offset, rois.Float64(r*4+1)*scale-offset
		x2, y2 := rois.Float64(r*4+2)*scale-offset, rois.Float64(r*4+3)*scale-offset
		rw, rh := x2-x1, y2-y1
		if !halfPixel {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		binH, binW := rh/float64(oh), rw/float64(ow)
		gh, gw := ratio, ratio
		if ratio == 0 {
			gh, gw = int(math.Ceil(rh/float64(oh))), int(math.Ceil(rw/float64(ow)))
		}
		count := math.Max(float64(gh*gw), 1)
		for c := 0; c < C; c++ {
			img := func(yy, xx int) float64 { return x.Float64(((b*C+c)*H+yy)*W + xx) }
			for ph := 0; ph < oh; ph++ {
				for pw := 0; pw < ow; pw++ {
					acc, first := 0.0, true
					for iy := 0; iy < gh; iy++ {
						sy := y1 + float64(ph)*binH + (float64(iy)+0.5)*binH/float64(gh)
						for ix := 0; ix < gw; ix++ {
							sx := x1 + float64(pw)*binW + (float64(ix)+0.5)*binW/float64(gw)
							pos, w := bilinearCorners(sy, sx, H, W)
							if maxMode {
								for k := range pos {
									v := w[k] * img(pos[k][0], pos[k][1])
									if first || v > acc {
										acc, first = v, false
									}
								}
							} else {
								for k := range pos {
									acc += w[k] * img(pos[k][0], pos[k][1])
								}
							}
						}
					}
					if !maxMode {
						acc /= count
					}
					out.SetFloat64(((r*C+c)*oh+ph)*ow+pw, acc)
				}
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// bilinearCorners returns the four pixels (y, x) around the sample (y, x)
// and their bilinear weights. A sample more than a pixel outside the image
// gets zero weights; one within a pixel is clamped onto the edge.
func bilinearCorners(y, x float64, h, w int) ([4][2]int, [4]float64) {
	var pos [4][2]int
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
		return pos, [4]float64{}
	}
	y, x = math.Max(y, 0), math.Max(x, 0)
	yl, xl := int(y), int(x)
	yh, xh := yl+1, xl+1
	if yl >= h-1 {
		yl, yh, y = h-1, h-1, float64(h-1)
	}
	if xl >= w-1 {
		xl, xh, x = w-1, w-1, float64(w-1)
	}
	ly, lx := y-float64(yl), x-float64(xl)
	hy, hx := 1-ly, 1-lx
	pos = [4][2]int{{yl, xl}, {yl, xh}, {yh, xl}, {yh, xh}}
	return pos, [4]float64{hy * hx, hy * lx, ly * hx, ly * lx}
}
