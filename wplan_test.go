package weft_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/conform"
	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
)

const onnxData = "/usr/share/libonnx-testdata/data"

// planTests are ONNX backend tests whose models are compiled to plan files:
// convolutions, Gemm, If, Loop, Scan and recurrent ops (nested subgraphs,
// many attribute kinds, tensor attributes).
var planTests = []string{
	"pytorch-converted/test_Conv2d*", "node/test_gemm*", "node/test_if", "node/test_loop11",
	"node/test_scan9_sum", "node/test_lstm_defaults", "node/test_gru_defaults",
	"pytorch-operator/test_operator_add_broadcast", "simple/test_sign_model",
}

func globTests(t *testing.T) []string {
	var dirs []string
	for _, pat := range planTests {
		m, _ := filepath.Glob(filepath.Join(onnxData, pat))
		dirs = append(dirs, m...)
	}
	if len(dirs) == 0 {
		t.Skipf("no ONNX test data under %s", onnxData)
	}
	return dirs
}

// feedsOf reads test_data_set_0's inputs, keyed by the model's input names.
func feedsOf(t *testing.T, dir string) ([]*ir.Tensor, func(m *weft.Model) map[string]*ir.Tensor) {
	files, _ := filepath.Glob(filepath.Join(dir, "test_data_set_0", "input_*.pb"))
	sort.Slice(files, func(i, j int) bool {
		return len(files[i]) < len(files[j]) || len(files[i]) == len(files[j]) && files[i] < files[j]
	})
	var feeds []*ir.Tensor
	for _, f := range files {
		x, _, err := onnx.ReadTensorFile(f)
		require.NoError(t, err)
		feeds = append(feeds, x)
	}
	return feeds, func(m *weft.Model) map[string]*ir.Tensor {
		in := map[string]*ir.Tensor{}
		k := 0
		for _, v := range m.Inputs() {
			if !v.IsConst() && k < len(feeds) {
				in[v.Name] = feeds[k]
				k++
			}
		}
		return in
	}
}

// compilePlan compiles src with opts and writes the plan to dst.
func compilePlan(t *testing.T, src, dst string, opts weft.Options) {
	t.Helper()
	g, closer, err := weft.Load(src)
	require.NoError(t, err)
	defer closer.Close()
	if opts.Prepare != nil {
		require.NoError(t, opts.Prepare(g))
	}
	p, _, err := weft.Compile(g, opts)
	require.NoError(t, err)
	require.NoError(t, weft.SavePlan(dst, p, opts, src))
}

// TestPlanRunsLikeModel: compile → write → open → run gives exactly the
// outputs of running the ONNX model directly, and compiling twice gives
// the same bytes.
func TestPlanRunsLikeModel(t *testing.T) {
	ctx := context.Background()
	for _, dir := range globTests(t) {
		for _, level := range []int{0, 2} {
			t.Run(filepath.Base(dir)+map[int]string{0: "/O0", 2: "/O2"}[level], func(t *testing.T) {
				feeds, named := feedsOf(t, dir)
				opts := weft.Options{OptLevel: level, Verify: true,
					Prepare: func(g *ir.Graph) error { conform.FitInputShapes(g, feeds); return nil }}
				src := filepath.Join(dir, "model.onnx")
				direct, err := weft.Open(src, opts)
				require.NoError(t, err)
				defer direct.Close()
				want, err := direct.Run(ctx, named(direct))
				require.NoError(t, err)

				tmp := t.TempDir()
				p1, p2 := filepath.Join(tmp, "a.wplan"), filepath.Join(tmp, "b.wplan")
				compilePlan(t, src, p1, opts)
				compilePlan(t, src, p2, opts)
				b1, err := os.ReadFile(p1)
				require.NoError(t, err)
				b2, err := os.ReadFile(p2)
				require.NoError(t, err)
				require.True(t, bytes.Equal(b1, b2), "compiling twice gave different plan files")

				m, err := weft.Open(p1, weft.Options{VerifyWeights: true})
				require.NoError(t, err)
				defer m.Close()
				require.Nil(t, m.Report)
				require.Equal(t, weft.OptionsString(opts), m.PlanMeta["options"])
				require.Equal(t, "model.onnx", m.PlanMeta["source"])
				require.Equal(t, direct.OutputNames(), m.OutputNames())
				got, err := m.Run(ctx, named(m))
				require.NoError(t, err)
				require.Len(t, got, len(want))
				for name, w := range want {
					g := got[name]
					require.NotNil(t, g, "output %s", name)
					require.Equal(t, w.DType, g.DType, "output %s", name)
					require.Equal(t, w.Shape, g.Shape, "output %s", name)
					require.True(t, bytes.Equal(w.Data, g.Data), "output %s differs", name)
				}
			})
		}
	}
}

