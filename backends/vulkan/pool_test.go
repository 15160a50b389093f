//go:build cgo

package vulkan

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

// smallMLP is x[5,24] → MatMul → Add → Relu → MatMul → Add → Softmax.
func smallMLP(t *testing.T) (*ir.Graph, *ir.Value) {
	r := rand.New(rand.NewPCG(9, 2))
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.S(5, 24))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, b.Const("w1", randTensor(r, konst(24, 40)))), b.Const("b1", randTensor(r, konst(40)))))
	y := b.Op("Softmax", b.Op("Add", b.Op("MatMul", h, b.Const("w2", randTensor(r, konst(40, 7)))), b.Const("b2", randTensor(r, konst(7)))))
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	return g, x
}

// withConsts adds g's constants to vals (for reference).
func withConsts(g *ir.Graph, vals map[*ir.Value]*ir.Tensor) map[*ir.Value]*ir.Tensor {
	for _, c := range g.Consts {
		vals[c] = c.Const
	}
	return vals
}

// TestPlanArenas compiles a memory-planned plan on the device: every value
// the plan places in the device's arena lives at its plan offset inside
// the one buffer given to NewState, and repeated runs allocate no device
// memory.
func TestPlanArenas(t *testing.T) {
	d := testDevice(t)
	g, x := smallMLP(t)
	p, _, err := weft.Compile(g, weft.Options{OptLevel: 0, Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
	require.NoError(t, err)
	require.Len(t, p.Partitions, 1, p.Text())
	part := p.Partitions[0]
	require.Equal(t, d.name, part.Device)
	arenaIdx := -1
	for i, a := range p.Arenas {
		if a.Device == d.name {
			arenaIdx = i
		}
	}
	require.GreaterOrEqual(t, arenaIdx, 0, "the plan has an arena on %s", d.name)
	_, live0, cmds0, _ := MemoryStats(d)

	exe, err := d.CompilePlanned(p, part)
	require.NoError(t, err)
	e := exe.(*executable)
	planned := 0
	for _, b := range p.Buffers {
		if b.Offset < 0 || b.Device != d.name {
			continue
		}
		l, ok := e.at[b.Value]
		require.True(t, ok, "value %v", b.Value)
		require.True(t, l.inArena, "value %v is planned at %d but lives in scratch", b.Value, b.Offset)
		require.Equal(t, uint64(b.Offset), l.off, "value %v", b.Value)
		planned++
	}
	require.GreaterOrEqual(t, planned, 4, "intermediates of the MLP")
	require.Greater(t, e.scratch, uint64(0), "the graph output lives in scratch")

	arena, err := d.Alloc(int(p.Arenas[arenaIdx].Size))
	require.NoError(t, err)
	st, err := e.NewState(arena)
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(1, 1))
	vals := map[*ir.Value]*ir.Tensor{x: randTensor(r, in(5, 24))}
	want := reference(t, g, withConsts(g, vals))
	env := backends.NewEnv(nil)
	for _, c := range g.Consts {
		env.Set(c, c.Const)
	}
	env.Set(x, vals[x])
	dst := ir.NewTensor(ir.Float32, []int64{5, 7})
	env.Set(g.Outputs[0], dst)
	require.NoError(t, st.Run(context.Background(), env))
	require.Same(t, dst, env.Get(g.Outputs[0]), "a bound graph output is written in place")
	requireClose(t, want[g.Outputs[0]], dst, 1e-5, "y")

	allocs, _, _, _ := MemoryStats(d)
	for i := range 10 {
		dst.Float32s()[0] = -1
		require.NoError(t, st.Run(context.Background(), env))
		requireClose(t, want[g.Outputs[0]], env.Get(g.Outputs[0]), 1e-5, "y")
		after, _, _, _ := MemoryStats(d)
		require.Equal(t, allocs, after, "run %d allocated device memory", i)
	}
	goAllocs := testing.AllocsPerRun(5, func() {
		if err := st.Run(context.Background(), env); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, goAllocs, "Go allocations per run with a bound output")
	t.Logf("a run: %v Go allocations, 0 device allocations; arena %d bytes, scratch %d, staging %d", goAllocs, p.Arenas[arenaIdx].Size, e.scratch, e.staging)

	// A state for a too-small arena, or an arena of another kind, is refused.
	small, err := d.Alloc(8)
	require.NoError(t, err)
	_, err = e.NewState(small)
	require.ErrorContains(t, err, "the plan places values up to byte")
	small.Free()
	_, err = e.NewState(nil)
	require.ErrorContains(t, err, "no arena given")

	require.NoError(t, st.(*runState).Close())
	require.NoError(t, e.Close())
	arena.Free()
	_, live, cmds, _ := MemoryStats(d)
	require.Equal(t, live0, live, "live device allocations after closing")
	require.Equal(t, cmds0, cmds, "live command states after closing")
}

// TestDeviceClose opens a second set of devices, compiles and runs on one,
// and closes it: refused while an executable holds memory, then releasing
// everything.
func TestDeviceClose(t *testing.T) {
	testDevice(t)
	devs, reason := probe(os.Getenv)
	require.NotEmpty(t, devs, reason)
	d := devs[0].(*device)
	for _, o := range devs[1:] {
		require.NoError(t, o.(*device).Close())
	}
	g, x := smallMLP(t)
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(2, 2))
	vals := map[*ir.Value]*ir.Tensor{x: randTensor(r, in(5, 24))}
	got := runExe(t, exe, g, vals)
	requireClose(t, reference(t, g, withConsts(g, vals))[g.Outputs[0]], got[g.Outputs[0]], 1e-5, "y")
	require.ErrorContains(t, d.Close(), "still in use")
	require.NoError(t, exe.(*executable).Close())
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close is a no-op")
	_, err = d.Compile(wholePartition(g))
	require.ErrorContains(t, err, "the device is closed")
	_, err = d.Alloc(16)
	require.ErrorContains(t, err, "the device is closed")
}
