package passes

import (
	"math"
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestInferElementwise(t *testing.T) {
	runInferCases(t, []inferCase{
		{"unary keeps symbols", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float16, sh("batch", 3))
			return []*ir.Value{b.Op("Relu", x), b.Op("Sqrt", x), b.Op("IsNaN", x)}
		}, []string{"f16[batch,3]", "f16[batch,3]", "bool[batch,3]"}},
		{"broadcast", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("batch", 1, 4))
			y := b.Input("y", ir.Float32, sh(3, 1))
			s := b.Input("s", ir.Float32, sh("seq"))
			s2 := b.Input("s2", ir.Float32, sh("other"))
			return []*ir.Value{b.Op("Add", x, y), b.Op("Mul", s, f32(b, 1, 2, 3, 4, 5)),
				b.Op("Sub", s, s2), b.Op("Div", s, s), b.Op("Max", x, y, f32s(b, 0))}
		}, []string{"f32[batch,3,4]", "f32[5]", "f32[?]", "f32[seq]", "f32[batch,3,4]"}},
		{"comparisons and where", func(b *ir.Builder) []*ir.Value {
			c := b.Input("c", ir.Bool, sh(2, 1))
			x := b.Input("x", ir.Int32, sh(1, 3))
			y := b.Input("y", ir.Int32, sh(3))
			return []*ir.Value{b.Op("Less", x, y), b.Op("Where", c, x, y), b.Op("And", c, c)}
		}, []string{"bool[1,3]", "i32[2,3]", "bool[2,1]"}},
		{"pow keeps base dtype", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Int32, sh(4))
			return []*ir.Value{b.Op("Pow", x, f32s(b, 2))}
		}, []string{"i32[4]"}},
		{"casts", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("n", 2))
			l := b.Input("l", ir.BFloat16, sh())
			return []*ir.Value{b.OpA("Cast", at(ir.Int("to", 7)), x), b.OpA("Cast", at(ir.Int("to", 10)), x),
				b.Op("CastLike", x, l), b.OpA("Cast", at(ir.Int("to", 8)), x)} // 8 = string: unknown
		}, []string{"i64[n,2]", "f16[n,2]", "bf16[n,2]", "invalid[n,2]"}},
		{"dropout and clip", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 5))
			d := b.OpN("Dropout", 2, nil, x)
			return []*ir.Value{d[0], d[1], b.Op("Clip", x, f32s(b, 0), nil)}
		}, []string{"f32[2,5]", "bool[2,5]", "f32[2,5]"}},
		{"layer norm statistics", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float16, sh("b", "s", 8))
			o := b.OpN("LayerNormalization", 3, at(ir.Int("axis", -1)), x, b.Input("g", ir.Float16, sh(8)))
			return o
		}, []string{"f16[b,s,8]", "f32[b,s,1]", "f32[b,s,1]"}},
		{"eyelike and random", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(3, 4))
			return []*ir.Value{b.OpA("EyeLike", at(ir.Int("dtype", 6)), x), b.Op("EyeLike", x),
				b.OpA("RandomNormal", at(ir.Ints("shape", 2, 7)))}
		}, []string{"i32[3,4]", "f32[3,4]", "f32[2,7]"}},
		{"unknown op stays unknown", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(3))
			u := b.Op("FooBar", x)
			return []*ir.Value{u, b.Op("Relu", u), b.Op("Add", u, x)}
		}, []string{"invalid[?]", "invalid[?]", "f32[?]"}},
	})
}

