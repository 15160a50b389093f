//go:build cgo

package vulkan

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

// chain is a multi-node partition: intermediates stay in the device arena,
// a constant weight is uploaded once, and two values leave the partition.
func chain(t *testing.T) (*ir.Graph, map[*ir.Value]*ir.Tensor) {
	r := rand.New(rand.NewPCG(42, 1))
	b := ir.NewBuilder("chain")
	x := b.Input("x", ir.Float32, ir.S(2, 5, 12))
	w := b.Const("w", randTensor(r, konst(12, 9)))
	bias := b.Const("bias", randTensor(r, konst(9)))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, w), bias))
	ln := b.Op("LayerNormalization", h, b.Const("gamma", randTensor(r, konst(9))), b.Const("beta", randTensor(r, konst(9))))
	tp := b.OpA("Transpose", []ir.AttrOption{ir.Ints("perm", 0, 2, 1)}, ln)
	b.Output("probs", b.Op("Softmax", tp))
	b.Output("hidden", h)
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	vals := map[*ir.Value]*ir.Tensor{x: randTensor(r, in(2, 5, 12))}
	for _, c := range g.Consts {
		vals[c] = c.Const
	}
	return g, vals
}

func TestPartitionChain(t *testing.T) {
	d := testDevice(t)
	g, vals := chain(t)
	want := reference(t, g, vals)
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	for run := 0; run < 2; run++ { // the second run replays the recorded commands
		got := runExe(t, exe, g, vals)
		for _, o := range g.Outputs {
			requireClose(t, want[o], got[o], 1e-4, o.Name)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	d := testDevice(t)
	g, _ := chain(t)
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	x := g.Inputs[0]
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine its own input, checked against the reference.
			r := rand.New(rand.NewPCG(uint64(i), 9))
			mine := map[*ir.Value]*ir.Tensor{x: randTensor(r, in(2, 5, 12))}
			for _, c := range g.Consts {
				mine[c] = c.Const
			}
			want := reference(t, g, mine)
			for k := 0; k < 3; k++ {
				env := backends.NewEnv(nil)
				env.Set(x, mine[x])
				if errs[i] = exe.Run(context.Background(), env); errs[i] != nil {
					return
				}
				for _, o := range g.Outputs {
					requireClose(t, want[o], env.Get(o), 1e-4, o.Name)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

func TestRunChecksInputs(t *testing.T) {
	d := testDevice(t)
	g, vals := chain(t)
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	x := g.Inputs[0]
	env := backends.NewEnv(nil)
	err = exe.Run(context.Background(), env)
	require.ErrorContains(t, err, "has no value")
	env.Set(x, ir.NewTensor(ir.Float32, []int64{2, 5, 11}))
	require.ErrorContains(t, exe.Run(context.Background(), env), "got a f32[2 5 11] tensor")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env.Set(x, vals[x])
	require.ErrorIs(t, exe.Run(ctx, env), context.Canceled)
}

func TestCompileDeclines(t *testing.T) {
	d := testDevice(t)
	b := ir.NewBuilder("cos")
	x := b.Input("x", ir.Float32, ir.S(1, 1, 4, 4))
	b.Output("y", b.Op("Cos", x))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	require.ErrorIs(t, d.Supports(g.Nodes[0]), ir.ErrUnsupported)
	_, err = d.Compile(wholePartition(g))
	require.ErrorIs(t, err, ir.ErrUnsupported)
	require.ErrorContains(t, err, `vulkan: node Cos: vulkan: Cos: no shader for this op`)
}

func TestDeviceFacts(t *testing.T) {
	d := testDevice(t)
	info, q, ok := DeviceInfo(d)
	require.True(t, ok)
	require.NotEmpty(t, info.Name)
	require.GreaterOrEqual(t, info.ComputeQueueFamily, 0)
	require.GreaterOrEqual(t, info.MaxGroupCount[0], uint32(65535), "Vulkan's minimum")
	if q.Software {
		require.Equal(t, backends.CPU, d.Kind(), "a software device is costed as a CPU")
	} else {
		require.Equal(t, backends.GPU, d.Kind())
	}
	require.Equal(t, info.DeviceMemoryHost, d.HostVisible())
	t.Logf("%s: %s %s, vendor %s, driver %s (%s), flags %v, host-visible %v",
		d.Name(), info.Type, info.Name, VendorName(info.VendorID), info.DriverName, info.DriverInfo, q.Flags(), d.HostVisible())

	buf, err := d.Alloc(100)
	require.NoError(t, err)
	defer buf.Free()
	require.Equal(t, 100, buf.Size())
	if d.HostVisible() {
		h := buf.Host()
		require.Len(t, h, 100)
		h[99] = 7 // the mapping is writable
		require.Equal(t, byte(7), buf.Host()[99])
	} else {
		require.Nil(t, buf.Host())
	}
	_, err = d.Alloc(-1)
	require.Error(t, err)
}

func TestProbeKillSwitches(t *testing.T) {
	env := func(k, v string) func(string) string {
		return func(key string) string {
			if key == k {
				return v
			}
			return ""
		}
	}
	devs, why := probe(env("WEFT_VULKAN_DISABLE", "1"))
	require.Empty(t, devs)
	require.Equal(t, "vulkan: disabled by WEFT_VULKAN_DISABLE=1", why)

	d := testDevice(t)
	if !d.quirks.Software {
		t.Skip("the first device is not a software implementation")
	}
	// A second probe (a fresh instance) with software devices hidden.
	devs, why = probe(env("WEFT_VULKAN_SOFTWARE", "0"))
	for _, other := range devs {
		_, q, _ := DeviceInfo(other)
		require.False(t, q.Software, "%s is software but was not hidden", other.Name())
	}
	require.Contains(t, why, "hidden by WEFT_VULKAN_SOFTWARE=0")
}
