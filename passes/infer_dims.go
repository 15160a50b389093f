package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// Dimension arithmetic. A Dim with Size -1 is unknown; its Sym, when set,
// names a value that is the same wherever the symbol appears.

var unk = ir.Dim{Size: -1}

func dim(n int64) ir.Dim { return ir.Dim{Size: n} }

// unknownShape returns a shape of the given rank with every dim unknown
// (nil, the unknown rank, for a negative rank).
func unknownShape(rank int) ir.Shape {
	if rank < 0 {
		return nil
	}
	s := make(ir.Shape, rank)
	for i := range s {
		s[i] = unk
	}
	return s
}

// sameDim reports whether a and b are provably the same size.
func sameDim(a, b ir.Dim) bool {
	if a.Known() || b.Known() {
		return a.Size == b.Size
	}
	return a.Sym != "" && a.Sym == b.Sym
}

// broadcastDim combines two dims under numpy broadcasting.
func broadcastDim(a, b ir.Dim) (ir.Dim, error) {
	switch {
	case a.Known() && b.Known():
		if a.Size == b.Size || b.Size == 1 {
			return a, nil
		}
		if a.Size == 1 {
			return b, nil
		}
		return unk, fmt.Errorf("cannot broadcast dims %d and %d", a.Size, b.Size)
	case a.Known():
		if a.Size == 1 {
			return b, nil
		}
		return a, nil // b is 1 or a.Size
	case b.Known():
		if b.Size == 1 {
			return a, nil
		}
		return b, nil
	case sameDim(a, b):
		return a, nil
	}
	return unk, nil
}

// broadcastShapes is multidirectional broadcasting; nil when a rank is unknown.
func broadcastShapes(shapes ...ir.Shape) (ir.Shape, error) {
	r := 0
	for _, s := range shapes {
		if s == nil {
			return nil, nil
		}
		r = max(r, len(s))
	}
	out := make(ir.Shape, r)
	for i := range out {
		out[i] = dim(1)
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			b, err := broadcastDim(out[off+i], d)
			if err != nil {
				return nil, fmt.Errorf("shapes %v: %w", shapeList(shapes), err)
			}
			out[off+i] = b
		}
	}
	return out, nil
}

func shapeList(shapes []ir.Shape) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += " "
		}
		s += "[" + sh.String() + "]"
	}
	return s
}

// unifyDim merges two dims that must be equal.
func unifyDim(a, b ir.Dim) (ir.Dim, error) {
	switch {
	case a.Known() && b.Known():
		if a.Size != b.Size {
			return unk, fmt.Errorf("dims %d and %d differ", a.Size, b.Size)
		}
		return a, nil
	case a.Known():
		return a, nil
	case b.Known():
		return b, nil
	case a.Sym != "":
		return a, nil
	}
	return b, nil
}

// joinDim is the dim of a value that is either a or b (If branches).
func joinDim(a, b ir.Dim) ir.Dim {
	if a == b {
		return a
	}
	return unk
}

// joinShapes is the shape of a value that has either shape.
func joinShapes(a, b ir.Shape) ir.Shape {
	if a == nil || b == nil || len(a) != len(b) {
		return nil
	}
	out := make(ir.Shape, len(a))
	for i := range a {
		out[i] = joinDim(a[i], b[i])
	}
	return out
}

// dimMul multiplies dims (0 and 1 absorb unknowns).
func dimMul(a, b ir.Dim) ir.Dim {
	switch {
	case a.Known() && b.Known():
		return dim(a.Size * b.Size)
	case a.Size == 0 || b.Size == 0:
		return dim(0)
	case a.Size == 1:
		return b
	case b.Size == 1:
		return a
	}
	return unk
}

// dimAdd adds dims (0 absorbs unknowns).
func dimAdd(a, b ir.Dim) ir.Dim {
	switch {
	case a.Known() && b.Known():
		return dim(a.Size + b.Size)
	case a.Size == 0:
		return b
	case b.Size == 0:
		return a
	}
	return unk
}

// prodDims multiplies a list of dims (1 for none).
func prodDims(ds []ir.Dim) ir.Dim {
	p := dim(1)
	for _, d := range ds {
		p = dimMul(p, d)
	}
	return p
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// normAxes normalizes a list of axes, rejecting duplicates.
func normAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := map[int]bool{}
	for i, a := range axes {
		ax, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		seen[ax] = true
		out[i] = ax
	}
	return out, nil
}

// onnxDTypes maps ONNX TensorProto.DataType numbers (the "to" of Cast, the
// "dtype" of EyeLike, ...) to weft dtypes.
var onnxDTypes = map[int64]ir.DType{
	1: ir.Float32, 2: ir.Uint8, 3: ir.Int8, 4: ir.Uint16, 5: ir.Int16, 6: ir.Int32,
	7: ir.Int64, 9: ir.Bool, 10: ir.Float16, 11: ir.Float64, 12: ir.Uint32,
	13: ir.Uint64, 16: ir.BFloat16,
}

// onnxDType converts an ONNX dtype number; Invalid when weft has no such dtype.
func onnxDType(code int64) ir.DType { return onnxDTypes[code] }

// attrDType reads a dtype attribute (ONNX numbering), or def when absent.
func attrDType(n *ir.Node, name string, def ir.DType) ir.DType {
	if !n.Has(name) {
		return def
	}
	return onnxDType(n.AttrInt(name, 0))
}

// floorDiv and ceilDiv divide by a positive b.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// nonNeg checks that sizes taken from attributes or values are not negative.
func nonNeg(what string, vals ...int64) error {
	for _, v := range vals {
		if v < 0 {
			return fmt.Errorf("%s %v has a negative entry", what, vals)
		}
	}
	return nil
}

// cat concatenates shapes into a new, non-nil shape (a scalar stays known).
func cat(parts ...ir.Shape) ir.Shape {
	out := ir.Shape{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