// bigMLP is an MLP whose weights quantization policies can pick up.
func bigMLP(t *testing.T) *ir.Graph {
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.S(2, 64))
	h := x
	for i, n := range []int64{64, 32} {
		w := ir.NewTensor(ir.Float32, []int64{h.Shape[1].Size, n})
		for k := 0; k < w.Len(); k++ {
			w.SetFloat64(k, float64((k*37+i*11)%23)/23-0.5)
		}
		bias := ir.NewTensor(ir.Float32, []int64{n})
		h = b.Op("Add", b.Op("MatMul", h, b.Const("w"+string(rune('0'+i)), w)), b.Const("b"+string(rune('0'+i)), bias))
		h.Shape = ir.S(2, n)
		if i == 0 {
			h = b.Op("Relu", h)
			h.Shape = ir.S(2, n)
		}
	}
	b.Output("y", h)
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

// TestBuilderPlanDeterministic compiles models written with ir.Builder twice,
// in fresh graphs, and compares the plan bytes; the plans then run like the
// in-memory models.
func TestBuilderPlanDeterministic(t *testing.T) {
	cases := []struct {
		name  string
		build func(t *testing.T) *ir.Graph
		opts  weft.Options
		in    *ir.Tensor
	}{
		{"mlp O2", func(t *testing.T) *ir.Graph { g, _, _, _, _ := buildMLP(t); return g }, weft.Options{OptLevel: 2},
			ir.FromFloat64(ir.Float32, []int64{3, 2}, []float64{1, 2, -0.5, 0.25, 3, -1})},
		{"big mlp O2", bigMLP, weft.Options{OptLevel: 2}, ir.FromFloat64(ir.Float32, []int64{2, 64}, make([]float64, 128))},
		{"big mlp q8_0", bigMLP, weft.Options{OptLevel: 2, Quantize: weftQuant("q8_0")}, nil},
		{"big mlp int8", bigMLP, weft.Options{OptLevel: 1, Quantize: weftQuant("int8-per-channel")}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			compile := func() []byte {
				p, _, err := weft.Compile(tc.build(t), tc.opts)
				require.NoError(t, err)
				var buf bytes.Buffer
				require.NoError(t, plan.Write(&buf, p, weft.PlanMeta(tc.opts, "builder")))
				return buf.Bytes()
			}
			a := compile()
			require.Equal(t, a, compile())
			if tc.opts.Quantize.Type != "" {
				// The quantized weights are stored as they are, ready for QMatMul.
				pf, err := plan.Decode(a, tc.name)
				require.NoError(t, err)
				quantized := 0
				for _, c := range pf.Plan.Graph.Consts {
					if c.DType.IsQuantized() || c.DType == ir.Int8 {
						quantized++
					}
				}
				require.Equal(t, 2, quantized, "quantized weights in the plan")
			}

			in := tc.in
			if in == nil {
				in = ir.NewTensor(ir.Float32, []int64{2, 64})
				for i := 0; i < in.Len(); i++ {
					in.SetFloat64(i, float64(i%7)-3)
				}
			}
			mem, err := weft.New(tc.build(t), tc.opts)
			require.NoError(t, err)
			want, err := mem.Run(context.Background(), map[string]*ir.Tensor{"x": in})
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "m.wplan")
			require.NoError(t, os.WriteFile(path, a, 0o644))
			m, err := weft.Open(path, weft.Options{})
			require.NoError(t, err)
			defer m.Close()
			got, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": in})
			require.NoError(t, err)
			require.Equal(t, want["y"].Data, got["y"].Data)
		})
	}
}

