package cpu_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu"
	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	rt "github.com/weftrt/weft/runtime"
)

// prepackGraph is y = relu(x·w1 + b1)·w2 with odd sizes: K=200 spans two
// K blocks, N=45 and N=130 end in partial panels.
func prepackGraph(t *testing.T) (*ir.Graph, []*ir.Tensor) {
	r := rand.New(rand.NewPCG(41, 42))
	b := ir.NewBuilder("prepack")
	x := b.Input("x", ir.Float32, ir.S(7, 200))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, b.Const("w1", randTensor(r, 200, 45))), b.Const("b1", randTensor(r, 45))))
	b.Output("y", b.Op("MatMul", h, b.Const("w2", randTensor(r, 45, 130))))
	g, err := b.Build()
	require.NoError(t, err)
	return g, []*ir.Tensor{randTensor(r, 7, 200)}
}

// savePrepackPlan compiles g and writes it to dir/name.
func savePrepackPlan(t *testing.T, g *ir.Graph, dir, name string) string {
	path := filepath.Join(dir, name)
	opts := weft.DefaultOptions()
	p, _, err := weft.Compile(g, opts)
	require.NoError(t, err)
	require.NoError(t, weft.SavePlan(path, p, opts, "prepack"))
	return path
}

// mapping returns the address range the process maps path at (Linux).
func mapping(t *testing.T, path string) (lo, hi uintptr, ok bool) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != abs {
			continue
		}
		var a, b uintptr
		_, err := fmt.Sscanf(fields[0], "%x-%x", &a, &b)
		require.NoError(t, err)
		if !ok || a < lo {
			lo = a
		}
		hi, ok = max(hi, b), true
	}
	return lo, hi, ok
}

// openRun opens the plan at path, runs it on in, and returns the output,
// the panels its kernels received and the packings the open made.
func openRun(t *testing.T, path string, in []*ir.Tensor) (*ir.Tensor, [][]float32, int64, *weft.Model) {
	before := cpu.PackCount()
	var m *weft.Model
	panels := cpu.PanelsDuring(func() {
		var err error
		m, err = weft.OpenPlan(path, weft.DefaultOptions())
		require.NoError(t, err)
	})
	packs := cpu.PackCount() - before
	t.Cleanup(func() { m.Close() })
	out, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": in[0]})
	require.NoError(t, err)
	return out["y"], panels, packs, m
}

func inside(p []float32, lo, hi uintptr) bool {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return a >= lo && a+4*uintptr(len(p)) <= hi
}

func requireClose(t *testing.T, want, got *ir.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape, got.Shape)
	w, g := want.Float32s(), got.Float32s()
	for i := range w {
		require.InDelta(t, w[i], g[i], 1e-4*(1+math.Abs(float64(w[i]))), "element %d", i)
	}
}

// TestPrepackedPlan: a plan written with prepacked weights opens without
// packing, its kernels read the panels from the file mapping, and it
// computes what the reference kernels and the plan without prepacked
// weights compute; opened at a lower ISA level, the stored panels do not
// fit and are packed again, with the same answers.
func TestPrepackedPlan(t *testing.T) {
	g, in := prepackGraph(t)
	want, err := ref.RunGraph(context.Background(), g, nil, in)
	require.NoError(t, err)
	dir := t.TempDir()
	packed := savePrepackPlan(t, g, dir, "packed.wplan")
	t.Setenv("WEFT_PREPACK", "0")
	plain := savePrepackPlan(t, g, dir, "plain.wplan")
	os.Unsetenv("WEFT_PREPACK")

	pf, err := plan.Open(packed)
	require.NoError(t, err)
	require.Len(t, pf.Prepacked, 2, "w1 and w2 are packed")
	for _, b := range pf.Prepacked {
		require.Equal(t, cpu.DeviceName, b.Device)
		require.Contains(t, b.Desc, "isa="+kernels.CurrentISA().String())
	}
	require.NoError(t, pf.Close())
	pf, err = plan.Open(plain)
	require.NoError(t, err)
	require.Empty(t, pf.Prepacked)
	require.NoError(t, pf.Close())

	yPlain, _, plainPacks, _ := openRun(t, plain, in)
	require.Equal(t, int64(2), plainPacks, "the plain plan packs w1 and w2")
	requireClose(t, want[0], yPlain)

	yPacked, panels, packs, _ := openRun(t, packed, in)
	require.Zero(t, packs, "the prepacked plan packed again")
	require.Len(t, panels, 2)
	if lo, hi, ok := mapping(t, packed); ok {
		for i, p := range panels {
			require.True(t, inside(p, lo, hi), "panels %d at %p are not in the file mapping [%#x, %#x)", i, unsafe.SliceData(p), lo, hi)
		}
	} else if runtime.GOOS == "linux" {
		t.Fatal("no mapping of the plan file in /proc/self/maps")
	}
	require.Equal(t, yPlain.Float32s(), yPacked.Float32s(), "prepacked and packed-at-open outputs differ")
	requireClose(t, want[0], yPacked)

	// A lower ISA level: the stored panels do not fit.
	levels := kernels.Levels()
	if len(levels) < 2 {
		t.Skip("this machine has one ISA level only")
	}
	prev, err := kernels.SetISA(levels[len(levels)-2].String())
	require.NoError(t, err)
	defer kernels.SetISA(prev.String())
	yLow, lowPanels, lowPacks, _ := openRun(t, packed, in)
	require.Equal(t, int64(2), lowPacks, "the stored panels were used at another ISA level")
	if lo, hi, ok := mapping(t, packed); ok {
		for i, p := range lowPanels {
			require.False(t, inside(p, lo, hi), "panels %d come from the file at the wrong ISA level", i)
		}
	}
	requireClose(t, want[0], yLow)
	yLowPlain, _, _, _ := openRun(t, plain, in)
	require.Equal(t, yLowPlain.Float32s(), yLow.Float32s())
}

// TestOfferPrepackedNote: the device says what it did with the blobs.
func TestOfferPrepackedNote(t *testing.T) {
	g, _ := prepackGraph(t)
	path := savePrepackPlan(t, g, t.TempDir(), "p.wplan")
	dev := cpuDevice(t)
	pp, ok := dev.(backends.Prepacker)
	require.True(t, ok, "the CPU device is a Prepacker")
	note := func() string {
		f, err := plan.Open(path)
		require.NoError(t, err)
		defer f.Close()
		done := pp.OfferPrepacked(f.Plan, f.Prepacked)
		s, err := rt.NewSession(f.Plan, []backends.Device{dev})
		msg := done()
		require.NoError(t, err)
		require.NoError(t, s.Close())
		return msg
	}
	require.Equal(t, "cpu: 2 of 2 prepacked weights used from the plan file, 0 packed again", note())
	levels := kernels.Levels()
	if len(levels) < 2 {
		return
	}
	low := levels[len(levels)-2].String()
	prev, err := kernels.SetISA(low)
	require.NoError(t, err)
	defer kernels.SetISA(prev.String())
	msg := note()
	require.Contains(t, msg, "cpu: 0 of 2 prepacked weights used from the plan file, 2 packed again")
	require.Contains(t, msg, "isa="+prev.String())
	require.Contains(t, msg, "need \"cpu.sgemm.b/1 isa="+low)
}