func TestInferShapeOps(t *testing.T) {
	runInferCases(t, []inferCase{
		{"reshape 0 and -1", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			return []*ir.Value{b.Op("Reshape", x, i64(b, 0, -1)), b.Op("Reshape", x, i64(b, -1)),
				b.OpA("Reshape", at(ir.Int("allowzero", 1)), b.Input("e", ir.Float32, sh(0, 3)), i64(b, 3, 0))}
		}, []string{"f32[2,12]", "f32[24]", "f32[3,0]"}},
		{"reshape symbolic -1", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3, "seq"))
			y := b.Input("y", ir.Float32, sh("batch", "seq", 768))
			return []*ir.Value{b.Op("Reshape", x, i64(b, 6, -1)), b.Op("Reshape", y, i64(b, 0, 0, 12, -1)),
				b.Op("Reshape", y, i64(b, 0, -1))}
		}, []string{"f32[6,seq]", "f32[batch,seq,12,64]", "f32[batch,?]"}},
		{"reshape of unknown target keeps rank", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(4))
			s := b.Input("s", ir.Int64, sh(3))
			return []*ir.Value{b.Op("Reshape", x, s)}
		}, []string{"f32[?,?,?]"}},
		{"transpose", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 3, 5))
			return []*ir.Value{b.Op("Transpose", x), b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 1)), x)}
		}, []string{"f32[5,3,b]", "f32[b,5,3]"}},
		{"concat", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 3))
			y := b.Input("y", ir.Float32, sh("?", 5))
			return []*ir.Value{b.OpA("Concat", at(ir.Int("axis", -1)), x, y), b.OpA("Concat", at(ir.Int("axis", 0)), x, x)}
		}, []string{"f32[b,8]", "f32[?,3]"}},
		{"split", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(6, 5))
			e := b.OpN("Split", 3, nil, x)
			s := b.OpN("Split", 2, at(ir.Int("axis", 1)), x, i64(b, 1, 4))
			u := b.OpN("Split", 2, at(ir.Int("axis", 1), ir.Int("num_outputs", 2)), x)
			return append(append(e, s...), u...)
		}, []string{"f32[2,5]", "f32[2,5]", "f32[2,5]", "f32[6,1]", "f32[6,4]", "f32[6,3]", "f32[6,2]"}},
		{"slice", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(10, 20))
			y := b.Input("y", ir.Float32, sh("seq", 8))
			return []*ir.Value{
				b.Op("Slice", x, i64(b, 1, -5), i64(b, 8, math.MaxInt64), i64(b, 0, 1), i64(b, 2, 1)),
				b.Op("Slice", x, i64(b, -1), i64(b, math.MinInt64), i64(b, 0), i64(b, -1)),
				b.Op("Slice", x, i64(b, 3), i64(b, 100), i64(b, -1), nil),
				b.Op("Slice", y, i64(b, 0, 2), i64(b, math.MaxInt64, 6), nil, nil),
				b.Op("Slice", y, i64(b, 1), i64(b, 2), nil, nil),
			}
		}, []string{"f32[4,5]", "f32[10,20]", "f32[10,17]", "f32[seq,4]", "f32[?,8]"}},
		{"squeeze unsqueeze flatten", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(1, 3, 1, 4))
			y := b.Input("y", ir.Float32, sh("b", 1))
			z := b.Input("z", ir.Float32, sh(2, 3, 4, 5))
			return []*ir.Value{b.Op("Squeeze", x), b.Op("Squeeze", x, i64(b, -2)), b.Op("Squeeze", y),
				b.Op("Unsqueeze", b.Input("w", ir.Float32, sh(3, 4)), i64(b, 0, -1)),
				b.OpA("Flatten", at(ir.Int("axis", 2)), z), b.Op("Flatten", y), b.OpA("Flatten", at(ir.Int("axis", 0)), z)}
		}, []string{"f32[3,4]", "f32[1,3,4]", "f32[?]", "f32[1,3,4,1]", "f32[6,20]", "f32[b,1]", "f32[1,120]"}},
		{"expand tile pad", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(3, 1))
			y := b.Input("y", ir.Float32, sh(2, 3))
			z := b.Input("z", ir.Float32, sh(1, 3, 1))
			return []*ir.Value{b.Op("Expand", x, i64(b, 2, 1, 4)), b.Op("Tile", y, i64(b, 2, 1)),
				b.Op("Expand", z, b.Input("s", ir.Int64, sh(2))), b.Op("Tile", y, b.Input("r", ir.Int64, sh(2))),
				b.Op("Pad", y, i64(b, 1, 0, 1, 2), nil), b.Op("Pad", y, i64(b, 2, 3), nil, i64(b, -1))}
		}, []string{"f32[2,3,4]", "f32[4,3]", "f32[1,3,?]", "f32[?,?]", "f32[4,5]", "f32[2,8]"}},
		{"shape size constantofshape range", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3, 4, 5))
			return []*ir.Value{
				b.OpA("Shape", at(ir.Int("start", 1), ir.Int("end", -1)), x), b.Op("Size", x),
				b.Op("ConstantOfShape", i64(b, 2, 3)),
				b.OpA("ConstantOfShape", at(ir.TensorAttr("value", ir.FromInt64([]int64{1}, []int64{7}))), i64(b, 4)),
				b.Op("Range", i64s(b, 0), i64s(b, 10), i64s(b, 3)),
				b.Op("Range", f32s(b, 1), f32s(b, 2), f32s(b, 0.3)),
				b.Op("Range", i64s(b, 10), i64s(b, 0), i64s(b, -4)),
			}
		}, []string{"i64[2]", "i64[]", "f32[2,3]", "i64[4]", "i64[4]", "f32[4]", "i64[3]"}},
		{"depth space", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(1, 8, 3, 5))
			return []*ir.Value{b.OpA("DepthToSpace", at(ir.Int("blocksize", 2)), x),
				b.OpA("SpaceToDepth", at(ir.Int("blocksize", 2)), b.Input("y", ir.Float32, sh(1, 3, 4, 6)))}
		}, []string{"f32[1,2,6,10]", "f32[1,12,2,3]"}},
	})
}

