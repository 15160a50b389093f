package ir

import (
	"strconv"
	"strings"
)

// Dim is one dimension of a Shape: a known size (Size >= 0) or an unknown one
// (Size < 0), which may carry a symbol such as "batch" or "seq".
type Dim struct {
	Size int64
	Sym  string
}

// Known reports whether the dimension has a static size.
func (d Dim) Known() bool { return d.Size >= 0 }

func (d Dim) String() string {
	if d.Size >= 0 {
		return strconv.FormatInt(d.Size, 10)
	}
	if d.Sym != "" {
		return d.Sym
	}
	return "?"
}

// Shape is a list of dims. A nil Shape means the rank is unknown; an empty,
// non-nil Shape is a scalar.
type Shape []Dim

// S builds a static shape.
func S(dims ...int64) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = Dim{Size: d}
	}
	return s
}

// Sym returns an unknown dimension named sym.
func Sym(sym string) Dim { return Dim{Size: -1, Sym: sym} }

// Scalar is the rank-0 shape.
func Scalar() Shape { return Shape{} }

// RankKnown reports whether the rank is known.
func (s Shape) RankKnown() bool { return s != nil }

// Static reports whether the rank and every dimension are known.
func (s Shape) Static() bool {
	if s == nil {
		return false
	}
	for _, d := range s {
		if d.Size < 0 {
			return false
		}
	}
	return true
}

// Ints returns the dims as int64s (-1 for unknown ones).
func (s Shape) Ints() []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = d.Size
		if d.Size < 0 {
			out[i] = -1
		}
	}
	return out
}

// NumElements returns the product of the dims, or -1 when any is unknown.
func (s Shape) NumElements() int64 {
	if s == nil {
		return -1
	}
	n := int64(1)
	for _, d := range s {
		if d.Size < 0 {
			return -1
		}
		n *= d.Size
	}
	return n
}

// Equal reports whether two shapes are identical, symbols included.
func (s Shape) Equal(t Shape) bool {
	if (s == nil) != (t == nil) || len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Compatible reports whether two shapes can describe the same tensor: equal
// rank and equal sizes wherever both are known. Unknown rank is compatible
// with anything.
func (s Shape) Compatible(t Shape) bool {
	if s == nil || t == nil {
		return true
	}
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i].Size >= 0 && t[i].Size >= 0 && s[i].Size != t[i].Size {
			return false
		}
	}
	return true
}

// Clone returns a copy of s (nil stays nil).
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(Shape{}, s...)
}

// String renders the shape as in the text form: "1,128,seq" ("?" for an
// unknown rank, "" for a scalar).
func (s Shape) String() string {
	if s == nil {
		return "?"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// ShapeOf returns the static Shape of concrete dims.
func ShapeOf(dims []int64) Shape { return S(dims...) }

// NumElements returns the product of concrete dims (1 for a scalar).
func NumElements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}
