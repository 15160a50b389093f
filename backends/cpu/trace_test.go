package cpu_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime"
)

// Both CPU paths (planned and plain) report one span per node, on the cpu
// device, when the run's context carries a tracer.
func TestCPUReportsNodeSpans(t *testing.T) {
	for _, tc := range []struct {
		name string
		dev  func(testing.TB) backends.Device
	}{
		{"planned", cpuDevice},
		{"plain", func(t testing.TB) backends.Device { return plainDevice{cpuDevice(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, inputs := mlp(t, ir.Dim{Size: 4})
			s := session(t, g, tc.dev(t))
			feed := map[string]*ir.Tensor{}
			for i, v := range s.Inputs() {
				feed[v.Name] = inputs[i]
			}
			tr := runtime.NewTrace()
			_, err := s.Run(backends.WithTracer(context.Background(), tr), feed)
			require.NoError(t, err)
			var nodes []backends.Span
			for _, sp := range tr.Spans() {
				if sp.Kind == backends.SpanNode {
					nodes = append(nodes, sp)
				}
			}
			require.Len(t, nodes, len(s.Plan().Partitions[0].Nodes))
			for i, sp := range nodes {
				require.Equal(t, "cpu", sp.Device)
				require.Same(t, s.Plan().Partitions[0].Nodes[i], sp.Node)
				require.False(t, sp.End.Before(sp.Start))
			}
		})
	}
}
