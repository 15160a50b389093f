package vision

import (
	"fmt"
	"math"
	"sort"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("NonMaxSuppression", nmsKernel) }

// nmsKernel implements NonMaxSuppression: boxes [B, S, 4], scores
// [B, K, S], max_output_boxes_per_class? (default 0: select nothing),
// iou_threshold? (default 0), score_threshold? (default: none). For each
// batch and class, boxes scoring above score_threshold are visited by
// descending score (ties: lower index first) and kept unless their IoU
// with an already kept box exceeds iou_threshold, until
// max_output_boxes_per_class are kept. The output [num_selected, 3] lists
// (batch, class, box) triples in batch, class, selection order.
// center_point_box 0 reads boxes as two opposite corners (y1, x1, y2, x2)
// in either order, 1 as (x_center, y_center, width, height).
func nmsKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	boxes, scores := in[0], in[1]
	if !boxes.DType.IsFloat() || !scores.DType.IsFloat() {
		return nil, fmt.Errorf("boxes %v and scores %v must be float tensors", boxes.DType, scores.DType)
	}
	if len(boxes.Shape) != 3 || boxes.Shape[2] != 4 {
		return nil, fmt.Errorf("boxes has shape %v, want [batches, boxes, 4]", boxes.Shape)
	}
	nb, ns := int(boxes.Shape[0]), int(boxes.Shape[1])
	if len(scores.Shape) != 3 || int(scores.Shape[0]) != nb || int(scores.Shape[2]) != ns {
		return nil, fmt.Errorf("scores has shape %v, want [%d, classes, %d]", scores.Shape, nb, ns)
	}
	nc := int(scores.Shape[1])
	centre := n.AttrInt("center_point_box", 0)
	if centre != 0 && centre != 1 {
		return nil, fmt.Errorf("center_point_box is %d, want 0 or 1", centre)
	}
	scalar := func(i int, name string) (*ir.Tensor, error) {
		if i >= len(in) || in[i] == nil || in[i].Len() == 0 {
			return nil, nil
		}
		if in[i].Len() != 1 {
			return nil, fmt.Errorf("%s has shape %v, want a single value", name, in[i].Shape)
		}
		return in[i], nil
	}
	var maxOut int64
	var iouTh float64
	scoreTh := math.Inf(-1)
	hasScoreTh := false
	if t, err := scalar(2, "max_output_boxes_per_class"); err != nil {
		return nil, err
	} else if t != nil {
		if !t.DType.IsInt() {
			return nil, fmt.Errorf("max_output_boxes_per_class is %v, want an integer", t.DType)
		}
		maxOut = max(t.Int64(0), 0)
	}
	if t, err := scalar(3, "iou_threshold"); err != nil {
		return nil, err
	} else if t != nil {
		iouTh = t.Float64(0)
		if iouTh < 0 || iouTh > 1 {
			return nil, fmt.Errorf("iou_threshold is %v, want a value in [0, 1]", iouTh)
		}
	}
	if t, err := scalar(4, "score_threshold"); err != nil {
		return nil, err
	} else if t != nil {
		scoreTh, hasScoreTh = t.Float64(0), true
	}

	var sel []int64
	for b := 0; b < nb; b++ {
		corners := make([][4]float64, ns) // (ymin, xmin, ymax, xmax)
		for s := range corners {
			v := [4]float64{}
			for k := range v {
				v[k] = boxes.Float64((b*ns+s)*4 + k)
			}
			if centre == 1 {
				corners[s] = [4]float64{v[1] - v[3]/2, v[0] - v[2]/2, v[1] + v[3]/2, v[0] + v[2]/2}
			} else {
				corners[s] = [4]float64{math.Min(v[0], v[2]), math.Min(v[1], v[3]), math.Max(v[0], v[2]), math.Max(v[1], v[3])}
			}
		}
		for c := 0; c < nc; c++ {
			score := func(s int) float64 { return scores.Float64((b*nc+c)*ns + s) }
			var cand []int
			for s := 0; s < ns; s++ {
				if !hasScoreTh || score(s) > scoreTh {
					cand = append(cand, s)
				}
			}
			sort.SliceStable(cand, func(i, j int) bool { return score(cand[i]) > score(cand[j]) })
			var kept []int
			for _, s := range cand {
				if int64(len(kept)) >= maxOut {
					break
				}
				keep := true
				for _, k := range kept {
					if overlaps(corners[s], corners[k], iouTh) {
						keep = false
						break
					}
				}
				if keep {
					kept = append(kept, s)
					sel = append(sel, int64(b), int64(c), int64(s))
				}
			}
		}
	}
	return []*ir.Tensor{ir.FromInt64([]int64{int64(len(sel) / 3), 3}, sel)}, nil
}

// overlaps reports whether two boxes (ymin, xmin, ymax, xmax) have an IoU
// above th. Boxes that do not intersect, or that have no area, never do.
func overlaps(a, b [4]float64, th float64) bool {
	iy0, ix0 := math.Max(a[0], b[0]), math.Max(a[1], b[1])
	iy1, ix1 := math.Min(a[2], b[2]), math.Min(a[3], b[3])
	if iy1 <= iy0 || ix1 <= ix0 {
		return false
	}
	inter := (iy1 - iy0) * (ix1 - ix0)
	areaA := (a[2] - a[0]) * (a[3] - a[1])
	areaB := (b[2] - b[0]) * (b[3] - b[1])
	union := areaA + areaB - inter
	if areaA <= 0 || areaB <= 0 || union <= 0 {
		return false
	}
	return inter/union > th
}
