package kernels

import (
	"math/rand/v2"
	"testing"
)

// forEachISA runs f once per ISA level this machine supports, forcing the
// level with SetISA.
func forEachISA(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, isa := range Levels() {
		t.Run(isa.String(), func(t *testing.T) {
			prev, err := SetISA(isa.String())
			if err != nil {
				t.Fatal(err)
			}
			defer current.Store(int32(prev))
			f(t)
		})
	}
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.Float64()*2 - 1)
	}
	return x
}

func TestSetISA(t *testing.T) {
	if _, err := SetISA("sse9"); err == nil {
		t.Fatal("SetISA accepted an unknown level")
	}
	prev, err := SetISA("generic")
	if err != nil {
		t.Fatal(err)
	}
	if CurrentISA() != Generic {
		t.Fatalf("CurrentISA = %v after SetISA(generic)", CurrentISA())
	}
	current.Store(int32(prev))
	if BestISA() < AVX512 {
		if _, err := SetISA("avx512"); err == nil {
			t.Fatal("SetISA(avx512) succeeded on a machine without AVX-512")
		}
	}
}
