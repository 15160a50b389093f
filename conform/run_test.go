package conform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/npy"
)

// fakeModel computes out = f(x) for its one input "x" (and an optional
// constant input that must never be bound).
type fakeModel struct {
	inputs []*ir.Value
	f      func(ctx context.Context, x *ir.Tensor) (*ir.Tensor, error)
}

func (m *fakeModel) Inputs() []*ir.Value   { return m.inputs }
func (m *fakeModel) OutputNames() []string { return []string{"y"} }
func (m *fakeModel) Close() error          { return nil }
func (m *fakeModel) Run(ctx context.Context, in map[string]*ir.Tensor) (map[string]*ir.Tensor, error) {
	x, ok := in["x"]
	if !ok || len(in) != 1 {
		return nil, fmt.Errorf("want exactly input x, got %d inputs", len(in))
	}
	y, err := m.f(ctx, x)
	return map[string]*ir.Tensor{"y": y}, err
}

func newFake(f func(ctx context.Context, x *ir.Tensor) (*ir.Tensor, error)) *fakeModel {
	g := ir.NewGraph("fake")
	c := g.AddConst("w", ir.FromFloat32([]int64{1}, []float32{1}))
	// The constant comes first, as initializers listed among the inputs of
	// old ONNX models do: binding must skip it.
	return &fakeModel{inputs: []*ir.Value{c, g.AddInput("x", ir.Float32, ir.S(2))}, f: f}
}

func double(_ context.Context, x *ir.Tensor) (*ir.Tensor, error) {
	y := ir.NewTensor(x.DType, x.Shape)
	for i := 0; i < x.Len(); i++ {
		y.SetFloat64(i, 2*x.Float64(i))
	}
	return y, nil
}

