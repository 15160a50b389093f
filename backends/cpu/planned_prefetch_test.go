package cpu

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// TestPlannedPrefetch checks the planned executor's side of the weight
// prefetch rule: it sums the bytes its steps stream and collects their
// copies, setPrefetch sets the copies to what streamPrefetch says for
// that sum (and back; Keep throughout on a CPU where the stream hint does
// not pay), and a run with the weights streamed
// non-temporally computes what it computes with them kept, bit for bit.
func TestPlannedPrefetch(t *testing.T) {
	if !packOn(ir.Q4_0) {
		t.Skip("Q4_0 weights are not packed here: no copy takes the prefetch hint")
	}
	r := rand.New(rand.NewPCG(31, 32))
	const N, K = 40, 96
	b := ir.NewBuilder("gemv")
	x := b.Input("x", ir.Float32, ir.Shape{ir.Dim{Size: 1}, ir.Dim{Size: K}})
	w, err := quant.Quantize(randF32(r, N, K), ir.Q4_0)
	require.NoError(t, err)
	y := b.Op("QMatMul", x, b.Const("w", w))
	y.DType, y.Shape = ir.Float32, ir.Shape{ir.Dim{Size: 1}, ir.Dim{Size: N}}
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	dev := device{threads: 2}
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{dev}})
	require.NoError(t, err)
	exe, err := dev.CompilePlanned(p, p.Partitions[0])
	require.NoError(t, err)
	e := exe.(*plannedExe)
	require.Equal(t, int64(len(w.Data)), e.streamed)
	require.Len(t, e.copies, 1)
	c := e.copies[0]

	c0 := weightCopies.Load()
	s, err := runtime.NewSession(p, []backends.Device{dev})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, c0, weightCopies.Load(), "the session's kernel shares the packing")
	in := map[string]*ir.Tensor{"x": randF32(r, 1, K)}
	run := func() []float32 {
		out, err := s.Run(context.Background(), in)
		require.NoError(t, err)
		return out["y"].Float32s()
	}
	e.setPrefetch(e.pool.Far())
	require.Equal(t, kernels.PrefetchKeep, c.prefetch(), "40 rows fit any cache")
	keep := run()
	// The session's executor shares the copy (one packing per weight) and
	// decides Keep, which it already holds: it leaves the copy as set.
	e.streamed = 1 << 40
	e.setPrefetch(e.pool.Far())
	if kernels.StreamPrefetchHelps() {
		require.Equal(t, kernels.PrefetchStream, c.prefetch(), "a terabyte fits no cache")
	} else {
		require.Equal(t, kernels.PrefetchKeep, c.prefetch(), "the stream hint does not pay on this CPU")
		c.pf.Store(uint32(kernels.PrefetchStream)) // the kernels still take it
	}
	require.Equal(t, keep, run(), "streaming the weights changed a result")
	if !kernels.StreamPrefetchHelps() {
		c.pf.Store(uint32(kernels.PrefetchKeep)) // as the executor left it
	}
	e.streamed = int64(len(w.Data))
	e.setPrefetch(e.pool.Far())
	require.Equal(t, kernels.PrefetchKeep, c.prefetch())
}
