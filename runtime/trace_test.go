package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// tracingDevice is a fakeDevice whose buffers are not host-visible (so the
// scheduler inserts Transfer nodes around it) and whose executables report
// one span per node, as any backend can through backends.TracerFrom.
type tracingDevice struct{ fakeDevice }

func (d tracingDevice) HostVisible() bool { return false }
func (d tracingDevice) Supports(n *ir.Node) error {
	if n.Op == ir.OpTransfer {
		return nil
	}
	return d.fakeDevice.Supports(n)
}
func (d tracingDevice) Compile(p *plan.Partition) (backends.Executable, error) {
	return tracingExe{d.name, p.Nodes}, nil
}

type tracingExe struct {
	dev   string
	nodes []*ir.Node
}

func (e tracingExe) Run(ctx context.Context, env *backends.Env) error {
	tr := backends.TracerFrom(ctx)
	for _, n := range e.nodes {
		t0 := time.Now()
		if n.Op == ir.OpTransfer {
			env.Set(n.Outputs[0], env.Get(n.Inputs[0]))
		} else if err := (fakeExe{[]*ir.Node{n}}).Run(ctx, env); err != nil {
			return err
		}
		if tr != nil {
			tr.Span(backends.NodeSpan(e.dev, n, t0, time.Now()))
		}
	}
	return nil
}

// chromeEvent is what the test reads back from the JSON.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args"`
}

func TestTraceChromeJSON(t *testing.T) {
	a := tracingDevice{fakeDevice{"a", map[string]bool{"AddOne": true}}}
	b := tracingDevice{fakeDevice{"b", map[string]bool{"AddOne": true, "Double": true}}}
	g := chain(t)
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{a, b}})
	require.NoError(t, err)
	executed := 0
	transfers := 0
	for _, part := range p.Partitions {
		executed += len(part.Nodes)
		for _, n := range part.Nodes {
			if n.Op == ir.OpTransfer {
				transfers++
			}
		}
	}
	require.Positive(t, transfers, "a device that is not host-visible gets Transfer nodes")

	s, err := runtime.NewSession(p, []backends.Device{a, b})
	require.NoError(t, err)
	// A run without a tracer reports nothing anywhere.
	tr := runtime.NewTrace()
	_, err = s.Run(context.Background(), map[string]*ir.Tensor{"x": ir.FromFloat32([]int64{3}, []float32{1, 2, 3})})
	require.NoError(t, err)
	require.Empty(t, tr.Spans())

	out, err := s.Run(backends.WithTracer(context.Background(), tr), map[string]*ir.Tensor{"x": ir.FromFloat32([]int64{3}, []float32{1, 2, 3})})
	require.NoError(t, err)
	require.Equal(t, []float32{5, 7, 9}, out["y"].Float32s(), "tracing does not change results")

	var buf bytes.Buffer
	require.NoError(t, tr.WriteChromeJSON(&buf))
	var doc struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))

	threads := map[int]string{}
	var run *chromeEvent
	var nodes, parts []chromeEvent
	for i, ev := range doc.TraceEvents {
		switch {
		case ev.Ph == "M" && ev.Name == "thread_name":
			threads[ev.Tid] = ev.Args["name"].(string)
		case ev.Ph != "X":
		case ev.Cat == "run":
			require.Nil(t, run, "one run, one run span")
			run = &doc.TraceEvents[i]
		case ev.Cat == "partition":
			parts = append(parts, ev)
		case ev.Cat == "node" || ev.Cat == "transfer":
			nodes = append(nodes, ev)
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
	require.NotNil(t, run)
	require.Len(t, nodes, executed, "one span per executed node")
	require.Len(t, parts, len(p.Partitions))
	const eps = 1e-3 // µs, for rounding
	inside := func(in, out chromeEvent) bool {
		return in.Ts >= out.Ts-eps && in.Ts+in.Dur <= out.Ts+out.Dur+eps
	}
	gotTransfers := 0
	for _, ev := range nodes {
		require.True(t, inside(ev, *run), "node span %s inside the run", ev.Name)
		dev := threads[ev.Tid]
		require.Equal(t, ev.Args["device"], dev, "%s: one thread per device", ev.Name)
		enclosed := false
		for _, pe := range parts {
			enclosed = enclosed || pe.Tid == ev.Tid && inside(ev, pe)
		}
		require.True(t, enclosed, "node span %s inside a partition span of its device", ev.Name)
		require.Contains(t, ev.Name, ev.Args["op"].(string))
		require.NotEmpty(t, ev.Args["outputs"])
		if ev.Cat == "transfer" {
			gotTransfers++
			require.Equal(t, ir.OpTransfer, ev.Args["op"])
		}
	}
	require.Equal(t, transfers, gotTransfers)
	for _, pe := range parts {
		require.True(t, inside(pe, *run))
		require.Equal(t, pe.Args["device"], threads[pe.Tid])
	}
	require.Equal(t, "f32[n]", fmt.Sprint(nodes[0].Args["outputs"].([]any)[0]))
}