// writeTest creates dir/name with an (empty) model.onnx and the data sets
// given as (input, expected output) pairs, stored as .npy under .pb names
// (the fake runner reads them with npy.ReadFile).
func writeTest(t *testing.T, dir, name string, sets ...[2][]float32) {
	t.Helper()
	td := filepath.Join(dir, name)
	must(t, os.MkdirAll(td, 0o755))
	must(t, os.WriteFile(filepath.Join(td, "model.onnx"), nil, 0o644))
	for i, s := range sets {
		ds := filepath.Join(td, fmt.Sprintf("test_data_set_%d", i))
		must(t, os.MkdirAll(ds, 0o755))
		must(t, npy.WriteFile(filepath.Join(ds, "input_0.pb"), ir.FromFloat32([]int64{int64(len(s[0]))}, s[0])))
		must(t, npy.WriteFile(filepath.Join(ds, "output_0.pb"), ir.FromFloat32([]int64{int64(len(s[1]))}, s[1])))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRunner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	ok := [2][]float32{{1, 2}, {2, 4}}
	writeTest(t, dir, "test_a_pass", ok, [2][]float32{{-1, 0.5}, {-2, 1}})
	writeTest(t, dir, "test_b_wrong", ok, [2][]float32{{1, 1}, {2, 2.5}})
	writeTest(t, dir, "test_c_unsupported", ok)
	writeTest(t, dir, "test_d_panic", ok)
	writeTest(t, dir, "test_e_slow", ok)
	writeTest(t, dir, "test_f_error", ok)
	writeTest(t, dir, "test_g_nodata")
	writeTest(t, dir, "test_h_run_unsupported", ok)
	writeTest(t, dir, "test_i_gap", ok)
	must(t, os.Rename(filepath.Join(dir, "test_i_gap", "test_data_set_0", "input_0.pb"),
		filepath.Join(dir, "test_i_gap", "test_data_set_0", "input_1.pb")))

	models := map[string]func(ctx context.Context, x *ir.Tensor) (*ir.Tensor, error){
		"test_a_pass":  double,
		"test_b_wrong": double,
		"test_d_panic": func(context.Context, *ir.Tensor) (*ir.Tensor, error) {
			var s []int
			_ = s[3] // index out of range
			return nil, nil
		},
		"test_e_slow": func(ctx context.Context, x *ir.Tensor) (*ir.Tensor, error) {
			time.Sleep(2 * time.Second) // ignores ctx, like a runaway kernel
			return double(ctx, x)
		},
		"test_h_run_unsupported": func(context.Context, *ir.Tensor) (*ir.Tensor, error) {
			return nil, fmt.Errorf("node \"n\" (Foo): dtype f16: %w", ir.ErrUnsupported)
		},
		"test_i_gap":    double,
		"test_g_nodata": double,
	}
	r := &Runner{
		Open: func(path string, _ []*ir.Tensor) (Model, error) {
			name := filepath.Base(filepath.Dir(path))
			switch name {
			case "test_c_unsupported":
				return nil, fmt.Errorf("onnx: node \"q\" (QLinearConv): %w op", ir.ErrUnsupported)
			case "test_f_error":
				return nil, errors.New("onnx: bad model\nsecond line")
			}
			return newFake(models[name]), nil
		},
		ReadTensor: npy.ReadFile,
		Tolerance:  DefaultTolerance,
		Workers:    2,
		Timeout:    300 * time.Millisecond,
	}
	tests, err := Discover(dir)
	must(t, err)
	var reported []string
	results := r.Run(context.Background(), tests, func(res Result) { reported = append(reported, res.Name) })

	want := []struct {
		status Status
		detail string
	}{
		{Pass, ""},
		{Fail, "test_data_set_1: output 0 (y): max abs err 0.5 at index 1 (got 2, want 2.5"},
		{Skip, "QLinearConv): unsupported op"},
		{Fail, "panic: runtime error: index out of range [3] with length 0 (at github.com/weftrt/weft/conform.TestRunner"},
		{Fail, "timed out after 300ms"},
		{Fail, "onnx: bad model; second line"},
		{Fail, "no test_data_set_N directories"},
		{Skip, "dtype f16: unsupported"},
		{Fail, "input_0.pb is missing"},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	var names []string
	for i, res := range results {
		names = append(names, res.Name)
		if res.Status != want[i].status || !strings.Contains(res.Detail, want[i].detail) {
			t.Errorf("%s: got %v %q, want %v containing %q", res.Name, res.Status, res.Detail, want[i].status, want[i].detail)
		}
		if res.Suite != "suite" {
			t.Errorf("%s: suite %q", res.Name, res.Suite)
		}
		if res.Status == Pass && res.Line() != "PASS "+res.Name {
			t.Errorf("line %q", res.Line())
		}
	}
	if !reflect.DeepEqual(reported, names) {
		t.Errorf("reported in order %v, want %v", reported, names)
	}
	if got := Summarize(results).String(); got != "1 passed, 6 failed, 2 skipped" {
		t.Errorf("summary %q", got)
	}
	if l := results[2].Line(); !strings.HasPrefix(l, "SKIP test_c_unsupported: onnx: node") {
		t.Errorf("line %q", l)
	}
}

func TestRunnerBadInputs(t *testing.T) {
	dir := t.TempDir()
	writeTest(t, dir, "test_bad", [2][]float32{{1, 2}, {2, 4}})
	ds := filepath.Join(dir, "test_bad", "test_data_set_0")
	r := &Runner{
		Open:       func(string, []*ir.Tensor) (Model, error) { return newFake(double), nil },
		ReadTensor: npy.ReadFile,
		Tolerance:  DefaultTolerance,
		Workers:    1,
	}
	run := func() Result {
		tests, err := Discover(filepath.Join(dir, "test_bad"))
		must(t, err)
		if len(tests) != 1 || tests[0].Name != "test_bad" || tests[0].Suite != "test_bad" {
			t.Fatalf("discovered %+v", tests)
		}
		return r.Run(context.Background(), tests, nil)[0]
	}
	// Too many inputs for the model.
	must(t, npy.WriteFile(filepath.Join(ds, "input_1.pb"), ir.FromFloat32([]int64{1}, []float32{1})))
	if res := run(); res.Status != Fail || !strings.Contains(res.Detail, "2 input files, but the model has 1 inputs") {
		t.Errorf("got %v %q", res.Status, res.Detail)
	}
	must(t, os.Remove(filepath.Join(ds, "input_1.pb")))
	// A corrupt expected output names the file.
	must(t, os.WriteFile(filepath.Join(ds, "output_0.pb"), []byte("junk"), 0o644))
	if res := run(); res.Status != Fail || !strings.Contains(res.Detail, "output_0.pb") {
		t.Errorf("got %v %q", res.Status, res.Detail)
	}
	// More expected outputs than model outputs.
	must(t, npy.WriteFile(filepath.Join(ds, "output_0.pb"), ir.FromFloat32([]int64{2}, []float32{2, 4})))
	must(t, npy.WriteFile(filepath.Join(ds, "output_1.pb"), ir.FromFloat32([]int64{2}, []float32{2, 4})))
	if res := run(); res.Status != Fail || !strings.Contains(res.Detail, "2 expected outputs, but the model has 1 outputs") {
		t.Errorf("got %v %q", res.Status, res.Detail)
	}
	must(t, os.Remove(filepath.Join(ds, "output_1.pb")))
	if res := run(); res.Status != Pass {
		t.Errorf("got %v %q", res.Status, res.Detail)
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	suite := filepath.Join(root, "node")
	for _, d := range []string{"test_b", "test_a", "test_c/nested", "not_a_test", "test_10"} {
		must(t, os.MkdirAll(filepath.Join(suite, d), 0o755))
	}
	for _, d := range []string{"test_b", "test_a", "test_c/nested", "test_10"} {
		must(t, os.WriteFile(filepath.Join(suite, d, "model.onnx"), nil, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(suite, "model.onnx.txt"), nil, 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))

	tests, err := Discover(suite, filepath.Join(suite, "test_c", "nested")+"/")
	must(t, err)
	var got []string
	for _, tt := range tests {
		got = append(got, tt.Suite+"/"+tt.Name)
	}
	want := []string{"node/test_10", "node/test_a", "node/test_b", "nested/nested"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if tests[1].Dir != filepath.Join(suite, "test_a") {
		t.Errorf("dir %q", tests[1].Dir)
	}
	for _, bad := range []struct{ dir, want string }{
		{filepath.Join(root, "empty"), "holds no ONNX tests"},
		{filepath.Join(root, "missing"), "no such file"},
		{filepath.Join(suite, "model.onnx.txt"), "not a directory"},
	} {
		if _, err := Discover(bad.dir); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Discover(%s): %v, want %q", bad.dir, err, bad.want)
		}
	}
}

func TestDataSetOrder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 2, 10, 11} {
		must(t, os.MkdirAll(filepath.Join(dir, fmt.Sprintf("test_data_set_%d", n)), 0o755))
	}
	if _, err := dataSets(dir); err == nil || !strings.Contains(err.Error(), "test_data_set_3 is missing") {
		t.Errorf("gap: %v", err)
	}
	for n := 3; n < 10; n++ {
		must(t, os.MkdirAll(filepath.Join(dir, fmt.Sprintf("test_data_set_%d", n)), 0o755))
	}
	sets, err := dataSets(dir)
	must(t, err)
	if len(sets) != 12 || filepath.Base(sets[10]) != "test_data_set_10" || filepath.Base(sets[2]) != "test_data_set_2" {
		t.Errorf("sets %v", sets)
	}
}