// Exporters compute shapes at run time; known values make them static.
func TestInferShapeArithmetic(t *testing.T) {
	runInferCases(t, []inferCase{
		{"multi-head split", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("batch", "seq", 768))
			s := b.Op("Shape", x)
			d0 := b.Op("Unsqueeze", b.OpA("Gather", at(ir.Int("axis", 0)), s, i64s(b, 0)), i64(b, 0))
			d1 := b.Op("Unsqueeze", b.Op("Gather", s, i64s(b, 1)), i64(b, 0))
			hd := b.Op("Div", b.Op("Gather", s, i64s(b, 2)), i64s(b, 12))
			shape := b.OpA("Concat", at(ir.Int("axis", 0)), d0, d1, i64(b, 12), b.Op("Unsqueeze", hd, i64(b, 0)))
			return []*ir.Value{b.Op("Reshape", x, shape)}
		}, []string{"f32[batch,seq,12,64]"}},
		{"float scale chain", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(4, 6))
			s := b.OpA("Cast", at(ir.Int("to", 1)), b.Op("Shape", x))
			h := b.OpA("Cast", at(ir.Int("to", 7)), b.Op("Floor", b.Op("Mul", s, f32s(b, 0.5))))
			return []*ir.Value{b.Op("ConstantOfShape", h)}
		}, []string{"f32[2,3]"}},
		{"slice and arithmetic of a shape", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3, 4, 5))
			s := b.Op("Shape", x)
			head := b.Op("Slice", s, i64(b, 0), i64(b, 2), nil, nil)
			n := b.OpA("ReduceProd", at(ir.Int("keepdims", 1)), b.Op("Slice", s, i64(b, 2), i64(b, 4), nil, nil))
			return []*ir.Value{b.Op("Reshape", x, b.OpA("Concat", at(ir.Int("axis", 0)), head, n)),
				b.Op("Expand", b.Input("y", ir.Float32, sh(1)), b.Op("Add", head, i64(b, 1)))}
		}, []string{"f32[2,3,20]", "f32[3,4]"}},
		{"symbolic values", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("batch", "seq"))
			s := b.Op("Shape", x)
			flip := b.OpA("Concat", at(ir.Int("axis", 0)), b.Op("Slice", s, i64(b, 1), i64(b, 2), nil, nil),
				b.Op("Mul", b.Op("Slice", s, i64(b, 0), i64(b, 1), nil, nil), i64(b, 1)))
			return []*ir.Value{b.Op("ConstantOfShape", flip), b.Op("Reshape", x, b.Op("Add", flip, i64(b, 0, 1)))}
		}, []string{"f32[seq,batch]", "f32[seq,?]"}},
		{"folds of tile range reducesum", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(24))
			tl := b.Op("Tile", i64(b, 2, 3), i64(b, 2))                  // [2,3,2,3]
			rs := b.OpA("ReduceSum", at(ir.Int("keepdims", 1)), tl, nil) // [10]
			rg := b.Op("Range", i64s(b, 1), i64s(b, 4), i64s(b, 1))      // [1,2,3]
			return []*ir.Value{b.Op("ConstantOfShape", b.Op("Slice", tl, i64(b, 1), i64(b, 3), nil, nil)),
				b.Op("ConstantOfShape", rs), b.Op("Reshape", x, b.Op("Add", rg, i64s(b, 1))),
				b.Op("Reshape", x, b.Op("Max", i64(b, -1, 0), i64(b, 2, 12)))}
		}, []string{"f32[3,2]", "f32[10]", "f32[2,3,4]", "f32[2,12]"}},
		{"where and equal on shapes", func(b *ir.Builder) []*ir.Value {
			// The pattern of dynamic Expand exports: Where(Equal(s, -1), 1, s).
			x := b.Input("x", ir.Float32, sh(3, 1))
			s := i64(b, -1, 4)
			fixed := b.Op("Where", b.Op("Equal", s, i64s(b, -1)), i64(b, 1, 1), s)
			return []*ir.Value{b.Op("Expand", x, fixed)}
		}, []string{"f32[3,4]"}},
	})
}

