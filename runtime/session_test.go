package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// fakeDevice runs two toy ops on float32 data: AddOne and Double. It
// supports only the ops in its set, to exercise placement.
type fakeDevice struct {
	name string
	ops  map[string]bool
}

func (d fakeDevice) Name() string                         { return d.name }
func (d fakeDevice) Kind() backends.Kind                  { return backends.CPU }
func (d fakeDevice) HostVisible() bool                    { return true }
func (d fakeDevice) Alloc(n int) (backends.Buffer, error) { return nil, fmt.Errorf("no") }
func (d fakeDevice) Supports(n *ir.Node) error {
	if d.ops[n.Op] {
		return nil
	}
	return fmt.Errorf("%w: %s lacks %s", ir.ErrUnsupported, d.name, n.Op)
}
func (d fakeDevice) Compile(p *plan.Partition) (backends.Executable, error) {
	return fakeExe{p.Nodes}, nil
}

type fakeExe struct{ nodes []*ir.Node }

func (e fakeExe) Run(ctx context.Context, env *backends.Env) error {
	for _, n := range e.nodes {
		in := env.Get(n.Inputs[0])
		out := ir.NewTensor(ir.Float32, in.Shape)
		for i := 0; i < in.Len(); i++ {
			v := in.Float64(i)
			if n.Op == "AddOne" {
				v++
			} else {
				v *= 2
			}
			out.SetFloat64(i, v)
		}
		env.Set(n.Outputs[0], out)
	}
	return nil
}

func chain(t *testing.T) *ir.Graph {
	b := ir.NewBuilder("chain")
	x := b.Input("x", ir.Float32, ir.Shape{ir.Sym("n")})
	a := b.Op("AddOne", x)
	d := b.Op("Double", a)
	e := b.Op("AddOne", d)
	b.Output("y", e)
	b.Output("mid", d)
	g, err := b.Build()
	require.NoError(t, err)
	for _, n := range g.Nodes {
		n.Outputs[0].DType, n.Outputs[0].Shape = ir.Float32, ir.Shape{ir.Sym("n")}
	}
	return g
}

func TestScheduleAndRunAcrossDevices(t *testing.T) {
	cpu := fakeDevice{"a", map[string]bool{"AddOne": true}}
	gpu := fakeDevice{"b", map[string]bool{"AddOne": true, "Double": true}}
	g := chain(t)
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{cpu, gpu}})
	require.NoError(t, err)
	// AddOne on a (default), Double falls to b (unsupported on a), the last
	// AddOne stays on b because its input lives there.
	require.Len(t, p.Partitions, 2)
	require.Equal(t, "a", p.Partitions[0].Device)
	require.Equal(t, "b", p.Partitions[1].Device)
	require.Contains(t, p.Partitions[1].Causes[0], "unsupported on a")
	require.Equal(t, "inputs live on b", p.Partitions[1].Causes[1])
	require.Equal(t, []*ir.Value{g.Inputs[0]}, p.Partitions[0].Inputs)
	require.Equal(t, []*ir.Value{g.Nodes[0].Outputs[0]}, p.Partitions[0].Outputs)
	require.Contains(t, p.Text(), "partition 1 on b")

	s, err := runtime.NewSession(p, []backends.Device{cpu, gpu})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			x := ir.FromFloat32([]int64{3}, []float32{float32(w), 1, -1})
			out, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": x})
			require.NoError(t, err)
			require.Equal(t, []float32{float32(2*(w+1) + 1), 5, 1}, out["y"].Float32s())
			require.Equal(t, []float32{float32(2 * (w + 1)), 4, 0}, out["mid"].Float32s())
		}(w)
	}
	wg.Wait()
}

func TestPinsAndUnsupported(t *testing.T) {
	cpu := fakeDevice{"a", map[string]bool{"AddOne": true}}
	gpu := fakeDevice{"b", map[string]bool{"AddOne": true, "Double": true}}
	p, err := scheduler.Schedule(chain(t), scheduler.Options{Devices: []backends.Device{cpu, gpu}, Pins: map[string]string{"AddOne": "b"}})
	require.NoError(t, err)
	require.Len(t, p.Partitions, 1)
	require.Contains(t, p.Partitions[0].Causes[0], "pinned by the user")

	_, err = scheduler.Schedule(chain(t), scheduler.Options{Devices: []backends.Device{cpu}})
	require.ErrorIs(t, err, ir.ErrUnsupported)
	require.ErrorContains(t, err, "a lacks Double")

	_, err = scheduler.Schedule(chain(t), scheduler.Options{Devices: []backends.Device{cpu, gpu}, Pins: map[string]string{"Double": "a"}})
	require.ErrorContains(t, err, "pinned to a, which cannot run it")
	_, err = scheduler.Schedule(chain(t), scheduler.Options{Devices: []backends.Device{cpu}, Pins: map[string]string{"Double": "zz"}})
	require.ErrorContains(t, err, "unknown device")
	_, err = scheduler.Schedule(chain(t), scheduler.Options{})
	require.ErrorContains(t, err, "no devices")
}

func TestRunRejectsBadInputs(t *testing.T) {
	gpu := fakeDevice{"b", map[string]bool{"AddOne": true, "Double": true}}
	g := chain(t)
	g.Inputs[0].Shape = ir.S(3)
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{gpu}})
	require.NoError(t, err)
	s, err := runtime.NewSession(p, []backends.Device{gpu})
	require.NoError(t, err)
	ctx := context.Background()
	tests := []struct {
		name   string
		inputs map[string]*ir.Tensor
		want   string
	}{
		{"missing", map[string]*ir.Tensor{}, "missing input(s) x"},
		{"unknown", map[string]*ir.Tensor{"x": ir.NewTensor(ir.Float32, []int64{3}), "z": ir.NewTensor(ir.Float32, []int64{3})}, "unknown input(s) z"},
		{"dtype", map[string]*ir.Tensor{"x": ir.NewTensor(ir.Int64, []int64{3})}, `input "x" is i64, the model wants f32`},
		{"shape", map[string]*ir.Tensor{"x": ir.NewTensor(ir.Float32, []int64{4})}, `input "x" has shape [4], the model wants [3]`},
		{"rank", map[string]*ir.Tensor{"x": ir.NewTensor(ir.Float32, []int64{3, 1})}, `has shape [3 1]`},
		{"bytes", map[string]*ir.Tensor{"x": {DType: ir.Float32, Shape: []int64{3}, Data: make([]byte, 5)}}, "5 bytes of data, want 12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Run(ctx, tc.inputs)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err = runtime.NewSession(p, nil)
	require.ErrorContains(t, err, `wants device "b", which is not available`)
}
