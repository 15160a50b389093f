package zoo_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/zoo"
)

// TestCompilerTargets checks the compiler's targets on the full-size
// ResNet-50 and BERT-base graphs, exactly as exporters write them: -O2
// removes at least 30% of the nodes, and the planned activation memory is at
// most 40% of the naive sum of all intermediates. (-O0 vs -O2 outputs are
// compared on reduced configs in zoo_test.go; running the full models with the
// reference kernels takes minutes.)
func TestCompilerTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 25M- and 110M-parameter graphs")
	}
	for _, tc := range []struct {
		name  string
		build func() (*ir.Graph, error)
	}{
		{"resnet50", func() (*ir.Graph, error) { return zoo.ResNet50(1, 1), nil }},
		{"bert-base", func() (*ir.Graph, error) { return zoo.BERT(zoo.BERTBase()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := func(level int) (int, int64, int64) {
				g, err := tc.build()
				require.NoError(t, err)
				p, _, err := weft.Compile(g, weft.Options{OptLevel: level})
				require.NoError(t, err)
				require.NoError(t, p.Verify())
				naive, planned := p.MemoryStats()
				return len(g.Nodes), naive, planned
			}
			n0, _, _ := count(0)
			n2, naive, planned := count(2)
			t.Logf("%s: %d nodes at -O0, %d at -O2 (%.0f%% fewer); activations naive %d B, planned %d B (%.1f%%)",
				tc.name, n0, n2, 100*float64(n0-n2)/float64(n0), naive, planned, 100*float64(planned)/float64(naive))
			require.LessOrEqual(t, float64(n2), 0.7*float64(n0), "node count must drop by at least 30%%")
			require.Greater(t, naive, int64(0))
			require.LessOrEqual(t, float64(planned), 0.4*float64(naive), "planned peak must be at most 40%% of naive")
		})
	}
}
