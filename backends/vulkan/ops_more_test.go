//go:build cgo

package vulkan

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// The differential tests of the layout and neural-network ops, on small,
// odd shapes.

func TestCopies(t *testing.T) {
	runCases(t, []opCase{
		{op: "Reshape", ins: []operand{in(2, 3, 5), ints1(5, -1)}},
		{op: "Reshape", ins: []operand{konst(6, 7), ints1(3, 2, 7)}},
		{op: "Flatten", attrs: []ir.AttrOption{ir.Int("axis", 2)}, ins: []operand{in(2, 3, 4, 5)}},
		{op: "Squeeze", ins: []operand{in(3, 1, 5, 1), ints1(1, -1)}},
		{op: "Unsqueeze", ins: []operand{in(3, 5), ints1(0, 3)}},
		{op: "Identity", ins: []operand{in(257, 3)}},
	})
}

func TestConcat(t *testing.T) {
	axis := func(a int64) []ir.AttrOption { return []ir.AttrOption{ir.Int("axis", a)} }
	runCases(t, []opCase{
		{op: "Concat", attrs: axis(0), ins: []operand{in(2, 3), in(5, 3)}},
		{op: "Concat", attrs: axis(1), ins: []operand{in(2, 3, 4), konst(2, 1, 4), in(2, 7, 4)}},
		{op: "Concat", attrs: axis(-1), ins: []operand{in(3, 5), in(3, 1)}},
		{op: "Concat", attrs: axis(0), ins: []operand{in(7)}},
	})
}

func TestSlice(t *testing.T) {
	runCases(t, []opCase{
		{op: "Slice", ins: []operand{in(5, 7), ints1(1, 2), ints1(4, 6)}},
		{op: "Slice", ins: []operand{in(5, 7), ints1(-3), ints1(1000), ints1(1)}},
		{op: "Slice", ins: []operand{in(6, 7, 3), ints1(5, 6), ints1(-100, 0), ints1(0, 1), ints1(-2, -3)}},
		{op: "Slice", ins: []operand{in(2, 9, 4), ints1(1), ints1(8), ints1(-2), ints1(3)}},
		{op: "Slice", ins: []operand{konst(10), ints1(0), ints1(-1), ints1(0), ints1(4)}},
	})
}

func TestGather(t *testing.T) {
	runCases(t, []opCase{
		{op: "Gather", ins: []operand{konst(11, 5), intsIn([]int64{2, 3}, 0, 10, -1, 3, 3, -11)}},
		{op: "Gather", ins: []operand{konst(4, 2, 3), intsIn([]int64{3}, 3, 0, -2)}},
		{op: "Gather", ins: []operand{in(9), intsIn([]int64{}, 4)}},
		{op: "Gather", ins: []operand{konst(7, 3), {shape: []int64{2}, isConst: true, ints: []int64{6, -7}}}},
		{op: "Gather", ins: []operand{konst(6, 4), {shape: []int64{2, 2}, ints: []int64{5, -6, 0, 2}, i32: true}}},
	})
}

// TestGatherIndexRange: an index out of range is an error, at compile time
// for constant indices and before the dispatch for the others.
func TestGatherIndexRange(t *testing.T) {
	d := testDevice(t)
	g, vals := oneNode(t, 1, "Gather", nil, konst(5, 3), intsIn([]int64{3}, 0, 4, -5))
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	runExe(t, exe, g, vals)
	for _, bad := range []int64{5, -6} {
		env := backends.NewEnv(nil)
		for _, v := range g.Inputs {
			env.Set(v, vals[v])
		}
		env.Set(g.Inputs[0], ir.FromInt64([]int64{3}, []int64{0, bad, 1}))
		err := exe.Run(context.Background(), env)
		require.ErrorContains(t, err, fmt.Sprintf("index %d at position 1 is out of range [-5, 5)", bad))
	}
	g, _ = oneNode(t, 1, "Gather", nil, konst(5, 3), ints1(1, 7))
	require.ErrorContains(t, d.Supports(g.Nodes[0]), "index 7 at position 1 is out of range")
}

