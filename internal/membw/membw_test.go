package membw

import "testing"

func TestSumWords(t *testing.T) {
	for _, n := range []int{0, 7, 8, 9, 64, 1001} {
		x := make([]uint64, n)
		var want uint64
		for i := range x {
			x[i] = uint64(i*i + 3)
			if i < n-n%8 {
				want += x[i]
			}
		}
		if got := SumWords(x); got != want {
			t.Errorf("n=%d: SumWords = %d, want %d (whole groups of eight)", n, got, want)
		}
	}
}
