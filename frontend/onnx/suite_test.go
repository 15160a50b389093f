package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/weftrt/weft/ir"
)

const suiteDir = "/usr/share/libonnx-testdata/data"

// TestBackendSuite imports every model of the ONNX backend test data: each
// must either import and verify, or fail with an error wrapping
// ir.ErrUnsupported.
func TestBackendSuite(t *testing.T) {
	models, _ := filepath.Glob(filepath.Join(suiteDir, "*", "*", "model.onnx"))
	if len(models) == 0 {
		t.Skipf("ONNX backend test data not installed (%s)", suiteDir)
	}
	ok, unsup := 0, 0
	reasons := map[string]int{}
	for _, path := range models {
		m, err := Load(path)
		if err != nil {
			if errors.Is(err, ir.ErrUnsupported) {
				unsup++
				reasons[reasonOf(err)]++
				continue
			}
			t.Errorf("%v", err)
			continue
		}
		if err := ir.Verify(m.Graph); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		ok++
		if err := m.Close(); err != nil {
			t.Errorf("%s: close: %v", path, err)
		}
	}
	t.Logf("%d models: %d imported, %d unsupported", len(models), ok, unsup)
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return reasons[keys[i]] > reasons[keys[j]] })
	for _, k := range keys {
		t.Logf("%4d  %s", reasons[k], k)
	}
}

var nodePrefix = regexp.MustCompile(`node "[^"]*" \(([^,]*), opset \d+\): `)

// reasonOf condenses an unsupported error for the histogram.
func reasonOf(err error) string {
	s := err.Error()
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[i+2:] // drop the file name
	}
	if m := nodePrefix.FindStringSubmatch(s); m != nil {
		s = s[strings.LastIndex(s, m[0])+len(m[0]):]
	}
	s = regexp.MustCompile(`"[^"]*"`).ReplaceAllString(s, `"…"`)
	return s
}

// TestBackendSuiteTensors reads every input/output tensor file of the suite.
func TestBackendSuiteTensors(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(suiteDir, "*", "*", "test_data_set_*", "*.pb"))
	if len(files) == 0 {
		t.Skipf("ONNX backend test data not installed (%s)", suiteDir)
	}
	ok, unsup := 0, 0
	for _, f := range files {
		tt, _, err := ReadTensorFile(f)
		if err != nil {
			if errors.Is(err, ir.ErrUnsupported) {
				unsup++
				continue
			}
			t.Errorf("%v", err)
			continue
		}
		if err := tt.Check(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		ok++
	}
	if _, err := os.Stat(suiteDir); err == nil {
		t.Logf("%d tensor files: %d read, %d unsupported", len(files), ok, unsup)
	}
}
