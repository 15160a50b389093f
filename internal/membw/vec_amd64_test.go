//go:build !noasm

package membw

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// TestAVX2Reader runs the AVX2 reader directly: Readers picks AVX-512
// where the CPU has it, which would leave this one untested.
func TestAVX2Reader(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2")
	}
	x := make([]uint64, 4096)
	for i := range x {
		x[i] = uint64(i)*0x9E3779B97F4A7C15 + 7
	}
	want := SumWords(x)
	for _, d := range []int{0, 1024} {
		if got := readAVX2(unsafe.Pointer(&x[0]), len(x)*8, d); got != want {
			t.Errorf("prefetch %d: %#x, want %#x", d, got, want)
		}
	}
}
