package kernels

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSysfsLastLevelCache reads a cache hierarchy laid out as Linux's
// sysfs lays it out: the highest-level data or unified cache wins,
// instruction caches and unreadable entries are skipped.
func TestSysfsLastLevelCache(t *testing.T) {
	for _, c := range []struct {
		name  string
		index [][3]string // level, type, size
		want  int64
	}{
		{"zen", [][3]string{{"1", "Data", "48K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "1024K"}, {"3", "Unified", "32768K"}}, 32 << 20},
		{"megabytes", [][3]string{{"2", "Unified", "2M"}, {"3", "Unified", "12M"}}, 12 << 20},
		{"no l3", [][3]string{{"1", "Data", "64K"}, {"2", "Unified", "4096K"}}, 4 << 20},
		{"instruction only", [][3]string{{"4", "Instruction", "64M"}, {"2", "Unified", "512K"}}, 512 << 10},
		{"garbage", [][3]string{{"x", "Unified", "1M"}, {"3", "Unified", "lots"}, {"2", "Data", "256K"}}, 256 << 10},
		{"empty", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, e := range c.index {
				d := filepath.Join(dir, "index"+string(rune('0'+i)))
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				for j, f := range []string{"level", "type", "size"} {
					if err := os.WriteFile(filepath.Join(d, f), []byte(e[j]+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := sysfsLastLevelCache(dir); got != c.want {
				t.Fatalf("got %d bytes, want %d", got, c.want)
			}
		})
	}
	if llc := LastLevelCache(); llc < 0 || (llc > 0 && llc < 64<<10) {
		t.Fatalf("LastLevelCache() = %d: not a cache size", llc)
	}
}
