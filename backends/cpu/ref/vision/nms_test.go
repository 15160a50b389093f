package vision

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestNonMaxSuppression(t *testing.T) {
	// Box 1 overlaps box 0 with IoU 0.9/1.1 ≈ 0.82; box 3 equals box 0
	// (same score, higher index); box 2 is apart.
	boxes := f32([]int64{1, 4, 4},
		0, 0, 1, 1,
		0, 0.1, 1, 1.1,
		0, 2, 1, 3,
		1, 1, 0, 0) // box 0 again, corners flipped
	scores := f32([]int64{1, 1, 4}, 0.9, 0.8, 0.7, 0.9)
	scalar := func(v float64) *ir.Tensor { return f32(nil, v) }
	tests := []struct {
		name  string
		attrs ir.Attrs
		ins   []*ir.Tensor
		want  []int64
	}{
		{"iou 0.5", nil, []*ir.Tensor{boxes, scores, i64s(10), scalar(0.5)}, []int64{0, 0, 0, 0, 0, 2}},
		{"iou 0.9", nil, []*ir.Tensor{boxes, scores, i64s(10), scalar(0.9)}, []int64{0, 0, 0, 0, 0, 1, 0, 0, 2}},
		{"score threshold", nil, []*ir.Tensor{boxes, scores, i64s(10), scalar(0.9), scalar(0.75)}, []int64{0, 0, 0, 0, 0, 1}},
		{"score threshold is strict", nil, []*ir.Tensor{boxes, scores, i64s(10), scalar(0.9), scalar(0.8)}, []int64{0, 0, 0}},
		{"limit", nil, []*ir.Tensor{boxes, scores, i64s(1), scalar(0)}, []int64{0, 0, 0}},
		{"zero limit", nil, []*ir.Tensor{boxes, scores, i64s(0)}, nil},
		{"no limit given", nil, []*ir.Tensor{boxes, scores}, nil},
		{"iou threshold 0 default", nil, []*ir.Tensor{boxes, scores, i64s(10)}, []int64{0, 0, 0, 0, 0, 2}},
		{"centre format", ir.Attrs{"center_point_box": intAttr(1)}, []*ir.Tensor{
			f32([]int64{1, 3, 4}, 0.5, 0.5, 1, 1, 0.6, 0.5, 1, 1, 2.5, 0.5, 1, 1), f32([]int64{1, 1, 3}, 0.9, 0.8, 0.7), i64s(10), scalar(0.5)},
			[]int64{0, 0, 0, 0, 0, 2}},
		{"batches and classes", nil, []*ir.Tensor{
			f32([]int64{2, 2, 4}, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 5, 1, 6),
			f32([]int64{2, 2, 2}, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
			i64s(5), scalar(0.5)},
			[]int64{0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "NonMaxSuppression", tc.attrs, 1, tc.ins...)
			require.NoError(t, err)
			require.Equal(t, ir.Int64, out[0].DType)
			require.Equal(t, []int64{int64(len(tc.want) / 3), 3}, out[0].Shape)
			if got := out[0].Int64s(); len(tc.want) == 0 {
				require.Empty(t, got)
			} else {
				require.Equal(t, tc.want, got)
			}
		})
	}

	for name, ins := range map[string][]*ir.Tensor{
		"boxes shape":     {f32([]int64{1, 1, 3}, 0, 0, 1), f32([]int64{1, 1, 1}, 1)},
		"scores shape":    {f32([]int64{1, 1, 4}, 0, 0, 1, 1), f32([]int64{1, 1, 2}, 1, 1)},
		"iou threshold":   {f32([]int64{1, 1, 4}, 0, 0, 1, 1), f32([]int64{1, 1, 1}, 1), i64s(1), scalar(1.5)},
		"limit not int":   {f32([]int64{1, 1, 4}, 0, 0, 1, 1), f32([]int64{1, 1, 1}, 1), scalar(1)},
		"limit two elems": {f32([]int64{1, 1, 4}, 0, 0, 1, 1), f32([]int64{1, 1, 1}, 1), i64s(1, 2)},
	} {
		_, err := runOp(t, "NonMaxSuppression", nil, 1, ins...)
		require.Error(t, err, name)
	}
	_, err := runOp(t, "NonMaxSuppression", ir.Attrs{"center_point_box": intAttr(2)}, 1, boxes, scores)
	require.Error(t, err)
}
