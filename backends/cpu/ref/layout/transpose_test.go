package layout

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestTranspose(t *testing.T) {
	runMoveCases(t, "Transpose", []moveCase{
		{name: "2d default", shape: sh(2, 3), wantSh: sh(3, 2), want: []float64{0, 3, 1, 4, 2, 5}},
		{name: "3d default", shape: sh(2, 3, 2), wantSh: sh(2, 3, 2),
			want: []float64{0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11}},
		{name: "3d perm", attrs: attrs(ir.Ints("perm", 2, 0, 1)), shape: sh(2, 3, 2), wantSh: sh(2, 2, 3),
			want: []float64{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}},
		{name: "identity", attrs: attrs(ir.Ints("perm", 0, 1)), shape: sh(3, 1), wantSh: sh(3, 1), want: seq(3)},
		{name: "scalar", shape: sh(), data: []float64{3}, wantSh: sh(), want: []float64{3}},
		{name: "zero dim", shape: sh(0, 3), wantSh: sh(3, 0), want: nil},
		{name: "perm too short", attrs: attrs(ir.Ints("perm", 0)), shape: sh(2, 3), wantErr: true},
		{name: "perm repeated", attrs: attrs(ir.Ints("perm", 1, 1)), shape: sh(2, 3), wantErr: true},
		{name: "perm out of range", attrs: attrs(ir.Ints("perm", 0, 2)), shape: sh(2, 3), wantErr: true},
	})
}

func TestDepthToSpace(t *testing.T) {
	b2 := ir.Int("blocksize", 2)
	runMoveCases(t, "DepthToSpace", []moveCase{
		{name: "DCR default", attrs: attrs(b2), shape: sh(1, 8, 1, 2), wantSh: sh(1, 2, 2, 4),
			want: []float64{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}},
		{name: "CRD", attrs: attrs(b2, ir.Str("mode", "CRD")), shape: sh(1, 8, 1, 2), wantSh: sh(1, 2, 2, 4),
			want: []float64{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}},
		{name: "blocksize 1", attrs: attrs(ir.Int("blocksize", 1)), shape: sh(1, 2, 1, 2), wantSh: sh(1, 2, 1, 2), want: seq(4)},
		{name: "zero batch", attrs: attrs(b2), shape: sh(0, 4, 2, 2), wantSh: sh(0, 1, 4, 4), want: nil},
		{name: "channels", attrs: attrs(b2), shape: sh(1, 6, 1, 1), wantErr: true},
		{name: "rank", attrs: attrs(b2), shape: sh(4, 1, 1), wantErr: true},
		{name: "no blocksize", shape: sh(1, 4, 1, 1), wantErr: true},
		{name: "bad mode", attrs: attrs(b2, ir.Str("mode", "XYZ")), shape: sh(1, 4, 1, 1), wantErr: true},
	})
}

func TestSpaceToDepth(t *testing.T) {
	b2 := ir.Int("blocksize", 2)
	runMoveCases(t, "SpaceToDepth", []moveCase{
		{name: "basic", attrs: attrs(b2), shape: sh(1, 1, 4, 6), wantSh: sh(1, 4, 2, 3),
			want: []float64{0, 2, 4, 12, 14, 16, 1, 3, 5, 13, 15, 17, 6, 8, 10, 18, 20, 22, 7, 9, 11, 19, 21, 23}},
		// SpaceToDepth inverts DepthToSpace (DCR): feed the DCR output back.
		{name: "inverse of DCR", attrs: attrs(b2), shape: sh(1, 2, 2, 4),
			data:   []float64{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15},
			wantSh: sh(1, 8, 1, 2), want: seq(16)},
		{name: "zero width", attrs: attrs(b2), shape: sh(1, 1, 2, 0), wantSh: sh(1, 4, 1, 0), want: nil},
		{name: "indivisible", attrs: attrs(b2), shape: sh(1, 1, 3, 2), wantErr: true},
	})
}
