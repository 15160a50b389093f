package reduce

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Det", det) }

// det computes the determinant of each square matrix in the last two dims
// of X [..., M, M]; the output has shape [...]. The determinant of the 0x0
// matrix is 1.
func det(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	rank := len(x.Shape)
	if rank < 2 || x.Shape[rank-1] != x.Shape[rank-2] {
		return nil, fmt.Errorf("input has shape %v, want [..., M, M]", x.Shape)
	}
	m := int(x.Shape[rank-1])
	out := ir.NewTensor(x.DType, x.Shape[:rank-2])
	a := make([]float64, m*m)
	for b := 0; b < out.Len(); b++ {
		for i := range a {
			a[i] = x.Float64(b*m*m + i)
		}
		out.SetFloat64(b, luDet(a, m))
	}
	return []*ir.Tensor{out}, nil
}

// luDet returns the determinant of the m×m row-major matrix a by LU
// decomposition with partial pivoting, overwriting a.
func luDet(a []float64, m int) float64 {
	for _, v := range a {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	d := 1.0
	for k := 0; k < m; k++ {
		// Pivot: the row with the largest magnitude in column k.
		p := k
		for i := k + 1; i < m; i++ {
			if math.Abs(a[i*m+k]) > math.Abs(a[p*m+k]) {
				p = i
			}
		}
		if a[p*m+k] == 0 {
			return 0 // singular
		}
		if p != k {
			for j := 0; j < m; j++ {
				a[k*m+j], a[p*m+j] = a[p*m+j], a[k*m+j]
			}
			d = -d
		}
		pivot := a[k*m+k]
		d *= pivot
		for i := k + 1; i < m; i++ {
			f := a[i*m+k] / pivot
			for j := k; j < m; j++ {
				a[i*m+j] -= f * a[k*m+j]
			}
		}
	}
	return d
}
