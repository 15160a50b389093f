package conform

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

// Tolerance bounds the difference between a computed and an expected
// floating-point value: |got-want| <= ATol + RTol*|want|.
type Tolerance struct {
	RTol, ATol float64
}

// DefaultTolerance is the tolerance of the ONNX backend test runner.
var DefaultTolerance = Tolerance{RTol: 1e-3, ATol: 1e-7}

// Compare checks got against want: dtype and shape must be equal; floating
// values must be within tol (NaN matches NaN, an infinity only the same
// infinity); integers and bools must be equal. The error describes the
// worst mismatch.
func Compare(got, want *ir.Tensor, tol Tolerance) error {
	if got == nil {
		return fmt.Errorf("no output, want %v", want)
	}
	if got.DType != want.DType {
		return fmt.Errorf("dtype %v, want %v", got.DType, want.DType)
	}
	if !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	if err := got.Check(); err != nil {
		return fmt.Errorf("malformed output: %v", err)
	}
	if err := want.Check(); err != nil {
		return fmt.Errorf("malformed expected output: %v", err)
	}
	if got.DType.IsFloat() {
		return compareFloat(got, want, tol)
	}
	return compareExact(got, want)
}

func compareFloat(got, want *ir.Tensor, tol Tolerance) error {
	n := got.Len()
	bad, worst := 0, -1
	worstErr := 0.0
	for i := 0; i < n; i++ {
		g, w := got.Float64(i), want.Float64(i)
		var ok bool
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			ok = math.IsNaN(w) && math.IsNaN(g)
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			ok = g == w
		default:
			ok = math.Abs(g-w) <= tol.ATol+tol.RTol*math.Abs(w)
		}
		if ok {
			continue
		}
		bad++
		e := math.Abs(g - w)
		if math.IsNaN(e) {
			e = math.Inf(1) // a NaN where a number belongs is as bad as it gets
		}
		if worst < 0 || e > worstErr {
			worst, worstErr = i, e
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("max abs err %g at index %d (got %g, want %g; %d of %d values out of tolerance)",
		worstErr, worst, got.Float64(worst), want.Float64(worst), bad, n)
}

// compareExact compares integers and bools for equality and reports the
// mismatch with the largest difference.
func compareExact(got, want *ir.Tensor) error {
	n := got.Len()
	bad, worst := 0, -1
	worstErr := 0.0
	for i := 0; i < n; i++ {
		var e float64
		switch got.DType {
		case ir.Uint64:
			g, w := got.Uint64(i), want.Uint64(i)
			if g == w {
				continue
			}
			e = float64(max(g, w) - min(g, w))
		case ir.Bool:
			if got.Bool(i) == want.Bool(i) {
				continue
			}
			e = 1
		default:
			g, w := got.Int64(i), want.Int64(i)
			if g == w {
				continue
			}
			e = math.Abs(float64(g) - float64(w))
		}
		bad++
		if worst < 0 || e > worstErr {
			worst, worstErr = i, e
		}
	}
	if bad == 0 {
		return nil
	}
	if got.DType == ir.Bool {
		return fmt.Errorf("value mismatch at index %d (got %v, want %v; %d of %d values differ)",
			worst, got.Bool(worst), want.Bool(worst), bad, n)
	}
	return fmt.Errorf("max abs err %g at index %d (got %s, want %s; %d of %d values differ)",
		worstErr, worst, intString(got, worst), intString(want, worst), bad, n)
}

func intString(t *ir.Tensor, i int) string {
	if t.DType == ir.Uint64 {
		return fmt.Sprint(t.Uint64(i))
	}
	return fmt.Sprint(t.Int64(i))
}
