package backends

import (
	"context"
	"time"

	"github.com/weftrt/weft/ir"
)

// Tracing is optional and travels in the run's context: a caller that wants
// a timeline puts a Tracer in the context with WithTracer, the runtime
// reports runs and partitions, and a device reports the nodes it executes.
// A device looks the tracer up once per partition run (TracerFrom) and only
// reads the clock when one is there, so a run without a tracer costs one
// context lookup and no allocation.

// SpanKind says what a span covers.
type SpanKind int

// Span kinds.
const (
	// SpanNode is one node executed by a device.
	SpanNode SpanKind = iota
	// SpanTransfer is a Transfer node (a copy between devices).
	SpanTransfer
	// SpanPartition is one partition run on its device.
	SpanPartition
	// SpanRun is one whole run of a plan.
	SpanRun
)

func (k SpanKind) String() string {
	switch k {
	case SpanTransfer:
		return "transfer"
	case SpanPartition:
		return "partition"
	case SpanRun:
		return "run"
	}
	return "node"
}

// Span is one finished interval of a run.
type Span struct {
	Kind SpanKind
	// Device is the device's name ("" for a SpanRun).
	Device string
	// Node is the node of a SpanNode or SpanTransfer, nil otherwise.
	Node *ir.Node
	// Partition is the partition index of a SpanPartition, -1 otherwise.
	Partition int
	// Start and End bound the span.
	Start, End time.Time
}

// Tracer receives the spans of runs. Span may be called from several
// goroutines at once (concurrent runs), so implementations synchronize.
type Tracer interface {
	Span(s Span)
}

type tracerKey struct{}

// WithTracer returns a context whose runs report their spans to t.
func WithTracer(ctx context.Context, t Tracer) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, tracerKey{}, t)
}

// TracerFrom returns the context's tracer, or nil (also for a nil context).
func TracerFrom(ctx context.Context) Tracer {
	if ctx == nil {
		return nil
	}
	t, _ := ctx.Value(tracerKey{}).(Tracer)
	return t
}

// NodeSpan is the span of node n run on device from start to end: a
// SpanTransfer for a Transfer node, a SpanNode otherwise.
func NodeSpan(device string, n *ir.Node, start, end time.Time) Span {
	k := SpanNode
	if n.Op == ir.OpTransfer {
		k = SpanTransfer
	}
	return Span{Kind: k, Device: device, Node: n, Partition: -1, Start: start, End: end}
}
