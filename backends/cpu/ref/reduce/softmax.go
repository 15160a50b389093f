package reduce

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// softmaxKind selects the member of the softmax family.
type softmaxKind int

const (
	kindSoftmax softmaxKind = iota
	kindLogSoftmax
	kindHardmax
)

func init() {
	for name, kind := range map[string]softmaxKind{
		"Softmax":    kindSoftmax,
		"LogSoftmax": kindLogSoftmax,
		"Hardmax":    kindHardmax,
	} {
		ref.Register(name, func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
			return softmaxKernel(kind, n, in)
		})
	}
}

// softmaxKernel runs Softmax, LogSoftmax or Hardmax.
//
// By default (opset >= 13) the op works along the single dim axis (default
// -1). When the importer marks a node from an older opset with the int
// attribute legacy_axis=1, the old semantics apply: axis defaults to 1 and
// the input is viewed as the 2-D matrix [prod(dims[:axis]),
// prod(dims[axis:])], the op running over each whole row.
func softmaxKernel(kind softmaxKind, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	rank := len(x.Shape)
	var outer, size, inner int
	if n.AttrInt("legacy_axis", 0) != 0 {
		a := n.AttrInt("axis", 1)
		// Old opsets accept axis in [-rank, rank]; axis == rank makes every
		// row a single element (the product of no dims).
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a > int64(rank) {
			return nil, ref.Errorf("axis %d out of range for rank %d", n.AttrInt("axis", 1), rank)
		}
		outer, size, inner = product(x.Shape[:a]), product(x.Shape[a:]), 1
	} else {
		axis, err := ref.NormAxis(n.AttrInt("axis", -1), rank)
		if err != nil {
			return nil, err
		}
		outer, size, inner = splitAt(x.Shape, axis)
	}

	out := ir.NewTensor(x.DType, x.Shape)
	row := make([]float64, size)
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			base := o*size*inner + k
			for j := range row {
				row[j] = x.Float64(base + j*inner)
			}
			softmaxRow(kind, row)
			for j, v := range row {
				out.SetFloat64(base+j*inner, v)
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// softmaxRow replaces row by its softmax, log-softmax or hardmax (one-hot
// at the first maximum). The maximum is subtracted before exponentiating.
func softmaxRow(kind softmaxKind, row []float64) {
	if len(row) == 0 {
		return
	}
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	if kind == kindHardmax {
		for j := range row {
			row[j] = 0
		}
		row[best] = 1
		return
	}
	mx := row[best]
	sum := 0.0
	for _, v := range row {
		sum += math.Exp(v - mx)
	}
	for j, v := range row {
		if kind == kindLogSoftmax {
			row[j] = v - mx - math.Log(sum)
		} else {
			row[j] = math.Exp(v-mx) / sum
		}
	}
}