func TestReduce(t *testing.T) {
	keep0 := []ir.AttrOption{ir.Int("keepdims", 0)}
	runCases(t, []opCase{
		{op: "ReduceMean", ins: []operand{in(3, 5), ints1(-1)}},
		{op: "ReduceSum", ins: []operand{wide(2, 3, 300), ints1(2)}},
		{op: "ReduceSum", attrs: keep0, ins: []operand{in(2, 3, 4), ints1(2, 1)}},
		{op: "ReduceMean", attrs: keep0, ins: []operand{in(4, 6)}},
		{op: "GlobalAveragePool", ins: []operand{in(2, 3, 5, 7)}},
		{op: "GlobalAveragePool", ins: []operand{in(1, 4, 9)}},
	})
}

func TestPool(t *testing.T) {
	a := func(kv ...any) []ir.AttrOption {
		var out []ir.AttrOption
		for i := 0; i < len(kv); i += 2 {
			switch v := kv[i+1].(type) {
			case []int64:
				out = append(out, ir.Ints(kv[i].(string), v...))
			case int:
				out = append(out, ir.Int(kv[i].(string), int64(v)))
			case string:
				out = append(out, ir.Str(kv[i].(string), v))
			}
		}
		return out
	}
	k := func(v ...int64) []int64 { return v }
	var cases []opCase
	for _, op := range []string{"MaxPool", "AveragePool"} {
		cases = append(cases,
			opCase{op: op, attrs: a("kernel_shape", k(2, 2)), ins: []operand{in(1, 2, 5, 7)}},
			opCase{op: op, attrs: a("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1)), ins: []operand{in(2, 3, 7, 6)}},
			opCase{op: op, attrs: a("kernel_shape", k(3, 2), "strides", k(2, 1), "auto_pad", "SAME_UPPER"), ins: []operand{in(1, 1, 6, 5)}},
			opCase{op: op, attrs: a("kernel_shape", k(2, 3), "auto_pad", "SAME_LOWER"), ins: []operand{in(1, 2, 5, 5)}},
			opCase{op: op, attrs: a("kernel_shape", k(3, 3), "strides", k(2, 2), "ceil_mode", 1), ins: []operand{in(1, 1, 8, 8)}},
			opCase{op: op, attrs: a("kernel_shape", k(3), "strides", k(2), "pads", k(1, 2)), ins: []operand{in(2, 3, 9)}},
		)
	}
	cases = append(cases,
		opCase{op: "MaxPool", attrs: a("kernel_shape", k(2, 2), "dilations", k(2, 2)), ins: []operand{in(1, 1, 6, 7)}},
		opCase{op: "AveragePool", attrs: a("kernel_shape", k(3, 3), "pads", k(1, 2, 2, 1), "count_include_pad", 1), ins: []operand{in(1, 2, 5, 6)}},
		opCase{op: "AveragePool", attrs: a("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1), "ceil_mode", 1, "count_include_pad", 1), ins: []operand{in(1, 1, 6, 6)}},
	)
	runCases(t, cases)
}

func TestConv(t *testing.T) {
	a := func(kv ...any) []ir.AttrOption {
		var out []ir.AttrOption
		for i := 0; i < len(kv); i += 2 {
			switch v := kv[i+1].(type) {
			case []int64:
				out = append(out, ir.Ints(kv[i].(string), v...))
			case int:
				out = append(out, ir.Int(kv[i].(string), int64(v)))
			case string:
				out = append(out, ir.Str(kv[i].(string), v))
			case float32:
				out = append(out, ir.Float(kv[i].(string), v))
			}
		}
		return out
	}
	k := func(v ...int64) []int64 { return v }
	tol := 1e-4
	runCases(t, []opCase{
		{op: "Conv", ins: []operand{in(1, 3, 5, 6), konst(4, 3, 3, 3)}, tol: tol},
		{op: "Conv", attrs: a("pads", k(1, 1, 1, 1)), ins: []operand{in(2, 3, 5, 6), konst(4, 3, 3, 3), konst(4)}, tol: tol},
		{op: "Conv", attrs: a("strides", k(2, 3), "pads", k(1, 0, 2, 1), "dilations", k(2, 1)), ins: []operand{in(1, 2, 9, 8), konst(3, 2, 3, 2)}, tol: tol},
		{op: "Conv", attrs: a("group", 2), ins: []operand{in(1, 4, 5, 5), konst(6, 2, 3, 3), konst(6)}, tol: tol},
		{op: "Conv", attrs: a("group", 3, "auto_pad", "SAME_UPPER", "strides", k(2, 2)), ins: []operand{in(1, 3, 7, 6), konst(3, 1, 3, 3)}, tol: tol},
		{op: "Conv", attrs: a("auto_pad", "SAME_LOWER"), ins: []operand{in(1, 2, 4, 5), in(2, 2, 2, 2)}, tol: tol},
		{op: "Conv", attrs: a("pads", k(2, 1), "strides", k(2)), ins: []operand{in(2, 3, 11), konst(5, 3, 4), konst(5)}, tol: tol},
		{op: "FusedConv", attrs: a("activation", "Relu", "pads", k(1, 1, 1, 1)), ins: []operand{in(1, 3, 6, 5), konst(4, 3, 3, 3), konst(4)}, tol: tol},
		{op: "FusedConv", attrs: a("activation", "Relu"), ins: []operand{in(1, 2, 4, 4), konst(3, 2, 1, 1), konst(3), in(1, 3, 4, 4)}, tol: tol},
		{op: "FusedConv", attrs: a("activation", "Clip", "activation_alpha", float32(0), "activation_beta", float32(0.5)), ins: []operand{in(1, 2, 4, 4), konst(3, 2, 3, 3), absent, in(1, 3, 2, 2)}, tol: tol},
	})
}

func TestAttention(t *testing.T) {
	tol := 1e-4
	mask := func(shape ...int64) operand { return operand{shape: dims(shape), mask: true} }
	runCases(t, []opCase{
		{op: "Attention", ins: []operand{in(1, 2, 3, 4), in(1, 2, 5, 4), in(1, 2, 5, 6)}, tol: tol},
		{op: "Attention", ins: []operand{in(2, 4, 3, 8), in(2, 2, 3, 8), in(2, 2, 3, 8)}, tol: tol}, // GQA
		{op: "Attention", attrs: []ir.AttrOption{ir.Int("is_causal", 1)}, ins: []operand{in(1, 3, 4, 5), in(1, 1, 6, 5), in(1, 1, 6, 3)}, tol: tol},
		{op: "Attention", attrs: []ir.AttrOption{ir.Int("is_causal", 1), ir.Float("scale", 0.3)}, ins: []operand{in(1, 2, 5, 4), in(1, 2, 3, 4), in(1, 2, 3, 4)}, tol: tol}, // rows with no key: NaN
		{op: "Attention", ins: []operand{in(2, 2, 3, 4), in(2, 2, 5, 4), in(2, 2, 5, 4), in(2, 1, 1, 5)}, tol: tol},                                                         // padding mask
		{op: "Attention", ins: []operand{in(1, 2, 3, 4), in(1, 2, 4, 4), in(1, 2, 4, 4), mask(3, 4)}, tol: tol},
		{op: "Attention", attrs: []ir.AttrOption{ir.Int("is_causal", 1)}, ins: []operand{in(2, 2, 4, 4), in(2, 2, 4, 4), in(2, 2, 4, 4), mask(2, 2, 4, 4)}, tol: tol},
	})
}

func TestMoreElementwise(t *testing.T) {
	pos := func(shape ...int64) operand { return operand{shape: dims(shape), lo: 0.1, hi: 5} }
	var cases []opCase
	for _, op := range []string{"Neg", "Abs", "Erf", "LeakyRelu", "HardSigmoid"} {
		cases = append(cases, opCase{op: op, ins: []operand{wide(3, 67)}})
	}
	for _, op := range []string{"Sqrt", "Reciprocal", "Log"} {
		cases = append(cases, opCase{op: op, ins: []operand{pos(5, 9)}})
	}
	cases = append(cases,
		opCase{op: "LeakyRelu", attrs: []ir.AttrOption{ir.Float("alpha", 0.3)}, ins: []operand{in(4, 4)}},
		opCase{op: "HardSigmoid", attrs: []ir.AttrOption{ir.Float("alpha", 0.5), ir.Float("beta", 0.6)}, ins: []operand{in(4, 4)}},
		opCase{op: "Max", ins: []operand{in(3, 5), in(5)}},
		opCase{op: "Min", ins: []operand{in(2, 1, 4), konst(3, 1)}},
	)
	runCases(t, cases)
}
