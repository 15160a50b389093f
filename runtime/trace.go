package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// execTraced is exec with a tracer: one SpanRun around the run and one
// SpanPartition around each partition; the devices report the nodes.
func (s *Session) execTraced(ctx context.Context, tr backends.Tracer, st *runState) error {
	start := time.Now()
	defer func() {
		tr.Span(backends.Span{Kind: backends.SpanRun, Partition: -1, Start: start, End: time.Now()})
	}()
	for i, exe := range s.exes {
		part := s.plan.Partitions[i]
		t0 := time.Now()
		var err error
		if st.states[i] != nil {
			err = st.states[i].Run(ctx, st.env)
		} else {
			err = exe.Run(ctx, st.env)
		}
		tr.Span(backends.Span{Kind: backends.SpanPartition, Device: part.Device, Partition: part.Index, Start: t0, End: time.Now()})
		if err != nil {
			return fmt.Errorf("runtime: partition %d on %s: %w", part.Index, part.Device, err)
		}
	}
	return nil
}

// Trace is a backends.Tracer that keeps every span, for writing as a
// Chrome trace (WriteChromeJSON). It is safe for concurrent runs.
type Trace struct {
	mu    sync.Mutex
	spans []backends.Span
}

// NewTrace returns an empty trace.
func NewTrace() *Trace { return &Trace{} }

// Span implements backends.Tracer.
func (t *Trace) Span(s backends.Span) {
	t.mu.Lock()
	t.spans = append(t.spans, s)
	t.mu.Unlock()
}

// Spans returns a copy of the spans recorded so far, in the order they ended.
func (t *Trace) Spans() []backends.Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]backends.Span(nil), t.spans...)
}

// ChromeEvent is one event of the Chrome trace event format (the JSON that
// chrome://tracing and ui.perfetto.dev open): "X" complete events with a
// start and duration in µs, "M" metadata events naming the threads.
type ChromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// ChromeTrace is the top-level object of a Chrome trace file.
type ChromeTrace struct {
	TraceEvents     []ChromeEvent `json:"traceEvents"`
	DisplayTimeUnit string        `json:"displayTimeUnit"`
}

// Chrome converts the spans to the Chrome trace event format: times in µs
// from the earliest span, thread 1 holds the runs, and each device gets a
// thread of its own (in order of first appearance) holding its partitions
// and, nested inside them, its nodes. A node's event is named after the
// node and its op; its args give the op, the device and the input and
// output dtypes and shapes as the plan declares them.
func (t *Trace) Chrome() *ChromeTrace {
	spans := t.Spans()
	sort.SliceStable(spans, func(i, j int) bool {
		if !spans[i].Start.Equal(spans[j].Start) {
			return spans[i].Start.Before(spans[j].Start)
		}
		return spans[i].Kind > spans[j].Kind // the enclosing span first
	})
	ct := &ChromeTrace{DisplayTimeUnit: "ms", TraceEvents: []ChromeEvent{
		{Name: "process_name", Ph: "M", Pid: 1, Tid: 1, Args: map[string]any{"name": "weft"}},
		{Name: "thread_name", Ph: "M", Pid: 1, Tid: 1, Args: map[string]any{"name": "runs"}},
	}}
	if len(spans) == 0 {
		return ct
	}
	base := spans[0].Start
	tids := map[string]int{}
	tid := func(dev string) int {
		if id, ok := tids[dev]; ok {
			return id
		}
		id := len(tids) + 2
		tids[dev] = id
		ct.TraceEvents = append(ct.TraceEvents, ChromeEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: id, Args: map[string]any{"name": dev}})
		return id
	}
	runs := 0
	for _, s := range spans {
		ev := ChromeEvent{Ph: "X", Pid: 1, Cat: s.Kind.String(),
			Ts:  float64(s.Start.Sub(base).Nanoseconds()) / 1e3,
			Dur: float64(s.End.Sub(s.Start).Nanoseconds()) / 1e3}
		switch s.Kind {
		case backends.SpanRun:
			ev.Name, ev.Tid = fmt.Sprintf("run %d", runs), 1
			runs++
		case backends.SpanPartition:
			ev.Name, ev.Tid = fmt.Sprintf("partition %d", s.Partition), tid(s.Device)
			ev.Args = map[string]any{"device": s.Device, "partition": s.Partition}
		default:
			ev.Name, ev.Tid = spanName(s.Node), tid(s.Device)
			ev.Args = nodeArgs(s)
		}
		ct.TraceEvents = append(ct.TraceEvents, ev)
	}
	return ct
}

// WriteChromeJSON writes the trace as Chrome trace JSON.
func (t *Trace) WriteChromeJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(t.Chrome())
}

func spanName(n *ir.Node) string {
	if n == nil {
		return "?"
	}
	if n.Name == "" {
		return n.Op
	}
	return n.Name + " (" + n.Op + ")"
}

func nodeArgs(s backends.Span) map[string]any {
	args := map[string]any{"device": s.Device}
	n := s.Node
	if n == nil {
		return args
	}
	args["op"] = n.Op
	args["inputs"] = valueTypes(n.Inputs)
	args["outputs"] = valueTypes(n.Outputs)
	if n.Op == ir.OpTransfer {
		for _, k := range []string{"from", "to"} {
			if a := n.Attrs[k]; a != nil {
				args[k] = a.Str
			}
		}
	}
	return args
}

// valueTypes renders values as "dtype[shape]" ("" for an absent optional input).
func valueTypes(vs []*ir.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = fmt.Sprintf("%v[%v]", v.DType, v.Shape)
		}
	}
	return out
}
