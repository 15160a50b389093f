package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzRead checks that Read never panics and that whatever it accepts
// survives a Write/Read round trip unchanged. Seeds: the NumPy fixtures
// (added here) and regression inputs in testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.npy"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := a.Check(); err != nil {
			t.Fatalf("Read returned an inconsistent tensor: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("Write of a tensor Read accepted: %v", err)
		}
		b, err := Read(&buf)
		if err != nil {
			t.Fatalf("re-Read: %v", err)
		}
		if a.DType != b.DType || !reflect.DeepEqual(a.Shape, b.Shape) || !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("round trip changed %v into %v", a, b)
		}
	})
}
