package layout

import (
	"math/rand"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestRandomInputsNeverPanic throws random shapes, indices and attributes
// at every kernel: each must return outputs or an error, never panic
// (runOp turns a recovered kernel panic into a test crash).
func TestRandomInputsNeverPanic(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	randShape := func() []int64 {
		s := make([]int64, rng.Intn(4))
		for i := range s {
			s[i] = int64(rng.Intn(4))
		}
		return s
	}
	randData := func(dt ir.DType) *ir.Tensor {
		s := randShape()
		t := ir.NewTensor(dt, s)
		for i := 0; i < t.Len(); i++ {
			t.SetInt64(i, int64(rng.Intn(11)-5))
		}
		return t
	}
	randInts := func() *ir.Tensor {
		dt := ir.Int64
		if rng.Intn(3) == 0 {
			dt = ir.Int32
		}
		return randData(dt)
	}
	maybe := func(t *ir.Tensor) *ir.Tensor {
		if rng.Intn(3) == 0 {
			return nil
		}
		return t
	}
	randAttrs := func() ir.Attrs {
		a := ir.Attrs{}
		for _, name := range []string{"axis", "batch_dims", "k", "start", "end", "allowzero", "exclusive",
			"reverse", "largest", "sorted", "upper", "blocksize", "batch_axis", "time_axis", "num_outputs"} {
			if rng.Intn(2) == 0 {
				a[name] = &ir.Attr{Kind: ir.AttrInt, Int: int64(rng.Intn(9) - 4)}
			}
		}
		if rng.Intn(3) == 0 {
			perm := make([]int64, rng.Intn(4))
			for i := range perm {
				perm[i] = int64(rng.Intn(5) - 2)
			}
			a["perm"] = &ir.Attr{Kind: ir.AttrInts, Ints: perm}
			a["axes"] = &ir.Attr{Kind: ir.AttrInts, Ints: perm}
		}
		modes := []string{"constant", "reflect", "edge", "wrap", "DCR", "CRD", "add", "max"}
		a["mode"] = &ir.Attr{Kind: ir.AttrString, Str: modes[rng.Intn(len(modes))]}
		a["reduction"] = &ir.Attr{Kind: ir.AttrString, Str: []string{"none", "add", "mul", "min", "max"}[rng.Intn(5)]}
		return a
	}
	ops := []string{
		"Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
		"ScatterElements", "ScatterND", "Pad", "Tile", "Expand", "Squeeze", "Unsqueeze", "Flatten",
		"Shape", "Size", "ConstantOfShape", "Range", "OneHot", "DepthToSpace", "SpaceToDepth", "Trilu",
		"EyeLike", "NonZero", "Compress", "Unique", "TopK", "CumSum", "ReverseSequence", "CenterCropPad",
	}
	for iter := 0; iter < 400; iter++ {
		for _, op := range ops {
			dt := allDTypes[rng.Intn(len(allDTypes))]
			x := randData(dt)
			in := []*ir.Tensor{x, randInts(), maybe(randInts()), maybe(randInts()), maybe(randInts())}
			switch op {
			case "ScatterElements", "ScatterND":
				in[2] = randData(dt)
			case "Concat":
				in = []*ir.Tensor{x, randData(dt)}
			case "Range":
				in = []*ir.Tensor{randData(dt), randData(dt), randData(dt)}
			case "Compress":
				in[1] = randData(ir.Bool)
			case "Pad":
				in[2] = maybe(randData(dt))
			}
			_, _ = runOp(op, randAttrs(), 1+rng.Intn(3), in...)
		}
	}
}
