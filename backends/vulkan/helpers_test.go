//go:build cgo

package vulkan

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	_ "github.com/weftrt/weft/backends/cpu" // registers the reference kernels
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
)

// testDevice returns the process's first Vulkan device (probed once and
// shared by every test). Without one the test is skipped, or fails when
// WEFT_REQUIRE_VULKAN=1 (CI sets it where lavapipe is installed).
func testDevice(t *testing.T) *device {
	t.Helper()
	devs, err := theBackend.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		if os.Getenv("WEFT_REQUIRE_VULKAN") == "1" {
			t.Fatalf("WEFT_REQUIRE_VULKAN=1 but there is no Vulkan device: %s", Unavailable())
		}
		t.Skipf("no Vulkan device, skipping: %s", Unavailable())
	}
	return devs[0].(*device)
}

// operand describes one input of a test node: its shape, whether it is a
// constant, and the range of its random values. A nil shape is an absent
// optional input.
type operand struct {
	shape   []int64
	isConst bool
	lo, hi  float64
	awayOf0 bool // |x| ≥ 0.5 (divisors)
	// ints, when set, makes an int64 tensor of these values (shape: the
	// shape, or [len(ints)] when shape is empty and len(ints) != 1).
	ints []int64
	i32  bool // ints as int32
	// mask makes an additive attention mask: 0 or -inf (about one in four).
	mask bool
}

// dims keeps a scalar's shape non-nil (nil means absent).
func dims(shape []int64) []int64 { return append([]int64{}, shape...) }

func in(shape ...int64) operand    { return operand{shape: dims(shape), lo: -2, hi: 2} }
func konst(shape ...int64) operand { return operand{shape: dims(shape), isConst: true, lo: -2, hi: 2} }
func wide(shape ...int64) operand  { return operand{shape: dims(shape), lo: -20, hi: 20} }

var absent = operand{}

// ints1 is a constant int64 vector.
func ints1(v ...int64) operand {
	return operand{shape: []int64{int64(len(v))}, isConst: true, ints: v}
}

// intsIn is an int64 graph input of the given shape and values.
func intsIn(shape []int64, v ...int64) operand { return operand{shape: dims(shape), ints: v} }

func randTensor(r *rand.Rand, o operand) *ir.Tensor {
	if o.ints != nil && o.i32 {
		t := ir.NewTensor(ir.Int32, o.shape)
		for i, v := range o.ints {
			t.SetInt64(i, v)
		}
		return t
	}
	if o.ints != nil {
		return ir.FromInt64(o.shape, o.ints)
	}
	n := ir.NumElements(o.shape)
	vals := make([]float32, n)
	for i := range vals {
		v := o.lo + (o.hi-o.lo)*r.Float64()
		if o.awayOf0 && math.Abs(v) < 0.5 {
			v = math.Copysign(0.5+math.Abs(v), v)
		}
		if o.mask {
			v = 0
			if r.IntN(4) == 0 {
				v = math.Inf(-1)
			}
		}
		vals[i] = float32(v)
	}
	return ir.FromFloat32(o.shape, vals)
}

// oneNode builds a graph with one node of op over the operands, infers its
// shapes and returns it with the inputs' tensors.
func oneNode(t testing.TB, seed uint64, op string, attrs []ir.AttrOption, ops ...operand) (*ir.Graph, map[*ir.Value]*ir.Tensor) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	b := ir.NewBuilder(op)
	vals := map[*ir.Value]*ir.Tensor{}
	var ins []*ir.Value
	for i, o := range ops {
		if o.shape == nil {
			ins = append(ins, nil)
			continue
		}
		tt := randTensor(r, o)
		var v *ir.Value
		if o.isConst {
			v = b.Const("c"+string(rune('0'+i)), tt)
		} else {
			v = b.Input("x"+string(rune('0'+i)), tt.DType, ir.S(o.shape...))
		}
		vals[v] = tt
		ins = append(ins, v)
	}
	b.Output("y", b.OpA(op, attrs, ins...))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	return g, vals
}

// reference runs g with the CPU reference kernels.
func reference(t testing.TB, g *ir.Graph, vals map[*ir.Value]*ir.Tensor) map[*ir.Value]*ir.Tensor {
	t.Helper()
	env := backends.NewEnv(nil)
	for v, tt := range vals {
		env.Set(v, tt)
	}
	require.NoError(t, ref.Eval(&ref.Context{Ctx: context.Background(), Env: env}, g.Nodes))
	out := map[*ir.Value]*ir.Tensor{}
	for _, o := range g.Outputs {
		out[o] = env.Get(o)
	}
	return out
}

// wholePartition makes one partition of all of g's nodes.
func wholePartition(g *ir.Graph) *plan.Partition {
	p := &plan.Partition{Nodes: g.Nodes, Outputs: g.Outputs}
	p.Inputs = append(p.Inputs, g.Inputs...)
	p.Inputs = append(p.Inputs, g.Consts...)
	return p
}

// onDevice compiles g as one partition on d and runs it once.
func onDevice(t *testing.T, d *device, g *ir.Graph, vals map[*ir.Value]*ir.Tensor) map[*ir.Value]*ir.Tensor {
	t.Helper()
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	return runExe(t, exe, g, vals)
}

func runExe(t *testing.T, exe backends.Executable, g *ir.Graph, vals map[*ir.Value]*ir.Tensor) map[*ir.Value]*ir.Tensor {
	env := backends.NewEnv(nil)
	for _, v := range g.Inputs {
		env.Set(v, vals[v])
	}
	require.NoError(t, exe.Run(context.Background(), env))
	out := map[*ir.Value]*ir.Tensor{}
	for _, o := range g.Outputs {
		out[o] = env.Get(o)
		require.NotNil(t, out[o], "output %v", o)
	}
	return out
}

// requireClose compares float32 tensors elementwise: |got-want| ≤ tol·(1+|want|),
// or both NaN (attention rows with every key masked).
func requireClose(t *testing.T, want, got *ir.Tensor, tol float64, what string) {
	t.Helper()
	require.Equal(t, want.DType, got.DType, what)
	require.Equal(t, want.Shape, got.Shape, what)
	w, g := want.Float32s(), got.Float32s()
	worst, at := 0.0, -1
	for i := range w {
		if math.IsNaN(float64(w[i])) && math.IsNaN(float64(g[i])) {
			continue
		}
		d := math.Abs(float64(g[i])-float64(w[i])) / (1 + math.Abs(float64(w[i])))
		if d > worst || math.IsNaN(d) {
			worst, at = d, i
			if math.IsNaN(d) {
				worst = math.Inf(1)
			}
		}
	}
	if worst > tol {
		t.Fatalf("%s: element %d: got %v, want %v (relative error %.3g > %.3g)", what, at, g[at], w[at], worst, tol)
	}
}
