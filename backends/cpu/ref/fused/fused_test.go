package fused

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// fusedBody builds the body of a Fused node computing, from x and y:
//
//	out0 = Relu(x·y + c)     (c a body constant)
//	out1 = x                 (an input passed through)
//	out2 = Sigmoid(out0) - outer   (outer a value of the enclosing graph)
func fusedBody(parent *ir.Graph, outer *ir.Value) *ir.Graph {
	body := parent.NewSubgraph("fused_body")
	x := body.AddInput("x", ir.Float32, ir.S(2, 3))
	y := body.AddInput("y", ir.Float32, ir.S(3))
	c := body.AddConst("c", ir.FromFloat32(nil, []float32{-1}))
	mul := body.AddNode("Mul", "mul", []*ir.Value{x, y}, 1, nil).Outputs[0]
	add := body.AddNode("Add", "add", []*ir.Value{mul, c}, 1, nil).Outputs[0]
	relu := body.AddNode("Relu", "relu", []*ir.Value{add}, 1, nil).Outputs[0]
	sig := body.AddNode("Sigmoid", "sig", []*ir.Value{relu}, 1, nil).Outputs[0]
	sub := body.AddNode("Sub", "sub", []*ir.Value{sig, outer}, 1, nil).Outputs[0]
	body.Outputs = []*ir.Value{relu, x, sub}
	return body
}

func TestFusedRunsBody(t *testing.T) {
	g := ir.NewGraph("main")
	outer := g.AddInput("outer", ir.Float32, ir.S())
	body := fusedBody(g, outer)
	n := &ir.Node{Name: "f", Op: "Fused", Attrs: ir.Attrs{}, Outputs: []*ir.Value{{}, {}, {}}}
	ir.GraphAttr("body", body)(n.Attrs)

	env := backends.NewEnv(nil)
	env.Set(outer, ir.FromFloat32(nil, []float32{0.25}))
	x := ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, -1, 0, 0.5})
	y := ir.FromFloat32([]int64{3}, []float32{2, 1, 0})
	k, ok := ref.Lookup("Fused")
	require.True(t, ok)
	out, err := k(&ref.Context{Ctx: context.Background(), Env: env}, n, []*ir.Tensor{x, y})
	require.NoError(t, err)
	require.Len(t, out, 3)

	// x·y + c = [1 1 -1 -3 -1 -1]; Relu = [1 1 0 0 0 0].
	relu := []float64{1, 1, 0, 0, 0, 0}
	requireNear(t, tensor(ir.Float32, []int64{2, 3}, relu...), out[0], 0, 0, "out0")
	requireNear(t, x, out[1], 0, 0, "out1")
	require.NotSame(t, x, out[1], "a passed-through input is copied")
	s1 := 1/(1+0.36787944117144233) - 0.25
	requireNear(t, tensor(ir.Float32, []int64{2, 3}, s1, s1, 0.25, 0.25, 0.25, 0.25), out[2], 2, 0, "out2") // Sigmoid and Sub round separately

	// The same values as the unfused ops run one by one.
	step := must(t, "Relu", nil, must(t, "Add", nil, must(t, "Mul", nil, x, y), ir.FromFloat32(nil, []float32{-1})))
	requireNear(t, step, out[0], 0, 0, "unfused out0")
	requireNear(t, must(t, "Sub", nil, must(t, "Sigmoid", nil, step), env.Get(outer)), out[2], 0, 0, "unfused out2")
}

func TestFusedErrors(t *testing.T) {
	g := ir.NewGraph("main")
	outer := g.AddInput("outer", ir.Float32, ir.S())
	x := ir.FromFloat32([]int64{2, 3}, make([]float32, 6))
	y := ir.FromFloat32([]int64{3}, make([]float32, 3))
	node := func(nOut int, body *ir.Graph) *ir.Node {
		n := &ir.Node{Name: "f", Op: "Fused", Attrs: ir.Attrs{}}
		for i := 0; i < nOut; i++ {
			n.Outputs = append(n.Outputs, &ir.Value{})
		}
		if body != nil {
			ir.GraphAttr("body", body)(n.Attrs)
		}
		return n
	}
	k, _ := ref.Lookup("Fused")
	env := backends.NewEnv(nil)
	env.Set(outer, ir.FromFloat32(nil, []float32{0}))
	ctx := &ref.Context{Env: env}

	_, err := k(ctx, node(1, nil), []*ir.Tensor{x})
	requireErr(t, err, "no body")
	_, err = k(ctx, node(2, fusedBody(g, outer)), []*ir.Tensor{x, y})
	requireErr(t, err, "3 outputs, the node 2")
	_, err = k(ctx, node(3, fusedBody(g, outer)), []*ir.Tensor{x})
	requireErr(t, err, "got 1 inputs, want 2")
	_, err = k(ctx, node(3, fusedBody(g, outer)), []*ir.Tensor{x, nil})
	requireErr(t, err, "input 1 is absent")
	// A failing body node is named in the error.
	_, err = k(ctx, node(3, fusedBody(g, outer)), []*ir.Tensor{x, ir.FromFloat32([]int64{4}, make([]float32, 4))})
	requireErr(t, err, "Fused body", `"mul"`, "not broadcastable")
	// Without the outer value, the body cannot run.
	_, err = k(&ref.Context{}, node(3, fusedBody(g, outer)), []*ir.Tensor{x, y})
	requireErr(t, err, "has no value")
}

// TestRegistered: every weft op of ir/ops.go but QMatMul(Group), RotaryEmbedding,
// the KV-cache ops and QGather (whose kernels live in ref/qmatmul, ref/rope
// and ref/kvcache) has its kernel here.
func TestRegistered(t *testing.T) {
	for _, op := range ir.WeftOps {
		if op == "QMatMul" || op == "RotaryEmbedding" || op == "KVCacheUpdate" || op == "KVAttention" || op == "QGather" || op == "QMatMulGroup" {
			continue
		}
		_, ok := ref.Lookup(op)
		require.True(t, ok, "no reference kernel for %s", op)
	}
}
