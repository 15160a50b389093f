package cpu_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// matmulGraph is y = x · w for x [rows, 64] and the constant w [64, 96],
// referenced (not copied) by the graph.
func matmulGraph(t *testing.T, rows int64, w *ir.Tensor) *ir.Graph {
	b := ir.NewBuilder("mm")
	x := b.Input("x", ir.Float32, ir.S(rows, 64))
	b.Output("y", b.Op("MatMul", x, b.Const("w", w)))
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

// Graphs compiled from the same constant weight (as a language model's
// prefill and decode graphs are) share one packing; an equal but distinct
// tensor gets its own. Every session still computes what the reference does.
func TestPackedWeightsSharedAcrossSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	w := randTensor(r, 64, 96)
	wCopy := ir.NewTensor(ir.Float32, w.Shape)
	copy(wCopy.Data, w.Data)

	dev := cpuDevice(t)
	// The sessions stay alive to the end: the cache holds packings weakly,
	// so a collected session's packing would be made again.
	var sessions []any
	defer func() { runtime.KeepAlive(sessions) }()
	for _, tc := range []struct {
		name  string
		rows  int64
		w     *ir.Tensor
		packs int64 // packings this compile adds
	}{
		{"prefill-like, first use of w", 8, w, 1},
		{"decode-like, same w", 1, w, 0},
		{"same w again", 8, w, 0},
		{"an equal copy of w", 8, wCopy, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := matmulGraph(t, tc.rows, tc.w)
			in := []*ir.Tensor{randTensor(r, tc.rows, 64)}
			annotate(t, g, in)
			before := cpu.PackCount()
			s := session(t, g, dev)
			sessions = append(sessions, s)
			require.Equal(t, tc.packs, cpu.PackCount()-before, "packings made by the compile")
			want, err := ref.RunGraph(context.Background(), g, nil, in)
			require.NoError(t, err)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, want[0].Shape)}
			require.NoError(t, s.RunInto(context.Background(), in, out))
			requireNear(t, want[0], out[0])
		})
	}
}
