package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPool3S2Row checks the 3-wide stride-2 row pool against a direct
// loop over every row width up to 100 and every output count a window
// allows, with NaN, -Inf and +Inf among the inputs, rows given once,
// twice or three times, and the output's neighbours left untouched.
func TestMaxPool3S2Row(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 7))
		for W := 1; W <= 100; W++ {
			for OW := 1; OW <= (W+2)/2; OW++ {
				rows := [3][]float32{randFloats(r, W), randFloats(r, W), randFloats(r, W)}
				if r.IntN(3) == 0 {
					rows[r.IntN(3)][r.IntN(W)] = float32(math.NaN())
				}
				rows[r.IntN(3)][r.IntN(W)] = float32(math.Inf(-1))
				if r.IntN(4) == 0 {
					rows[r.IntN(3)][r.IntN(W)] = float32(math.Inf(1))
				}
				switch r.IntN(3) {
				case 1:
					rows[2] = rows[1]
				case 2:
					rows[1], rows[2] = rows[0], rows[0]
				}
				buf := make([]float32, OW+2)
				buf[0], buf[OW+1] = 7, 7
				MaxPool3S2Row(buf[1:OW+1], rows[0], rows[1], rows[2])
				if buf[0] != 7 || buf[OW+1] != 7 {
					t.Fatalf("W=%d OW=%d: wrote outside dst", W, OW)
				}
				for o := 0; o < OW; o++ {
					var taps []float32
					for c := 2*o - 1; c <= 2*o+1; c++ {
						if c >= 0 && c < W {
							taps = append(taps, rows[0][c], rows[1][c], rows[2][c])
						}
					}
					want := float32(math.Inf(-1))
					for _, x := range taps {
						want = max(want, x) // Go's max propagates NaN
					}
					if got := buf[1+o]; !sameFloat(got, want) {
						t.Fatalf("W=%d OW=%d: dst[%d] = %v, want %v", W, OW, o, got, want)
					}
				}
			}
		}
	})
}

// TestMaxPool3S2RowPanics checks that a window with no column panics.
func TestMaxPool3S2RowPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for 4 outputs from rows of 4")
		}
	}()
	row := make([]float32, 4)
	MaxPool3S2Row(make([]float32, 4), row, row, row)
}
