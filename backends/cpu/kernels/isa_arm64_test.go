//go:build !noasm

package kernels

import (
	"os"
	"testing"
)

// TestARM64Levels checks the arm64 levels: only Generic and NEON levels
// are offered, the amd64 ones are refused, and, when the test runner says
// which level the CPU (model) has through WEFT_WANT_ISA (the Makefile's
// arm64test does, once per qemu CPU model), detection finds exactly it,
// so no path is skipped silently.
func TestARM64Levels(t *testing.T) {
	for _, name := range []string{"avx2", "avx512"} {
		if _, err := SetISA(name); err == nil {
			t.Errorf("SetISA(%s) succeeded on arm64", name)
		}
	}
	l := Levels()
	if l[0] != Generic || l[len(l)-1] != BestISA() {
		t.Errorf("Levels() = %v, best %v", l, BestISA())
	}
	for _, isa := range l[1:] {
		if isa != NEON && isa != DotProd && isa != I8MM {
			t.Errorf("Levels() has %v on arm64", isa)
		}
	}
	if want := os.Getenv("WEFT_WANT_ISA"); want != "" && BestISA().String() != want {
		t.Fatalf("BestISA = %v, the runner expects %s", BestISA(), want)
	}
}