func TestInferIndexing(t *testing.T) {
	runInferCases(t, []inferCase{
		{"gathers", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 5, 6))
			idx := b.Input("i", ir.Int64, sh(2, 3))
			d := b.Input("d", ir.Float32, sh(2, 3, 4))
			return []*ir.Value{b.OpA("Gather", at(ir.Int("axis", 1)), x, idx), b.Op("Gather", x, i64s(b, 0)),
				b.Op("GatherElements", d, b.Input("e", ir.Int64, sh(2, 3, 1))),
				b.Op("GatherND", d, b.Input("n", ir.Int64, sh(2, 2))),
				b.OpA("GatherND", at(ir.Int("batch_dims", 1)), d, b.Input("m", ir.Int64, sh(2, 1))),
				b.Op("ScatterND", d, b.Input("k", ir.Int64, sh(2, 1)), zeros(b, 2, 3, 4))}
		}, []string{"f32[b,2,3,6]", "f32[5,6]", "f32[2,3,1]", "f32[2,4]", "f32[2,4]", "f32[2,3,4]"}},
		{"onehot nonzero compress unique", func(b *ir.Builder) []*ir.Value {
			idx := b.Input("i", ir.Int64, sh(2, 3))
			x := b.Input("x", ir.Float32, sh(4, 5))
			u := b.OpN("Unique", 4, nil, x)
			return append([]*ir.Value{b.Op("OneHot", idx, i64s(b, 10), f32(b, 0, 1)),
				b.OpA("OneHot", at(ir.Int("axis", 0)), idx, f32s(b, 10), f32(b, 0, 1)),
				b.Op("NonZero", x), b.Op("Compress", x, b.Input("c", ir.Bool, sh(4))),
				b.OpA("Compress", at(ir.Int("axis", 1)), x, b.Input("c2", ir.Bool, sh(5)))}, u...)
		}, []string{"f32[2,3,10]", "f32[10,2,3]", "i64[2,?]", "f32[?]", "f32[4,?]",
			"f32[?]", "i64[?]", "i64[20]", "i64[?]"}},
		{"topk argmax", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 10))
			tk := b.OpN("TopK", 2, nil, x, i64(b, 3))
			return append(tk, b.OpA("ArgMax", at(ir.Int("axis", 1), ir.Int("keepdims", 0)), x),
				b.Op("ArgMin", x))
		}, []string{"f32[b,3]", "i64[b,3]", "i64[b]", "i64[1,10]"}},
		{"reductions", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh(2, 3, 4))
			a := b.Input("a", ir.Int64, sh(1))
			return []*ir.Value{b.Op("ReduceMean", x, i64(b, 1)),
				b.OpA("ReduceSum", at(ir.Int("keepdims", 0)), x),
				b.OpA("ReduceSum", at(ir.Int("noop_with_empty_axes", 1)), x),
				b.OpA("ReduceMax", at(ir.Int("keepdims", 0)), x, i64(b, -1, 0)),
				b.Op("ReduceL2", x, a), b.OpA("ReduceL2", at(ir.Int("keepdims", 0)), x, a)}
		}, []string{"f32[2,1,4]", "f32[]", "f32[2,3,4]", "f32[3]", "f32[?,?,?]", "f32[?]"}},
	})
}

