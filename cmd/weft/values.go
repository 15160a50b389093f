package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/weftrt/weft/ir"
)

// generate makes the deterministic input for v: the generator is seeded
// by the input's name, so a model always gets the same inputs.
func generate(v *ir.Value, dims map[string]int64) (*ir.Tensor, error) {
	if v.Shape == nil {
		return nil, fmt.Errorf("input %s has an unknown rank: pass --input %s=FILE.npy", v.Name, v.Name)
	}
	if !v.DType.Valid() {
		return nil, fmt.Errorf("input %s has dtype %v, which weft cannot generate: pass --input %s=FILE.npy", v.Name, v.DType, v.Name)
	}
	shape := make([]int64, len(v.Shape))
	elems := int64(1)
	for i, d := range v.Shape {
		switch {
		case d.Known():
			shape[i] = d.Size
		case d.Sym != "" && hasDim(dims, d.Sym):
			shape[i] = dims[d.Sym]
		case d.Sym != "":
			return nil, fmt.Errorf("input %s has symbolic dimension %q: pass --dim %s=N or --input %s=FILE.npy", v.Name, d.Sym, d.Sym, v.Name)
		default:
			return nil, fmt.Errorf("input %s has an unknown dimension %d: pass --input %s=FILE.npy", v.Name, i, v.Name)
		}
		if shape[i] != 0 && elems > (1<<34)/shape[i] {
			return nil, fmt.Errorf("input %s: shape %v is too large to generate", v.Name, shape)
		}
		elems *= shape[i]
	}
	h := fnv.New64a()
	h.Write([]byte(v.Name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x77656674)) // "weft"
	t := ir.NewTensor(v.DType, shape)
	for i := 0; i < t.Len(); i++ {
		switch {
		case v.DType == ir.Bool:
			t.SetInt64(i, int64(1-i%2))
		case v.DType.IsFloat():
			t.SetFloat64(i, 2*rng.Float64()-1)
		default:
			t.SetInt64(i, rng.Int64N(4))
		}
	}
	return t, nil
}

func hasDim(dims map[string]int64, sym string) bool { _, ok := dims[sym]; return ok }

// stats renders min, max and mean (and the count of NaNs, if any) for
// numbers, or the count of true values for bools.
func stats(t *ir.Tensor) string {
	n := t.Len()
	if t.DType == ir.Bool {
		c := 0
		for i := 0; i < n; i++ {
			if t.Bool(i) {
				c++
			}
		}
		return fmt.Sprintf("true %d/%d", c, n)
	}
	if t.DType == ir.Uint64 {
		lo, hi, sum := uint64(math.MaxUint64), uint64(0), 0.0
		for i := 0; i < n; i++ {
			x := t.Uint64(i)
			lo, hi, sum = min(lo, x), max(hi, x), sum+float64(x)
		}
		return fmt.Sprintf("min %d max %d mean %.6g", lo, hi, sum/float64(n))
	}
	if !t.DType.IsFloat() {
		lo, hi, sum := int64(math.MaxInt64), int64(math.MinInt64), 0.0
		for i := 0; i < n; i++ {
			x := t.Int64(i)
			lo, hi, sum = min(lo, x), max(hi, x), sum+float64(x)
		}
		return fmt.Sprintf("min %d max %d mean %.6g", lo, hi, sum/float64(n))
	}
	lo, hi, sum, nans, finite := math.Inf(1), math.Inf(-1), 0.0, 0, 0
	for i := 0; i < n; i++ {
		x := t.Float64(i)
		if math.IsNaN(x) {
			nans++
			continue
		}
		lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
		finite++
	}
	s := "all NaN"
	if finite > 0 {
		s = fmt.Sprintf("min %.6g max %.6g mean %.6g", lo, hi, sum/float64(finite))
	}
	if nans > 0 && finite > 0 {
		s += fmt.Sprintf(" NaN %d", nans)
	}
	return s
}

// formatElem renders element i in the tensor's own terms.
func formatElem(t *ir.Tensor, i int) string {
	switch {
	case t.DType == ir.Bool:
		return strconv.FormatBool(t.Bool(i))
	case t.DType == ir.Uint64:
		return strconv.FormatUint(t.Uint64(i), 10)
	case t.DType.IsFloat():
		return strconv.FormatFloat(t.Float64(i), 'g', 6, 64)
	}
	return strconv.FormatInt(t.Int64(i), 10)
}
