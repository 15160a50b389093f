package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrt/weft/conform/onnxtest"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/npy"
)

// cli runs the command line and returns its exit status and output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// addModel is y = a + b over f32[2,3]; inputs may carry symbolic dims.
func addModel(dims ...onnxtest.Dim) *onnxtest.Model {
	if dims == nil {
		dims = []onnxtest.Dim{{Size: 2}, {Size: 3}}
	}
	return &onnxtest.Model{
		Name:    "add",
		Nodes:   []onnxtest.Node{{Op: "Add", Name: "add0", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}},
		Inputs:  []onnxtest.ValueInfo{{Name: "a", DType: ir.Float32, Dims: dims}, {Name: "b", DType: ir.Float32, Dims: dims}},
		Outputs: []onnxtest.ValueInfo{{Name: "y", DType: ir.Float32, Dims: dims}},
	}
}

func writeModel(t *testing.T, m *onnxtest.Model) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.onnx")
	if err := m.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeNpy(t *testing.T, dir, name string, x *ir.Tensor) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := npy.WriteFile(p, x); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunWithInputs(t *testing.T) {
	model := writeModel(t, addModel())
	dir := t.TempDir()
	a := writeNpy(t, dir, "a.npy", ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	b := writeNpy(t, dir, "b.npy", ir.FromFloat32([]int64{2, 3}, []float32{0.5, 0.5, 0.5, -4, -5, -6}))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "run", model, "--input", "a="+a, "--input", "b="+b, "--output-dir", out, "-O", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"output y f32[2,3]  min 0 max 3.5 mean 1.25  [1.5 2.5 3.5 0 0 0]",
		"timings: load+compile ",
		"wrote " + filepath.Join(out, "y.npy"),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	y, err := npy.ReadFile(filepath.Join(out, "y.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1.5, 2.5, 3.5, 0, 0, 0} {
		if y.Float64(i) != want {
			t.Errorf("y[%d] = %v, want %v", i, y.Float64(i), want)
		}
	}
}

func TestRunGeneratedInputs(t *testing.T) {
	model := writeModel(t, addModel())
	dir := t.TempDir()
	code, stdout, stderr := cli(t, "run", model, "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The generated inputs are printed; y must be their sum.
	if !strings.Contains(stdout, "input  a f32[2,3]") || !strings.Contains(stdout, "input  b f32[2,3]") {
		t.Fatalf("inputs not shown:\n%s", stdout)
	}
	va, _ := generate(&ir.Value{Name: "a", DType: ir.Float32, Shape: ir.S(2, 3)}, nil)
	vb, _ := generate(&ir.Value{Name: "b", DType: ir.Float32, Shape: ir.S(2, 3)}, nil)
	y, err := npy.ReadFile(filepath.Join(dir, "y.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if want := float64(float32(va.Float64(i) + vb.Float64(i))); y.Float64(i) != want {
			t.Errorf("y[%d] = %v, want %v", i, y.Float64(i), want)
		}
	}
	// Same command, same output: the inputs are deterministic.
	_, again, _ := cli(t, "run", model)
	strip := func(s string) string { return s[:strings.Index(s, "timings:")] }
	if strip(again) != strip(strings.ReplaceAll(stdout, "wrote "+filepath.Join(dir, "y.npy")+"\n", "")) {
		t.Errorf("runs differ:\n%s\n%s", stdout, again)
	}
}

func TestRunSymbolicDims(t *testing.T) {
	model := writeModel(t, addModel(onnxtest.Dim{Sym: "batch"}, onnxtest.Dim{Size: 3}))
	code, _, stderr := cli(t, "run", model)
	if code == 0 || !strings.Contains(stderr, `symbolic dimension "batch": pass --dim batch=N`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := cli(t, "inspect", model)
	if code != 0 || !strings.Contains(stdout, "f32[batch,3]") {
		t.Errorf("inspect: exit %d, %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, "run", model, "--dim", "batch=2")
	if code != 0 || !strings.Contains(stdout, "input  a f32[2,3]") || !strings.Contains(stdout, "output y f32[2,3]") {
		t.Errorf("--dim batch=2: exit %d, %s%s", code, stdout, stderr)
	}
}

// A bf16 output is written as f32, and the CLI says so.
func TestRunBFloat16Output(t *testing.T) {
	m := addModel()
	m.Nodes = append(m.Nodes, onnxtest.Node{Op: "Cast", Inputs: []string{"y"}, Outputs: []string{"z"}, Attrs: map[string]any{"to": int64(16)}})
	m.Outputs = []onnxtest.ValueInfo{onnxtest.Static("z", ir.BFloat16, 2, 3)}
	dir := t.TempDir()
	a := writeNpy(t, dir, "a.npy", ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	code, stdout, stderr := cli(t, "run", writeModel(t, m), "--input", "a="+a, "--input", "b="+a, "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "output z bf16[2,3]  min 2 max 12 mean 7  [2 4 6 8 10 12]") ||
		!strings.Contains(stdout, "(bf16 stored as f32: NumPy has no bf16)") {
		t.Errorf("stdout:\n%s", stdout)
	}
	z, err := npy.ReadFile(filepath.Join(dir, "z.npy"))
	must(t, err)
	if z.DType != ir.Float32 || z.Float64(5) != 12 {
		t.Errorf("z.npy holds %v, z[5] = %v", z, z.Float64(5))
	}
}

func TestRunErrors(t *testing.T) {
	model := writeModel(t, addModel())
	dir := t.TempDir()
	good := writeNpy(t, dir, "good.npy", ir.FromFloat32([]int64{2, 3}, make([]float32, 6)))
	shape := writeNpy(t, dir, "shape.npy", ir.FromFloat32([]int64{3, 2}, make([]float32, 6)))
	dtype := writeNpy(t, dir, "dtype.npy", ir.FromFloat64(ir.Float64, []int64{2, 3}, make([]float64, 6)))
	corrupt := filepath.Join(dir, "corrupt.npy")
	if err := os.WriteFile(corrupt, []byte("\x93NUMPY\x01\x00\x10\x00{'descr': 1}   \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.npy")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"run"}, "exactly one MODEL"},
		{"missing model", []string{"run", filepath.Join(dir, "nope.onnx")}, "nope.onnx"},
		{"missing input file", []string{"run", model, "--input", "a=" + missing}, "input a: npy: open " + missing},
		{"corrupt npy", []string{"run", model, "--input", "a=" + corrupt}, corrupt + ": npy: bad header"},
		{"shape mismatch", []string{"run", model, "--input", "a=" + shape}, "the file holds shape [3 2], the model wants [2,3]"},
		{"dtype mismatch", []string{"run", model, "--input", "b=" + dtype}, "the file holds f64[2 3], the model wants dtype f32"},
		{"unknown input", []string{"run", model, "--input", "c=" + good}, `the model has no input "c" (inputs: a, b)`},
		{"bad input flag", []string{"run", model, "--input", "a"}, "want NAME=FILE.npy"},
		{"duplicate input", []string{"run", model, "--input", "a=" + good, "--input", "a=" + good}, "given twice"},
		{"bad dim", []string{"run", model, "--dim", "batch=-1"}, "want SYM=N"},
		{"bad opt level", []string{"run", model, "-O", "3"}, "want 0, 1 or 2"},
		{"unknown example", []string{"run", "--example", "gpt"}, `unknown example "gpt"`},
		{"example and model", []string{"run", model, "--example", "mlp"}, "exactly one MODEL"},
		{"not onnx", []string{"inspect", good}, "unsupported"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(stderr, tc.want) || !strings.HasPrefix(stderr, "weft: ") {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.want)
			}
		})
	}
}

func TestRunExample(t *testing.T) {
	for _, o := range []string{"-O0", "-O2"} {
		code, stdout, stderr := cli(t, "run", "--example", "mlp", o)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", o, code, stderr)
		}
		if !strings.Contains(stdout, "output probs f32[4,10]") || !strings.Contains(stdout, "timings:") {
			t.Errorf("%s: %s", o, stdout)
		}
	}
	code, stdout, _ := cli(t, "inspect", "--example", "mlp")
	if code != 0 || !strings.Contains(stdout, "params  874 elements, 3.4 KiB") || !strings.Contains(stdout, "2  MatMul") {
		t.Errorf("inspect: %s", stdout)
	}
}

func TestInspect(t *testing.T) {
	m := addModel()
	m.Nodes = append(m.Nodes,
		onnxtest.Node{Op: "Relu", Inputs: []string{"y"}, Outputs: []string{"r1"}},
		onnxtest.Node{Op: "Relu", Inputs: []string{"r1"}, Outputs: []string{"r2"}},
		onnxtest.Node{Op: "Mul", Inputs: []string{"r2", "w"}, Outputs: []string{"z"}})
	m.Initializers = map[string]*ir.Tensor{"w": ir.FromFloat32([]int64{3}, []float32{1, 2, 3})}
	m.Outputs = []onnxtest.ValueInfo{onnxtest.Static("z", ir.Float32, 2, 3)}
	code, stdout, stderr := cli(t, "inspect", writeModel(t, m))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"opsets  ai.onnx 13", "a                    f32[2,3]", "z                    f32[2,3]",
		"nodes   4", "params  3 elements, 12 B", "ops     3 kinds", "2  Relu\n       1  Add\n       1  Mul"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, stdout)
		}
	}
}

