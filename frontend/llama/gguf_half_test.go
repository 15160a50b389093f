package llama

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestFromGGUFKeepsHalfMatrices: F16 and BF16 matrices stay [out, in] in
// their own dtype, their bytes the file's own (zero-copy, no f32 copy),
// a tied classifier shares the embedding's bytes, and Build runs them as
// QMatMul (or QMatMulGroup).
func TestFromGGUFKeepsHalfMatrices(t *testing.T) {
	for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
		for _, tiedCls := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/tied=%v", dt, tiedCls), func(t *testing.T) {
				c := ggufTiny
				c.TiedEmbeddings = tiedCls
				gw, err := RandomGGUF(c, dt, 3)
				require.NoError(t, err)
				f := reparse(t, gw)
				cfg, w, err := FromGGUF(f)
				require.NoError(t, err)
				raw, err := f.Tensor("blk.1.ffn_down.weight")
				require.NoError(t, err)
				w2 := w.Layers[1].W2
				require.Equal(t, dt, w2.DType)
				require.Equal(t, []int64{int64(c.Dim), int64(c.HiddenDim)}, w2.Shape, "[out, in]")
				require.Same(t, &raw.Data[0], &w2.Data[0], "zero-copy")
				clsName := "output.weight"
				if tiedCls {
					clsName = "token_embd.weight"
				}
				cls, err := f.Tensor(clsName)
				require.NoError(t, err)
				require.Equal(t, dt, w.Output.DType)
				require.Same(t, &cls.Data[0], &w.Output.Data[0], "classifier zero-copy")
				g, err := Build(cfg, w, Mode{Seq: 1, Capacity: 8})
				require.NoError(t, err)
				q := 0
				for _, n := range g.Nodes {
					switch n.Op {
					case "QMatMul":
						q++
						require.Equal(t, dt, n.Inputs[1].DType, n.Name)
					case "QMatMulGroup": // decode graphs group q/k/v and gate/up
						for _, w := range n.Inputs[1:] {
							q++
							require.Equal(t, dt, w.DType, n.Name)
						}
					}
				}
				require.Equal(t, 7*c.Layers+1, q, "every matrix runs as QMatMul(Group)")
			})
		}
	}
}
