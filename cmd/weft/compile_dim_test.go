package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/conform/onnxtest"
	"github.com/weftrt/weft/ir"
)

func TestCompileDim(t *testing.T) {
	model := writeModel(t, addModel(onnxtest.Dim{Sym: "batch"}, onnxtest.Dim{Size: 3}))
	out := filepath.Join(t.TempDir(), "m.wplan")
	code, _, stderr := cli(t, "compile", model, "--dim", "batch=4", "-o", out)
	require.Equal(t, 0, code, stderr)
	m, err := weft.Open(out, weft.Options{})
	require.NoError(t, err)
	defer m.Close()
	for _, v := range m.Inputs() {
		require.Equal(t, ir.S(4, 3), v.Shape, "input %s is compiled static", v.Name)
	}
	for _, n := range m.Graph.Nodes {
		for _, o := range n.Outputs {
			require.True(t, o.Shape.Static(), "value %v", o)
		}
	}

	code, _, stderr = cli(t, "compile", model, "--dim", "seq=4", "-o", out)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "no symbolic dimension seq (they have: batch)")
	code, _, stderr = cli(t, "compile", model, "--dim", "batch", "-o", out)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, `--dim "batch": want SYM=N`)
}
