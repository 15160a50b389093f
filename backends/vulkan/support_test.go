package vulkan

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// These tests need no device: they check what planning accepts and
// declines, and how quirks are derived.

var testLimits = limits{maxGroups: [3]uint32{65535, 65535, 65535}, maxStorageRange: 1 << 31}

// node builds a one-node graph over inputs of the given dtypes and shapes
// with the output's dtype and shape set by hand.
func node(op string, attrs []ir.AttrOption, out ir.Shape, outDT ir.DType, ins ...*ir.Value) *ir.Node {
	g := ir.NewGraph(op)
	a := ir.Attrs{}
	for _, o := range attrs {
		o(a)
	}
	n := g.AddNode(op, "n", ins, 1, a)
	n.Outputs[0].DType, n.Outputs[0].Shape = outDT, out
	return n
}

func TestDeclines(t *testing.T) {
	g := ir.NewGraph("t")
	f32 := func(s ...int64) *ir.Value { return g.AddInput("x", ir.Float32, ir.S(s...)) }
	f16 := func(s ...int64) *ir.Value { return g.AddInput("h", ir.Float16, ir.S(s...)) }
	cases := []struct {
		name   string
		n      *ir.Node
		quirks Quirks
		want   string
	}{
		{"f16 without storage", node("MatMul", nil, ir.S(2, 2), ir.Float16, f16(2, 3), f16(3, 2)), Quirks{}, "vulkan: MatMul: f16 storage not enabled"},
		{"f16 storage switched off", node("MatMul", nil, ir.S(2, 2), ir.Float16, f16(2, 3), f16(3, 2)), Quirks{F16Arith: true}, "WEFT_VULKAN_FP16_STORAGE=0"},
		{"f16 other op", node("Relu", nil, ir.S(2, 3), ir.Float16, f16(2, 3)), Quirks{F16Storage: true}, "f16 data (the f16 kernels are MatMul and FusedMatMul)"},
		{"f16 mixed", node("MatMul", nil, ir.S(2, 2), ir.Float32, f16(2, 3), f16(3, 2)), Quirks{F16Storage: true}, "mixed dtypes f16 and f32"},
		{"int64", node("Add", nil, ir.S(2), ir.Int64, g.AddInput("i", ir.Int64, ir.S(2)), g.AddInput("j", ir.Int64, ir.S(2))), Quirks{}, "dtype i64"},
		{"dynamic shape", node("Relu", nil, ir.Shape{ir.Sym("n")}, ir.Float32, g.AddInput("d", ir.Float32, ir.Shape{ir.Sym("n")})), Quirks{}, "dynamic shape"},
		{"empty", node("Relu", nil, ir.S(0, 3), ir.Float32, f32(0, 3)), Quirks{}, "is empty"},
		{"no shader", node("Cos", nil, ir.S(1, 1, 3, 3), ir.Float32, f32(1, 1, 3, 3)), Quirks{}, "no shader for this op"},
		{"conv 3-D", node("Conv", nil, ir.S(1, 1, 2, 2, 2), ir.Float32, f32(1, 1, 2, 2, 2), f32(1, 1, 1, 1, 1)), Quirks{}, "rank 5 (only 1-D and 2-D"},
		{"reduce middle axis", node("ReduceSum", nil, ir.S(2, 4), ir.Float32, f32(2, 3, 4), g.AddConst("axes", ir.FromInt64([]int64{1}, []int64{1}))), Quirks{}, "not the trailing axes"},
		{"reshape shape input", node("Reshape", nil, ir.S(6), ir.Float32, f32(2, 3), g.AddInput("s", ir.Int64, ir.S(1))), Quirks{}, "is not a constant"},
		{"gather axis 1", node("Gather", []ir.AttrOption{ir.Int("axis", 1)}, ir.S(2, 2), ir.Float32, f32(2, 3), g.AddInput("i", ir.Int64, ir.S(2))), Quirks{}, "only axis 0"},
		{"gather float indices", node("Gather", nil, ir.S(2, 3), ir.Float32, f32(4, 3), f32(2)), Quirks{}, "indices of dtype f32"},
		{"attention bool mask", node("Attention", nil, ir.S(1, 1, 2, 4), ir.Float32, f32(1, 1, 2, 4), f32(1, 1, 3, 4), f32(1, 1, 3, 4), g.AddInput("m", ir.Bool, ir.S(2, 3))), Quirks{}, "dtype bool"},
		{"maxpool indices", func() *ir.Node {
			n := node("MaxPool", []ir.AttrOption{ir.Ints("kernel_shape", 2, 2)}, ir.S(1, 1, 1, 1), ir.Float32, f32(1, 1, 2, 2))
			n.Outputs = append(n.Outputs, g.NewValue("idx", ir.Int64, ir.S(1, 1, 1, 1)))
			return n
		}(), Quirks{}, "dtype i64"},
		{"softmax axis", node("Softmax", []ir.AttrOption{ir.Int("axis", 0)}, ir.S(3, 4), ir.Float32, f32(3, 4)), Quirks{}, "not the last axis"},
		{"gelu approx", node("Gelu", []ir.AttrOption{ir.Str("approximate", "fast")}, ir.S(3), ir.Float32, f32(3)), Quirks{}, `approximate="fast"`},
		{"binary rank 7", node("Add", nil, ir.S(1, 1, 1, 1, 1, 1, 2), ir.Float32, f32(1, 1, 1, 1, 1, 1, 2), f32(2)), Quirks{}, "rank 7 > 6"},
		{"matmul 5 batch dims", node("MatMul", nil, ir.S(1, 1, 1, 1, 1, 2, 2), ir.Float32, f32(1, 1, 1, 1, 1, 2, 3), f32(3, 2)), Quirks{}, "5 batch dims > 4"},
		{"fused bias with vector", node("FusedMatMul", nil, ir.S(2), ir.Float32, f32(3), f32(3, 2), f32(2)), Quirks{}, "a Bias with a 1-D operand"},
		{"fused activation", node("FusedMatMul", []ir.AttrOption{ir.Str("activation", "Elu")}, ir.S(2, 2), ir.Float32, f32(2, 3), f32(3, 2)), Quirks{}, `activation "Elu"`},
		{"layernorm stats", func() *ir.Node {
			n := node("LayerNormalization", nil, ir.S(2, 3), ir.Float32, f32(2, 3), f32(3))
			n.Outputs = append(n.Outputs, g.NewValue("mean", ir.Float32, ir.S(2, 1)))
			return n
		}(), Quirks{}, "Mean and InvStdDev"},
		{"layernorm stash", node("LayerNormalization", []ir.AttrOption{ir.Int("stash_type", 10)}, ir.S(2, 3), ir.Float32, f32(2, 3), f32(3)), Quirks{}, "stash_type 10"},
		{"norm scale shape", node("RMSNormalization", nil, ir.S(2, 3), ir.Float32, f32(2, 3), f32(2, 3)), Quirks{}, "not one value per normalized element"},
		{"subgraph", node("If", []ir.AttrOption{ir.GraphAttr("then_branch", ir.NewGraph("b"))}, ir.S(1), ir.Float32, f32(1)), Quirks{}, "subgraphs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planNode(c.n, c.quirks, testLimits)
			require.Error(t, err)
			require.True(t, errors.Is(err, ir.ErrUnsupported), "%v does not wrap ir.ErrUnsupported", err)
			require.Contains(t, err.Error(), c.want)
			require.Contains(t, err.Error(), "unsupported")
		})
	}
}