func TestConform(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "mini")
	a := ir.FromFloat32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	b := ir.FromFloat32([]int64{2, 3}, []float32{1, 1, 1, 1, 1, 1})
	right := ir.FromFloat32([]int64{2, 3}, []float32{2, 3, 4, 5, 6, 7})
	wrong := ir.FromFloat32([]int64{2, 3}, []float32{2, 3, 4, 5, 6, 7.5})
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add"), addModel(), []*ir.Tensor{a, b}, []*ir.Tensor{right}))
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_add_wrong"), addModel(), []*ir.Tensor{a, b}, []*ir.Tensor{wrong}))
	unsupported := addModel()
	unsupported.Nodes[0].Op = "NoSuchOp"
	must(t, onnxtest.WriteTestCase(filepath.Join(suite, "test_nosuchop"), unsupported, []*ir.Tensor{a, b}, []*ir.Tensor{right}))

	dir := t.TempDir()
	js, md, bl := filepath.Join(dir, "r.json"), filepath.Join(dir, "docs", "c.md"), filepath.Join(dir, "b.json")
	must(t, os.WriteFile(bl, []byte(`{"mini": 2}`), 0o644))
	code, stdout, stderr := cli(t, "conform", "--json", js, "--markdown", md, "--baseline", bl, "-O1", suite)
	if code != 3 {
		t.Errorf("exit %d, want 3 (a test fails)", code)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || lines[0] != "PASS test_add" ||
		!strings.HasPrefix(lines[1], "FAIL test_add_wrong: output 0 (y): max abs err 0.5 at index 5") ||
		!strings.HasPrefix(lines[2], "SKIP test_nosuchop: ") || lines[3] != "1 passed, 1 failed, 1 skipped" {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "baseline: suite mini: 1 passed, below the baseline of 2") {
		t.Errorf("stderr: %s", stderr)
	}
	var doc struct{ Suites map[string]map[string]int }
	b2, err := os.ReadFile(js)
	must(t, err)
	must(t, json.Unmarshal(b2, &doc))
	if doc.Suites["mini"]["passed"] != 1 || doc.Suites["mini"]["failed"] != 1 || doc.Suites["mini"]["skipped"] != 1 {
		t.Errorf("json suites %v", doc.Suites)
	}
	mdText, err := os.ReadFile(md)
	must(t, err)
	if !strings.Contains(string(mdText), "| mini | 1 | 1 | 1 | 3 |") || !strings.Contains(string(mdText), "`test_nosuchop`") {
		t.Errorf("markdown:\n%s", mdText)
	}

	// Only the passing test: exit 0, and the baseline of 1 is met.
	must(t, os.WriteFile(bl, []byte(`{"test_add": 1}`), 0o644))
	code, stdout, stderr = cli(t, "conform", "--baseline", bl, filepath.Join(suite, "test_add"))
	if code != 0 || stdout != "PASS test_add\n1 passed, 0 failed, 0 skipped\n" {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"conform"}, {"conform", dir}, {"conform", "--baseline", js + ".missing", suite}} {
		if code, _, stderr := cli(t, args...); code != 1 {
			t.Errorf("%v: exit %d, want 1: %s", args, code, stderr)
		}
	}
}

