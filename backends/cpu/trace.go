package cpu

import (
	"time"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// evalTraced is ref.Eval reporting one span per node to tr: the plain
// (unplanned) executable's path when the run's context carries a tracer.
// The planned path reports its spans inline (execState.Run).
func evalTraced(tr backends.Tracer, ctx *ref.Context, nodes []*ir.Node) error {
	for i := range nodes {
		t0 := time.Now()
		if err := ref.Eval(ctx, nodes[i:i+1]); err != nil {
			return err
		}
		tr.Span(backends.NodeSpan(DeviceName, nodes[i], t0, time.Now()))
	}
	return nil
}
