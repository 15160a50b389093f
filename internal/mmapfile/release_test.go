//go:build linux

package mmapfile

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRelease: the pages Release drops leave the resident set and read
// the same bytes afterwards; memory Map did not map is left alone.
func TestRelease(t *testing.T) {
	ps := os.Getpagesize()
	want := make([]byte, 64*ps)
	for i := range want {
		want[i] = byte(i*7 + i/ps)
	}
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, err := Map(f)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	var s byte
	for i := 0; i < len(data); i += ps {
		s += data[i]
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	before := fileRss(t, path)
	if !Release(data[ps/2 : len(data)-ps/2]) {
		t.Fatal("Release declined a mapping of Map")
	}
	after := fileRss(t, path)
	// Released: the 62 whole pages inside the range.
	if before < 64*ps || after > before-62*ps {
		t.Fatalf("resident bytes of the mapping: %d before Release, %d after", before, after)
	}
	if string(data) != string(want) {
		t.Fatal("the mapping reads other bytes after Release")
	}
	if Release(make([]byte, 4*ps)) {
		t.Fatal("Release acted on Go memory")
	}
	if Release(nil) {
		t.Fatal("Release acted on nothing")
	}
	sink = s
}

// sink keeps the reads that fault the pages in.
var sink byte

// fileRss is the Rss of this process's mappings of path (/proc/self/smaps).
func fileRss(t *testing.T, path string) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[len(fs)-1] == path
			continue
		}
		if in && fs[0] == "Rss:" {
			kb, _ := strconv.Atoi(fs[1])
			total += kb << 10
		}
	}
	return total
}
