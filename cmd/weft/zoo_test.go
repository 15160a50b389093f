package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
)

func TestZooList(t *testing.T) {
	code, out, errOut := cli(t, "zoo", "--list")
	require.Equal(t, 0, code, errOut)
	for _, name := range []string{"resnet50", "resnet18", "bert-base", "bert-4l", "gpt-6l"} {
		require.Contains(t, out, name)
	}
}

func TestZooWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r18.onnx")
	code, out, errOut := cli(t, "zoo", "resnet18", "--batch", "2", "--symbolic", "--seed", "3", "-o", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "wrote "+path+": resnet18, 69 nodes")
	m, err := onnx.Load(path)
	require.NoError(t, err)
	defer m.Close()
	g := m.Graph
	require.Equal(t, int64(17), g.Opsets[""])
	require.Equal(t, ir.Shape{ir.Sym("batch"), {Size: 3}, {Size: 224}, {Size: 224}}, g.Inputs[0].Shape)
	require.Equal(t, ir.Shape{ir.Sym("batch"), {Size: 1000}}, g.Outputs[0].Shape)
	require.Len(t, g.Nodes, 69)

	code, out, errOut = cli(t, "inspect", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "BatchNormalization")
}

func TestZooErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"zoo", "alexnet", "-o", filepath.Join(dir, "a.onnx")}, `unknown model "alexnet"`},
		{[]string{"zoo", "resnet18"}, "no output file"},
		{[]string{"zoo"}, "exactly one model NAME"},
		{[]string{"zoo", "resnet18", "--opset", "12", "-o", filepath.Join(dir, "b.onnx")}, "opset 12"},
		{[]string{"zoo", "bert-4l", "--batch", "-2", "-o", filepath.Join(dir, "c.onnx")}, "must not be negative"},
	} {
		code, _, errOut := cli(t, tc.args...)
		require.Equal(t, 1, code, strings.Join(tc.args, " "))
		require.Contains(t, errOut, tc.want, strings.Join(tc.args, " "))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "failed writes leave no files")
}
