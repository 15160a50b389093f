package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// arenaDevice is a fakeDevice whose executables keep per-run state over the
// arena the runtime allocates; it counts allocations and states.
type arenaDevice struct {
	fakeDevice
	allocs, states *atomic.Int64
	sizes          chan int
}

type hostBuf []byte

func (b hostBuf) Size() int    { return len(b) }
func (b hostBuf) Host() []byte { return b }
func (b hostBuf) Free()        {}

func (d arenaDevice) Alloc(n int) (backends.Buffer, error) {
	d.allocs.Add(1)
	d.sizes <- n
	return make(hostBuf, n), nil
}

func (d arenaDevice) CompilePlanned(p *plan.Plan, part *plan.Partition) (backends.Executable, error) {
	return statefulExe{fakeExe{part.Nodes}, d.states}, nil
}

type statefulExe struct {
	fakeExe
	states *atomic.Int64
}

func (e statefulExe) NewState(arena backends.Buffer) (backends.ExecState, error) {
	e.states.Add(1)
	return &fakeState{e: e.fakeExe, arena: arena}, nil
}

// fakeState checks that no two runs use its arena at once.
type fakeState struct {
	e     fakeExe
	arena backends.Buffer
	busy  atomic.Bool
}

func (s *fakeState) Run(ctx context.Context, env *backends.Env) error {
	if !s.busy.CompareAndSwap(false, true) {
		panic("two runs share a state")
	}
	defer s.busy.Store(false)
	return s.e.Run(ctx, env)
}

func TestRunStatesArePooled(t *testing.T) {
	dev := arenaDevice{fakeDevice{"a", map[string]bool{"AddOne": true, "Double": true}}, new(atomic.Int64), new(atomic.Int64), make(chan int, 100)}
	g := chain(t)
	g.Inputs[0].Shape = ir.S(3)
	for _, n := range g.Nodes {
		n.Outputs[0].Shape = ir.S(3)
	}
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{dev}})
	require.NoError(t, err)
	// Only the first AddOne's output is an intermediate; y and mid are outputs.
	require.Equal(t, []plan.Arena{{Device: "a", Size: 64}}, p.Arenas)
	s, err := runtime.NewSession(p, []backends.Device{dev})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 3 {
		x := ir.FromFloat32([]int64{3}, []float32{float32(i), 1, -1})
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{3}), ir.NewTensor(ir.Float32, []int64{3})}
		require.NoError(t, s.RunInto(ctx, []*ir.Tensor{x}, out))
		require.Equal(t, []float32{float32(2*(i+1) + 1), 5, 1}, out[0].Float32s())
		require.Equal(t, []float32{float32(2 * (i + 1)), 4, 0}, out[1].Float32s())
	}
	require.Equal(t, int64(1), dev.allocs.Load(), "sequential runs reuse one arena")
	require.Equal(t, int64(1), dev.states.Load())
	require.Equal(t, 64, <-dev.sizes)

	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				x := ir.FromFloat32([]int64{3}, []float32{float32(w), 1, -1})
				got, err := s.Run(ctx, map[string]*ir.Tensor{"x": x})
				require.NoError(t, err)
				require.Equal(t, []float32{float32(2*(w+1) + 1), 5, 1}, got["y"].Float32s())
			}
		}()
	}
	wg.Wait()
	require.Equal(t, dev.allocs.Load(), dev.states.Load(), "one arena per run state")
}

func TestRunIntoRejectsBadArguments(t *testing.T) {
	gpu := fakeDevice{"b", map[string]bool{"AddOne": true, "Double": true}}
	g := chain(t)
	g.Inputs[0].Shape = ir.S(3)
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{gpu}})
	require.NoError(t, err)
	s, err := runtime.NewSession(p, []backends.Device{gpu})
	require.NoError(t, err)
	ctx := context.Background()
	x := ir.NewTensor(ir.Float32, []int64{3})
	out := func(n ...int64) *ir.Tensor { return ir.NewTensor(ir.Float32, n) }
	tests := []struct {
		name    string
		in, out []*ir.Tensor
		want    string
	}{
		{"inputs", nil, []*ir.Tensor{out(3), out(3)}, "RunInto got 0 inputs, the model takes 1 (x: f32[3])"},
		{"outputs", []*ir.Tensor{x}, []*ir.Tensor{out(3)}, "RunInto got 1 output tensors, the model has 2 outputs"},
		{"nil input", []*ir.Tensor{nil}, []*ir.Tensor{out(3), out(3)}, `input "x" is nil`},
		{"nil output", []*ir.Tensor{x}, []*ir.Tensor{out(3), nil}, `output tensor "mid" is nil`},
		{"input shape", []*ir.Tensor{out(4)}, []*ir.Tensor{out(3), out(3)}, `input "x" has shape [4], the model wants [3]`},
		{"output shape", []*ir.Tensor{x}, []*ir.Tensor{out(3), out(2)}, `output "mid" is f32[3], the caller's tensor is f32[2]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, s.RunInto(ctx, tc.in, tc.out), tc.want)
		})
	}
}
