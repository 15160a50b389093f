package transfer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func TestTransferCopies(t *testing.T) {
	k, ok := ref.Lookup("Transfer")
	require.True(t, ok)
	x := ir.FromFloat32([]int64{2, 2}, []float32{1, -2, 3.5, 4})
	out, err := k(&ref.Context{}, &ir.Node{Op: "Transfer"}, []*ir.Tensor{x})
	require.NoError(t, err)
	require.Equal(t, x.Float32s(), out[0].Float32s())
	require.Equal(t, x.Shape, out[0].Shape)
	out[0].Data[0] ^= 0xff // a copy, not an alias
	require.Equal(t, float32(1), x.Float32s()[0])
	_, err = k(&ref.Context{}, &ir.Node{Op: "Transfer"}, nil)
	require.ErrorContains(t, err, "exactly one input")
}
