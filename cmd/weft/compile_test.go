package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/conform/onnxtest"
)

// runOutputs runs `weft run MODEL --output-dir DIR` and returns the bytes
// of every output file.
func runOutputs(t *testing.T, model string, extra ...string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	code, _, stderr := cli(t, append([]string{"run", model, "--output-dir", dir}, extra...)...)
	require.Equal(t, 0, code, stderr)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	require.NotEmpty(t, out)
	return out
}

// compileModels are the ONNX models the CLI test compiles: the add model
// always, and a convolution and a Loop from the ONNX test data when present.
func compileModels(t *testing.T) []string {
	models := []string{writeModel(t, addModel())}
	for _, p := range []string{"pytorch-converted/test_Conv2d_groups", "node/test_loop11", "node/test_gemm_all_attributes"} {
		src := filepath.Join("/usr/share/libonnx-testdata/data", p, "model.onnx")
		if b, err := os.ReadFile(src); err == nil {
			dst := filepath.Join(t.TempDir(), "model.onnx")
			require.NoError(t, os.WriteFile(dst, b, 0o644))
			models = append(models, dst)
		}
	}
	return models
}

func TestCompileThenRun(t *testing.T) {
	for _, model := range compileModels(t) {
		for _, level := range []string{"0", "2"} {
			dir := t.TempDir()
			wplan := filepath.Join(dir, "m.wplan")
			code, stdout, stderr := cli(t, "compile", model, "-o", wplan, "-O", level, "--verify")
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "wrote "+wplan+" (")
			require.Contains(t, stdout, "-O"+level)
			// Same inputs (generated from the input names), same outputs, bit for bit.
			want := runOutputs(t, model, "-O", level)
			got := runOutputs(t, wplan, "--verify-weights")
			require.Equal(t, want, got, "%s -O%s", model, level)

			// Compiling again gives the same bytes.
			again := filepath.Join(dir, "again.wplan")
			code, _, stderr = cli(t, "compile", model, "-o", again, "-O", level, "--verify")
			require.Equal(t, 0, code, stderr)
			a, _ := os.ReadFile(wplan)
			b, _ := os.ReadFile(again)
			require.True(t, bytes.Equal(a, b), "%s -O%s: two compiles differ", model, level)
		}
	}
}

func TestCompileRunShowsPlanOptions(t *testing.T) {
	model := writeModel(t, addModel())
	code, stdout, stderr := cli(t, "compile", model, "-O", "1")
	require.Equal(t, 0, code, stderr)
	wplan := strings.TrimSuffix(model, ".onnx") + ".wplan" // the default output
	require.Contains(t, stdout, "wrote "+wplan)
	code, stdout, stderr = cli(t, "run", wplan)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, wplan+" (plan compiled with -O1)")
	require.Contains(t, stdout, "output y f32[2,3]")
}

func TestCompileReport(t *testing.T) {
	model := writeModel(t, addModel())
	code, stdout, stderr := cli(t, "compile", model, "-o", filepath.Join(t.TempDir(), "a.wplan"), "--report")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"nodes    1 before, 1 after\n",
		"passes -O2:\n",
		"  infer ",
		"  final-dce ",
		// y = a + b over f32[2,3] is a graph output: nothing to plan.
		"memory   peak activations: naive 0 B, planned 0 B\n",
		// 6 adds; 3 × 24 bytes.
		"cost     6 FLOPs, 72 B moved (estimates per run; subgraph bodies counted once)\n",
		"plan     1 partitions: cpu×1\n",
	} {
		require.Contains(t, stdout, want)
	}
}

func TestCompileReportExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mlp.wplan")
	code, stdout, stderr := cli(t, "compile", "--example", "mlp", "-o", out, "--report", "-O", "0")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "nodes    6 before, 6 after\n")
	require.Regexp(t, `memory   peak activations: naive [0-9.]+ (B|KiB), planned [0-9.]+ (B|KiB) \(\d+% less\)`, stdout)
	code, _, stderr = cli(t, "run", out)
	require.Equal(t, 0, code, stderr)
}

func TestCompilePrintAfter(t *testing.T) {
	model := writeModel(t, addModel())
	code, stdout, stderr := cli(t, "compile", model, "-o", filepath.Join(t.TempDir(), "a.wplan"), "--print-after", "infer")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "// after infer\ngraph ")
	require.Contains(t, stdout, " = add %a, %b : f32[2,3]")

	code, _, stderr = cli(t, "compile", model, "-o", filepath.Join(t.TempDir(), "a.wplan"), "--print-after", "nosuch")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `no pass "nosuch"`)
}

func TestCompileErrors(t *testing.T) {
	model := writeModel(t, addModel())
	out := filepath.Join(t.TempDir(), "x.wplan")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compile"}, "compile wants exactly one MODEL file"},
		{[]string{"compile", "--example", "mlp"}, "compile --example needs -o FILE.wplan"},
		{[]string{"compile", model, "-o", out, "--policy", "all"}, "--policy and --layers select weights for --quantize"},
		{[]string{"compile", model, "-o", out, "--quantize", "q3_x"}, `unknown quantization type "q3_x"`},
		{[]string{"compile", model, "-o", out, "--pin", "Add"}, `--pin "Add": want NAME=DEVICE`},
		{[]string{"compile", model, "-o", out, "--pin", "Add=gpu:9"}, `unknown device "gpu:9"`},
		{[]string{"compile", filepath.Join(t.TempDir(), "none.onnx"), "-o", out}, "none.onnx"},
		{[]string{"compile", model, "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "x.wplan")}, "x.wplan"},
	}
	for _, tc := range tests {
		code, _, stderr := cli(t, tc.args...)
		require.Equal(t, 1, code, "%v", tc.args)
		require.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	// A plan is not compiled again; a damaged plan is refused by run.
	code, _, stderr := cli(t, "compile", model, "-o", out)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = cli(t, "compile", out)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is already a compiled plan")
	data, _ := os.ReadFile(out)
	require.NoError(t, os.WriteFile(out, data[:100], 0o644))
	code, _, stderr = cli(t, "run", out)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "x.wplan: truncated")
}

func TestCompileSymbolicDims(t *testing.T) {
	model := writeModel(t, addModel(onnxtest.Dim{Sym: "batch"}, onnxtest.Dim{Size: 3}))
	wplan := filepath.Join(t.TempDir(), "sym.wplan")
	code, _, stderr := cli(t, "compile", model, "-o", wplan)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = cli(t, "run", wplan)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `symbolic dimension "batch": pass --dim batch=N`)
	for _, n := range []string{"1", "4"} {
		require.Equal(t, runOutputs(t, model, "--dim", "batch="+n), runOutputs(t, wplan, "--dim", "batch="+n))
	}
}