func TestInferErrors(t *testing.T) {
	inferErr(t, func(b *ir.Builder) {
		named(b.Op("Add", b.Input("x", ir.Float32, sh(2, 3)), b.Input("y", ir.Float32, sh(4))), "bad_add")
	}, `"bad_add" (Add)`, "broadcast")
	inferErr(t, func(b *ir.Builder) {
		named(b.Op("Reshape", b.Input("x", ir.Float32, sh(2, 3)), i64(b, 4, 2)), "r")
	}, `"r" (Reshape)`, "6 elements")
	inferErr(t, func(b *ir.Builder) {
		named(b.Op("Concat", b.Input("x", ir.Float32, sh(2, 3)), b.Input("y", ir.Float32, sh(2))), "c")
	}, `"c" (Concat)`, "rank")
	inferErr(t, func(b *ir.Builder) {
		b.Op("Squeeze", b.Input("x", ir.Float32, sh(2, 3)), i64(b, 0))
	}, "Squeeze of axis 0 of size 2")
	inferErr(t, func(b *ir.Builder) {
		b.OpA("Transpose", at(ir.Ints("perm", 0, 0)), b.Input("x", ir.Float32, sh(2, 3)))
	}, "repeated")
	// A declared output type that contradicts inference names the node.
	inferErr(t, func(b *ir.Builder) {
		y := named(b.Op("Relu", b.Input("x", ir.Float32, sh(2, 3))), "act")
		y.DType, y.Shape = ir.Float32, sh(2, 4)
	}, `"act" (Relu)`, "declared [2,4]")
	inferErr(t, func(b *ir.Builder) {
		y := named(b.Op("Relu", b.Input("x", ir.Float32, sh(2, 3))), "act")
		y.DType = ir.Float16
	}, `"act" (Relu)`, "inferred dtype f32, declared f16")
}

// Declared types fill what inference cannot know, and agree otherwise.
func TestInferKeepsDeclared(t *testing.T) {
	b := ir.NewBuilder("t")
	x := b.Input("x", ir.Float32, sh("n", 3))
	u := b.Op("FooBar", x)
	u.DType, u.Shape = ir.Float32, sh(7, "?")
	r := b.Op("Relu", x)
	r.Shape = sh(5, "?") // declared: n = 5 here
	b.Output("u", u)
	b.Output("r", r)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := InferShapes(g); err != nil {
		t.Fatal(err)
	}
	if typeOf(u) != "f32[7,?]" || typeOf(r) != "f32[5,3]" {
		t.Fatalf("got %s and %s", typeOf(u), typeOf(r))
	}
}