func TestFileName(t *testing.T) {
	used := map[string]bool{}
	for _, tc := range []struct {
		name string
		want string
	}{
		{"logits", "logits.npy"},
		{"a/b:0", "a_b_0.npy"},
		{"../etc/passwd", "output_2.npy"},
		{"", "output_3.npy"},
		{"..", "output_4.npy"},
		{"a_b_0", "a_b_0_1.npy"},
		{"LOGITS", "LOGITS_1.npy"},
		{"ünï", "__n__.npy"},
	} {
		if got := fileName(tc.name, len(used), used); got != tc.want {
			t.Errorf("fileName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestGenerate(t *testing.T) {
	mk := func(name string, dt ir.DType, shape ir.Shape) *ir.Value {
		return &ir.Value{Name: name, DType: dt, Shape: shape}
	}
	f, err := generate(mk("x", ir.Float32, ir.S(1000)), nil)
	must(t, err)
	f2, _ := generate(mk("x", ir.Float32, ir.S(1000)), nil)
	g, _ := generate(mk("y", ir.Float32, ir.S(1000)), nil)
	if !bytes.Equal(f.Data, f2.Data) || bytes.Equal(f.Data, g.Data) {
		t.Error("generation is not seeded by name")
	}
	for i := 0; i < f.Len(); i++ {
		if v := f.Float64(i); v < -1 || v >= 1 || math.IsNaN(v) {
			t.Fatalf("float %v out of [-1,1)", v)
		}
	}
	n, _ := generate(mk("ids", ir.Int64, ir.S(100)), nil)
	for i := 0; i < n.Len(); i++ {
		if v := n.Int64(i); v < 0 || v >= 4 {
			t.Fatalf("int %v out of [0,4)", v)
		}
	}
	bo, _ := generate(mk("m", ir.Bool, ir.S(4)), nil)
	if !bytes.Equal(bo.Data, []byte{1, 0, 1, 0}) {
		t.Errorf("bools %v", bo.Data)
	}
	d, err := generate(mk("x", ir.Float16, ir.Shape{ir.Sym("batch"), {Size: 2}}), map[string]int64{"batch": 3})
	must(t, err)
	if d.Len() != 6 || d.DType != ir.Float16 {
		t.Errorf("got %v", d)
	}
	for _, bad := range []*ir.Value{
		mk("r", ir.Float32, nil),
		mk("s", ir.String, ir.S(1)),
		mk("u", ir.Float32, ir.Shape{{Size: -1}}),
		mk("h", ir.Float32, ir.S(1<<20, 1<<20)),
	} {
		if _, err := generate(bad, nil); err == nil || !strings.Contains(err.Error(), "input "+bad.Name) {
			t.Errorf("%v: error %v", bad, err)
		}
	}
}

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		t    *ir.Tensor
		want string
	}{
		{ir.FromFloat64(ir.Float32, []int64{3}, []float64{1, nan, -2}), "x f32[3]  min -2 max 1 mean -0.5 NaN 1  [1 NaN -2]"},
		{ir.FromFloat64(ir.Int32, []int64{2}, []float64{7, -3}), "x i32[2]  min -3 max 7 mean 2  [7 -3]"},
		{ir.FromFloat64(ir.Bool, []int64{3}, []float64{1, 0, 1}), "x bool[3]  true 2/3  [true false true]"},
		{ir.NewTensor(ir.Float32, []int64{0, 4}), "x f32[0,4] (empty)"},
		{ir.FromFloat64(ir.Float64, []int64{}, []float64{2.5}), "x f64[]  min 2.5 max 2.5 mean 2.5  [2.5]"},
		{ir.NewTensor(ir.Uint8, []int64{9}), "x u8[9]  min 0 max 0 mean 0  [0 0 0 0 0 0 0 0 …]"},
	} {
		if got := summarize("x", tc.t); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
