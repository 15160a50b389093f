package llama

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestBuildGroupsSharedInputMatmuls: with Q8_0 or Q4_0 weights a layer's
// q/k/v run as one QMatMulGroup (three outputs) and its gate/up as one with
// act silu_mul (the SwiGLU, no separate SiLU or Mul), leaving two plain
// QMatMuls (wo, w2) per layer and the classifier; f16 weights group so in
// decode graphs, and in graphs of several tokens' logits (which may verify
// speculative drafts) every f16 matmul is a group — wo, w2 and the
// classifier one-weight groups (rowExact) — while prefill graphs
// (LastLogits) keep seven QMatMuls per layer. The weight constants keep
// their names. Mode.Ungrouped keeps seven everywhere.
func TestBuildGroupsSharedInputMatmuls(t *testing.T) {
	for _, c := range []struct {
		dt      ir.DType
		grouped bool
	}{{ir.Q8_0, true}, {ir.Q4_0, true}, {ir.Float16, false}} {
		t.Run(fmt.Sprint(c.dt), func(t *testing.T) {
			cfg := ggufTiny
			gw, err := RandomGGUF(cfg, c.dt, 3)
			require.NoError(t, err)
			cfg, w, err := FromGGUF(reparse(t, gw))
			require.NoError(t, err)
			for _, mode := range []Mode{{Seq: 1}, {Seq: 3}, {Seq: 3, LastLogits: true}} {
				seq := mode.Seq
				mode.Capacity = 8
				g, err := Build(cfg, w, mode)
				require.NoError(t, err)
				ops := map[string]int{}
				single := 0
				for _, n := range g.Nodes {
					ops[n.Op]++
					if n.Op != "QMatMulGroup" {
						continue
					}
					switch n.AttrString("act", "") {
					case "":
						if len(n.Inputs) == 2 { // rowExact
							require.Regexp(t, `^(layers\.\d+\.(wo|w2)|output)\.weight$`, n.Inputs[1].Name)
							require.Equal(t, n.Name, n.Outputs[0].Name)
							single++
							continue
						}
						require.Len(t, n.Inputs, 4, n.Name)
						require.Len(t, n.Outputs, 3, n.Name)
						require.Regexp(t, `^layers\.\d+\.wq\.weight$`, n.Inputs[1].Name)
						require.Regexp(t, `^layers\.\d+\.wv\.weight$`, n.Inputs[3].Name)
					case "silu_mul":
						require.Len(t, n.Inputs, 3, n.Name)
						require.Len(t, n.Outputs, 1, n.Name)
						require.Regexp(t, `^layers\.\d+\.w1\.weight$`, n.Inputs[1].Name)
					default:
						t.Fatalf("%s: act %q", n.Name, n.AttrString("act", ""))
					}
				}
				ug, err := Build(cfg, w, Mode{Seq: seq, Capacity: 8, LastLogits: mode.LastLogits, Ungrouped: true})
				require.NoError(t, err)
				uq := 0
				for _, n := range ug.Nodes {
					require.NotEqual(t, "QMatMulGroup", n.Op, "Ungrouped")
					if n.Op == "QMatMul" {
						uq++
					}
				}
				L := cfg.Layers
				require.Equal(t, 7*L+1, uq, "Ungrouped")
				verify := seq > 1 && !mode.LastLogits
				switch {
				case c.dt == ir.Float16 && verify:
					require.Equal(t, 4*L+1, ops["QMatMulGroup"])
					require.Equal(t, 2*L+1, single)
					require.Zero(t, ops["QMatMul"])
					require.Zero(t, ops["SiLU"])
				case c.grouped || (c.dt == ir.Float16 && seq == 1):
					require.Equal(t, 2*L, ops["QMatMulGroup"])
					require.Equal(t, 2*L+1, ops["QMatMul"])
					require.Zero(t, ops["SiLU"])
					require.Zero(t, single)
				default:
					require.Zero(t, ops["QMatMulGroup"])
					require.Equal(t, 7*L+1, ops["QMatMul"])
				}
			}
		})
	}
}
