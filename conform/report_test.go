package conform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleResults() []Result {
	mk := func(suite, name string, s Status, detail string) Result {
		return Result{Test: Test{Suite: suite, Name: name, Dir: "/d/" + suite + "/" + name}, Status: s, Detail: detail, Duration: 1500 * time.Millisecond}
	}
	return []Result{
		mk("node", "test_abs", Pass, ""),
		mk("node", "test_cast_bf16", Skip, "onnx: Cast to bf16: unsupported dtype"),
		mk("node", "test_conv", Fail, "output 0 (y): max abs err 0.5 at index 3"),
		mk("simple", "test_gemm", Pass, ""),
		mk("simple", "test_seq", Skip, "sequence_type inputs | unsupported"),
	}
}

func TestCounts(t *testing.T) {
	rs := sampleResults()
	if got := Summarize(rs).String(); got != "2 passed, 1 failed, 2 skipped" {
		t.Errorf("summary %q", got)
	}
	want := map[string]Counts{"node": {1, 1, 1}, "simple": {1, 0, 1}}
	if got := BySuite(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("by suite %v, want %v", got, want)
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	must(t, WriteJSON(&buf, sampleResults()))
	var doc struct {
		Summary Counts
		Suites  map[string]Counts
		Tests   []struct {
			Suite, Name, Dir, Status, Detail string
			Seconds                          float64
		}
	}
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	if doc.Summary != (Counts{2, 1, 2}) || doc.Suites["simple"] != (Counts{1, 0, 1}) || len(doc.Tests) != 5 {
		t.Fatalf("doc %+v", doc)
	}
	if tt := doc.Tests[2]; tt.Status != "FAIL" || tt.Name != "test_conv" || tt.Suite != "node" || tt.Seconds != 1.5 || !strings.Contains(tt.Detail, "max abs err") {
		t.Errorf("test %+v", tt)
	}
	buf.Reset()
	must(t, WriteJSON(&buf, nil))
	if !strings.Contains(buf.String(), `"tests": []`) {
		t.Errorf("empty run: %s", buf.String())
	}
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	must(t, WriteMarkdown(&buf, sampleResults(), 2))
	md := buf.String()
	first := strings.SplitN(md, "\n", 2)[0]
	if !strings.Contains(first, "make conformance-doc") {
		t.Errorf("first line %q does not say how the file is generated", first)
	}
	for _, want := range []string{
		"| node | 1 | 1 | 1 | 3 |",
		"| simple | 1 | 0 | 1 | 2 |",
		"| **all** | 2 | 1 | 2 | 5 |",
		"## node: Failing (1)",
		"- `test_conv`: output 0 (y): max abs err 0.5 at index 3",
		"## node: Skipped (1)",
		"- `test_cast_bf16`: onnx: Cast to bf16: unsupported dtype",
		"- `test_seq`: sequence\\_type inputs \\| unsupported",
		"-O2",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "test_abs") || strings.Contains(md, "1.5") {
		t.Error("markdown lists passing tests or timings")
	}
	var again bytes.Buffer
	must(t, WriteMarkdown(&again, sampleResults(), 2))
	if again.String() != md {
		t.Error("markdown is not deterministic")
	}
}

func TestBaseline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.json")
	must(t, os.WriteFile(p, []byte(`{"node": 2, "simple": 1, "pytorch-operator": 5}`), 0o644))
	bl, err := ReadBaseline(p)
	must(t, err)
	msgs := bl.Check(sampleResults())
	if want := []string{"suite node: 1 passed, below the baseline of 2"}; !reflect.DeepEqual(msgs, want) {
		t.Errorf("check %q, want %q", msgs, want)
	}
	if m := bl.Missing(sampleResults()); !reflect.DeepEqual(m, []string{"pytorch-operator"}) {
		t.Errorf("missing %v", m)
	}
	if msgs := (Baseline{"node": 1, "simple": 0}).Check(sampleResults()); len(msgs) != 0 {
		t.Errorf("at baseline: %v", msgs)
	}
	must(t, os.WriteFile(p, []byte(`{"node": "x"}`), 0o644))
	if _, err := ReadBaseline(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad baseline: %v", err)
	}
	if _, err := ReadBaseline(p + ".missing"); err == nil {
		t.Error("missing baseline: no error")
	}
}
