package onnx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/conform"
	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
)

const suiteDir = "/usr/share/libonnx-testdata/data"

// pair runs the imported model and its written-and-reimported copy on the
// same inputs; the outputs must be bit for bit the same.
type pair struct {
	orig, back *weft.Model
	file       *onnx.Model // the original's constants alias its mapping
}

func (p *pair) Inputs() []*ir.Value   { return p.back.Inputs() }
func (p *pair) OutputNames() []string { return p.back.OutputNames() }
func (p *pair) Close() error {
	return errors.Join(p.orig.Close(), p.back.Close(), p.file.Close())
}
func (p *pair) Run(ctx context.Context, in map[string]*ir.Tensor) (map[string]*ir.Tensor, error) {
	want, err := p.orig.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	got, err := p.back.Run(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("written model: %w", err)
	}
	for _, name := range p.orig.OutputNames() {
		w, g := want[name], got[name]
		if g == nil || w.DType != g.DType || fmt.Sprint(w.Shape) != fmt.Sprint(g.Shape) || !bytes.Equal(w.Data, g.Data) {
			return nil, fmt.Errorf("written model: output %s differs: %v vs %v", name, g, w)
		}
	}
	return got, nil
}

// TestWriteSuiteRoundTrip imports every model of the ONNX backend test data,
// writes it at opset 17, imports that again, checks the two graphs are
// equivalent and runs both (-O0) on the test inputs: outputs must be
// identical and match the expected ones. Models the writer cannot express
// at opset 17 (weft-internal legacy forms) must fail as unsupported.
func TestWriteSuiteRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole backend test suite twice")
	}
	var dirs []string
	for _, s := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		if _, err := os.Stat(filepath.Join(suiteDir, s)); err == nil {
			dirs = append(dirs, filepath.Join(suiteDir, s))
		}
	}
	if len(dirs) == 0 {
		t.Skipf("ONNX backend test data not installed (%s)", suiteDir)
	}
	tests, err := conform.Discover(dirs...)
	require.NoError(t, err)
	var mu sync.Mutex
	writeSkips := map[string]string{}
	r := conform.NewRunner(weft.Options{OptLevel: 0})
	r.Open = func(path string, feeds []*ir.Tensor) (_ conform.Model, err error) {
		m, err := onnx.Load(path)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				m.Close()
			}
		}()
		conform.FitInputShapes(m.Graph, feeds)
		data, err := onnx.Marshal(m.Graph, 17)
		if err != nil {
			if errors.Is(err, ir.ErrUnsupported) {
				mu.Lock()
				writeSkips[path] = err.Error()
				mu.Unlock()
			}
			return nil, err
		}
		back, err := onnx.Parse(data, "")
		if err != nil {
			return nil, fmt.Errorf("written model does not import: %v", err) // never SKIP
		}
		if err := onnx.Equivalent(m.Graph, back.Graph); err != nil {
			return nil, fmt.Errorf("written model differs: %v", err)
		}
		orig, err := weft.New(m.Graph, weft.Options{OptLevel: 0})
		if err != nil {
			return nil, err
		}
		bm, err := weft.New(back.Graph, weft.Options{OptLevel: 0})
		if err != nil {
			orig.Close()
			return nil, fmt.Errorf("written model does not compile: %v", err)
		}
		return &pair{orig: orig, back: bm, file: m}, nil
	}
	results := r.Run(context.Background(), tests, nil)
	c := conform.Summarize(results)
	for _, res := range results {
		if res.Status == conform.Fail {
			t.Errorf("%s", res.Line())
		}
	}
	t.Logf("%d tests: %v; %d not writable at opset 17", len(results), c, len(writeSkips))
	for p, why := range writeSkips {
		t.Logf("not written: %s: %s", filepath.Base(filepath.Dir(p)), why)
	}
	require.GreaterOrEqual(t, c.Passed, 900)
}