func TestBadShapesAreErrors(t *testing.T) {
	g := ir.NewGraph("t")
	f32 := func(s ...int64) *ir.Value { return g.AddInput("x", ir.Float32, ir.S(s...)) }
	for _, n := range []*ir.Node{
		node("MatMul", nil, ir.S(2, 2), ir.Float32, f32(2, 3), f32(4, 2)),
		node("Add", nil, ir.S(2, 3), ir.Float32, f32(2, 3), f32(4)),
		node("Transpose", []ir.AttrOption{ir.Ints("perm", 0, 0)}, ir.S(2, 2), ir.Float32, f32(2, 2)),
	} {
		_, err := planNode(n, Quirks{}, testLimits)
		require.Error(t, err, n.Op)
		require.False(t, errors.Is(err, ir.ErrUnsupported), "%v: bad input is not an unsupported feature", err)
	}
}

func TestDispatchLimits(t *testing.T) {
	g := ir.NewGraph("t")
	small := limits{maxGroups: [3]uint32{4, 4, 2}, maxStorageRange: 1 << 31}
	n := node("MatMul", nil, ir.S(3, 16, 16), ir.Float32, g.AddInput("a", ir.Float32, ir.S(3, 16, 8)), g.AddInput("b", ir.Float32, ir.S(8, 16)))
	_, err := planNode(n, Quirks{}, small)
	require.ErrorIs(t, err, ir.ErrUnsupported)
	require.Contains(t, err.Error(), "dispatch limits")
	// Elementwise work folds into x·y workgroups.
	n = node("Relu", nil, ir.S(256*12), ir.Float32, g.AddInput("x", ir.Float32, ir.S(256*12)))
	ds, err := planNode(n, Quirks{}, small)
	require.NoError(t, err)
	require.Equal(t, [3]uint32{4, 3, 1}, ds[0].groups)
	n = node("Relu", nil, ir.S(256*17), ir.Float32, g.AddInput("x", ir.Float32, ir.S(256*17)))
	_, err = planNode(n, Quirks{}, small)
	require.ErrorIs(t, err, ir.ErrUnsupported)
	// A tensor larger than one binding.
	n = node("Relu", nil, ir.S(1024), ir.Float32, g.AddInput("x", ir.Float32, ir.S(1024)))
	_, err = planNode(n, Quirks{}, limits{maxGroups: testLimits.maxGroups, maxStorageRange: 1024})
	require.ErrorIs(t, err, ir.ErrUnsupported)
}

