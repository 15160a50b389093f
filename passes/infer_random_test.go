package passes

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestInferRandomNodes feeds every op random, often nonsensical inputs and
// attributes. Inference may reject a node, but it must not panic, and what
// it infers must be well formed (ir.Verify rejects negative dims).
func TestInferRandomNodes(t *testing.T) {
	seed, trials := int64(1), 150
	if s := os.Getenv("WEFT_FUZZ_SEED"); s != "" { // longer runs by hand
		seed, _ = strconv.ParseInt(s, 10, 64)
		trials = 3000
	}
	r := rand.New(rand.NewSource(seed))
	dims := []ir.Dim{dim(0), dim(1), dim(2), dim(3), dim(5), ir.Sym("s"), unk}
	dtypes := []ir.DType{ir.Float32, ir.Float16, ir.Int64, ir.Int32, ir.Uint8, ir.Bool, ir.Invalid}
	randShape := func() ir.Shape {
		if r.Intn(8) == 0 {
			return nil
		}
		s := ir.Shape{}
		for i := r.Intn(5); i > 0; i-- {
			s = append(s, dims[r.Intn(len(dims))])
		}
		return s
	}
	ints := func(n int) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(r.Intn(9) - 3)
		}
		return v
	}
	attrs := func() []ir.AttrOption {
		var a []ir.AttrOption
		pick := func(p int) bool { return r.Intn(p) == 0 }
		if pick(2) {
			a = append(a, ir.Int("axis", int64(r.Intn(7)-3)))
		}
		for _, name := range []string{"keepdims", "transA", "transB", "ceil_mode", "allowzero", "onesided",
			"noop_with_empty_axes", "layout", "training_mode", "num_outputs", "batch_dims", "start", "end", "group"} {
			if pick(4) {
				a = append(a, ir.Int(name, int64(r.Intn(5)-1)))
			}
		}
		for _, name := range []string{"perm", "kernel_shape", "strides", "pads", "dilations", "output_shape",
			"output_padding", "axes", "shape", "pooled_shape"} {
			if pick(4) {
				a = append(a, ir.Ints(name, ints(r.Intn(5))...))
			}
		}
		for _, name := range []string{"to", "dtype", "blocksize", "hidden_size", "sample_size", "stash_type", "output_datatype"} {
			if pick(4) {
				a = append(a, ir.Int(name, int64(r.Intn(18)-1)))
			}
		}
		if pick(4) {
			a = append(a, ir.Str("auto_pad", []string{"NOTSET", "SAME_UPPER", "VALID", "bogus"}[r.Intn(4)]))
		}
		if pick(4) {
			a = append(a, ir.Str("equation", []string{"ij,jk->ik", "...i,...i", "ii", "ab->ba", "a,b", "->", "i...->"}[r.Intn(7)]))
		}
		if pick(6) {
			a = append(a, ir.TensorAttr("value", ir.FromInt64([]int64{1}, []int64{3})))
		}
		return a
	}
	for _, op := range InferredOps() {
		if op == "If" || op == "Loop" || op == "Scan" {
			continue // need subgraphs; covered by their own tests
		}
		for trial := 0; trial < trials; trial++ {
			b := ir.NewBuilder("fuzz")
			var inputs []*ir.Value
			for i := r.Intn(6); i > 0; i-- {
				switch r.Intn(4) {
				case 0:
					inputs = append(inputs, nil)
				case 1:
					n := r.Intn(5)
					inputs = append(inputs, b.Const("", ir.FromInt64([]int64{int64(n)}, ints(n))))
				case 2:
					switch r.Intn(3) {
					case 0:
						inputs = append(inputs, b.Const("", ir.FromInt64(nil, ints(1))))
					case 1:
						fs := []float32{-1.5, 0, 0.5, 2, float32(math.NaN()), float32(math.Inf(1))}
						n := r.Intn(4)
						v := make([]float32, n)
						for i := range v {
							v[i] = fs[r.Intn(len(fs))]
						}
						inputs = append(inputs, b.Const("", ir.FromFloat32([]int64{int64(n)}, v)))
					default:
						// the shape of an input, as exporters compute targets
						inputs = append(inputs, b.Op("Shape", b.Input("sx", ir.Float32, randShape())))
					}
				default:
					inputs = append(inputs, b.Input(fmt.Sprint("x", i), dtypes[r.Intn(len(dtypes))], randShape()))
				}
			}
			outs := b.OpN(op, 1+r.Intn(4), attrs(), inputs...)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s trial %d panicked: %v\n%s", op, trial, p, ir.Text(b.G))
					}
				}()
				if err := InferShapes(b.G); err != nil {
					return
				}
				if err := ir.Verify(b.G); err != nil {
					t.Fatalf("%s trial %d: inferred an invalid type: %v\n%s", op, trial, err, ir.Text(b.G))
				}
				// The whole pipeline accepts what inference accepted.
				for i, o := range outs {
					b.Output(fmt.Sprint("y", i), o)
				}
				if _, err := Run(b.G, Options{Level: MaxLevel, Verify: true}); err != nil {
					t.Fatalf("%s trial %d: %v\n%s", op, trial, err, ir.Text(b.G))
				}
			}()
		}
	}
}