func weftQuant(typ string) passes.QuantizeOptions {
	return passes.QuantizeOptions{Type: typ, Policy: "all"}
}

func TestOpenPlanErrors(t *testing.T) {
	g, _, _, _, _ := buildMLP(t)
	p, _, err := weft.Compile(g, weft.DefaultOptions())
	require.NoError(t, err)
	dir := t.TempDir()

	// A device this program does not have.
	for _, part := range p.Partitions {
		part.Device = "vulkan:7"
	}
	path := filepath.Join(dir, "gpu.wplan")
	require.NoError(t, weft.SavePlan(path, p, weft.DefaultOptions(), "mlp"))
	_, err = weft.Open(path, weft.Options{})
	require.ErrorContains(t, err, `gpu.wplan: partition 0 runs on device "vulkan:7", which this program does not have (devices: cpu)`)

	// Corrupted weights: Open does not read them; VerifyWeights does.
	for _, part := range p.Partitions {
		part.Device = "cpu"
	}
	path = filepath.Join(dir, "ok.wplan")
	require.NoError(t, weft.SavePlan(path, p, weft.DefaultOptions(), "mlp"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-1] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))
	m, err := weft.Open(path, weft.Options{})
	require.NoError(t, err)
	m.Close()
	_, err = weft.Open(path, weft.Options{VerifyWeights: true})
	require.ErrorContains(t, err, "ok.wplan: weights section: checksum mismatch")

	// Truncated.
	require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o644))
	_, err = weft.Open(path, weft.Options{})
	require.ErrorContains(t, err, "ok.wplan: truncated")

	// weft.Load gives the compiled graph.
	require.NoError(t, weft.SavePlan(path, p, weft.DefaultOptions(), "mlp"))
	lg, closer, err := weft.Load(path)
	require.NoError(t, err)
	// The same graph; only the ids of unnamed values are renumbered densely.
	ids := regexp.MustCompile(`%[0-9]+`)
	require.Equal(t, ids.ReplaceAllString(ir.Text(p.Graph), "%N"), ids.ReplaceAllString(ir.Text(lg), "%N"))
	require.NoError(t, closer.Close())
}

// TestConformanceViaPlan runs the ONNX backend tests with every model going
// through a plan file (compile → write → open → run) instead of an
// in-memory compile: no test may fail. It takes several seconds, so -short
// skips it; WEFT_PLAN_CONFORM_LEVEL picks the -O level (default 2).
func TestConformanceViaPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := os.Stat(filepath.Join(onnxData, "node")); err != nil {
		t.Skipf("no ONNX test data under %s", onnxData)
	}
	level := 2
	if l := os.Getenv("WEFT_PLAN_CONFORM_LEVEL"); l != "" {
		level = int(l[0] - '0')
	}
	var dirs []string
	for _, s := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		dirs = append(dirs, filepath.Join(onnxData, s))
	}
	tests, err := conform.Discover(dirs...)
	require.NoError(t, err)
	tmp := t.TempDir()
	r := conform.NewRunner(weft.Options{OptLevel: level})
	r.Open = func(path string, feeds []*ir.Tensor) (conform.Model, error) {
		opts := weft.Options{OptLevel: level}
		g, closer, err := weft.Load(path)
		if err != nil {
			return nil, err
		}
		defer closer.Close()
		conform.FitInputShapes(g, feeds)
		p, _, err := weft.Compile(g, opts)
		if err != nil {
			return nil, err
		}
		f, err := os.CreateTemp(tmp, "*.wplan")
		if err != nil {
			return nil, err
		}
		f.Close()
		if err := weft.SavePlan(f.Name(), p, opts, path); err != nil {
			return nil, err
		}
		return weft.Open(f.Name(), weft.Options{})
	}
	results := r.Run(context.Background(), tests, nil)
	counts := conform.Summarize(results)
	t.Logf("via plan files at -O%d: %v", level, counts)
	for _, res := range results {
		if res.Status == conform.Fail {
			t.Errorf("%s", res.Line())
		}
	}
}
