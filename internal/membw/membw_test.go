package membw

import (
	"fmt"
	"testing"
)

func TestSumWords(t *testing.T) {
	for _, n := range []int{0, 7, 8, 9, 64, 1001} {
		x := make([]uint64, n)
		var want uint64
		for i := range x {
			x[i] = uint64(i*i + 3)
			if i < n-n%8 {
				want += x[i]
			}
		}
		if got := SumWords(x); got != want {
			t.Errorf("n=%d: SumWords = %d, want %d (whole groups of eight)", n, got, want)
		}
	}
}

// TestReaders checks every reader's sum against SumWords on lengths around
// the 256-byte granule, with values that carry into the high bits.
func TestReaders(t *testing.T) {
	rs := Readers()
	if len(rs) == 0 || rs[0].Name != "go" {
		t.Fatalf("Readers() = %v, want the Go loop first", rs)
	}
	for _, n := range []int{0, 7, 8, 31, 32, 33, 40, 64, 1001, 4096 + 40} {
		x := make([]uint64, n)
		for i := range x {
			x[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
		}
		want := SumWords(x)
		for _, r := range rs {
			if got := r.Sum(x); got != want {
				t.Errorf("%s, %d words: sum %#x, want %#x", r.Name, n, got, want)
			}
		}
	}
}

func TestBest(t *testing.T) {
	if b := Best(nil); b.GBs != 0 {
		t.Errorf("Best(nil) = %v", b)
	}
	got := Best([]Result{{"a", 1, 5}, {"b", 3, 3}, {"c", 2, 2}})
	if got.Reader != "b" {
		t.Errorf("Best = %v, want b", got)
	}
}

// BenchmarkMeasure reports each reader's bandwidth (GB/s) at 1 and 2
// threads: which one Read's figure comes from on this machine.
func BenchmarkMeasure(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) {
			var rs []Result
			for b.Loop() {
				rs = Measure(threads)
			}
			for _, r := range rs {
				b.ReportMetric(r.GBs, "GB/s:"+r.Reader)
				b.ReportMetric(r.BestGBs, "GB/s-best:"+r.Reader)
			}
		})
	}
}

// TestMeasure checks that every reader reports a median pass no faster
// than its best one, both positive.
func TestMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 256 MB dozens of times")
	}
	rs := Measure(2)
	if len(rs) != len(Readers()) {
		t.Fatalf("%d results for %d readers", len(rs), len(Readers()))
	}
	for _, r := range rs {
		if !(r.GBs > 0 && r.GBs <= r.BestGBs) {
			t.Errorf("%s: median %v GB/s, best %v GB/s", r.Reader, r.GBs, r.BestGBs)
		}
	}
}

// TestProber checks a pass's size and time and that ReaderNamed finds
// every reader Readers lists (and no other).
func TestProber(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates and streams 256 MB")
	}
	for _, threads := range []int{1, 3} {
		p := NewProber(threads)
		if b := p.PassBytes(); b <= 0 || b > Bytes || Bytes-b >= threads*chunkWords*8 {
			t.Errorf("%d threads: a pass reads %d bytes of %d", threads, b, Bytes)
		}
		if d := p.Pass(Readers()[0]); d <= 0 || p.GBs(d) <= 0 {
			t.Errorf("%d threads: pass took %v", threads, d)
		}
	}
	for _, r := range Readers() {
		if got, ok := ReaderNamed(r.Name); !ok || got.Name != r.Name {
			t.Errorf("ReaderNamed(%q) = %q, %v", r.Name, got.Name, ok)
		}
	}
	if _, ok := ReaderNamed("no such reader"); ok {
		t.Error("ReaderNamed found a reader that does not exist")
	}
}