func TestPushConstantsFitShaders(t *testing.T) {
	for name, si := range shaderTable {
		require.LessOrEqual(t, 4*si.push, 128, "%s: 128 bytes of push constants is all Vulkan guarantees", name)
		_, err := spirv.ReadFile("shaders/" + name + ".spv")
		require.NoError(t, err, "shader %s is not embedded (run go generate)", name)
	}
}

func TestQuirks(t *testing.T) {
	lavapipe := Info{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", VendorID: vendorMesa, Type: "cpu", Storage16Bit: true, ShaderFloat16: true, Storage8Bit: true, ComputeQueueFamily: 0, HasStagingMemory: true}
	adreno := Info{Name: "Adreno (TM) 740", VendorID: vendorQualcomm, Type: "integrated", Storage16Bit: true, ShaderFloat16: true, ComputeQueueFamily: 0, HasStagingMemory: true}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		name string
		info Info
		env  func(string) string
		want []string
		hide string
	}{
		{"lavapipe", lavapipe, env(), []string{"software", "f16_storage", "f16_arith", "int8_storage"}, ""},
		{"lavapipe fp16 off", lavapipe, env("WEFT_VULKAN_FP16", "0"), []string{"software", "int8_storage"}, ""},
		{"lavapipe fp16 arith off", lavapipe, env("WEFT_VULKAN_FP16_ARITH", "0", "WEFT_VULKAN_INT8", "0"), []string{"software", "f16_storage"}, ""},
		{"lavapipe hidden", lavapipe, env("WEFT_VULKAN_SOFTWARE", "0"), []string{"software", "f16_storage", "f16_arith", "int8_storage"}, "a software implementation, hidden by WEFT_VULKAN_SOFTWARE=0"},
		{"adreno", adreno, env(), []string{"f16_storage", "f16_arith", "bug_tanh_overflow"}, ""},
		{"lavapipe fp16 storage off", lavapipe, env("WEFT_VULKAN_FP16_STORAGE", "0"), []string{"software", "f16_arith", "int8_storage"}, ""},
		{"lavapipe fp16 weights opt-in", lavapipe, env("WEFT_VULKAN_FP16_WEIGHTS", "1"), []string{"software", "f16_storage", "f16_arith", "f16_weights", "int8_storage"}, ""},
		{"fp16 weights need storage", lavapipe, env("WEFT_VULKAN_FP16_WEIGHTS", "1", "WEFT_VULKAN_FP16_STORAGE", "0"), []string{"software", "f16_arith", "int8_storage"}, ""},
		{"no compute queue", Info{ComputeQueueFamily: -1, HasStagingMemory: true}, env(), nil, "no compute queue"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := deriveQuirks(c.info, c.env)
			require.Equal(t, c.want, q.Flags())
			require.Equal(t, c.hide, hideDevice(c.info, q, c.env))
		})
	}
	require.Equal(t, "", disabledReason(env()))
	require.Equal(t, "", disabledReason(env("WEFT_VULKAN_DISABLE", "0")))
	require.Contains(t, disabledReason(env("WEFT_VULKAN_DISABLE", "1")), "disabled by WEFT_VULKAN_DISABLE=1")
	require.Equal(t, "Mesa", VendorName(vendorMesa))
	require.Equal(t, "0x1234", VendorName(0x1234))
}

func TestDevicesNeverFail(t *testing.T) {
	devs, err := theBackend.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		require.NotEmpty(t, Unavailable(), "no devices must come with a reason")
	}
	for i, d := range devs {
		require.Equal(t, "vulkan:", d.Name()[:7], "device %d", i)
	}
}
