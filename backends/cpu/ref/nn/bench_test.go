package nn

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

// Realistic sizes: a ResNet-style 3x3 conv and a 256^3 matmul.
func BenchmarkConv3x3(b *testing.B) {
	x := ir.NewTensor(ir.Float32, sh(1, 64, 56, 56))
	w := ir.NewTensor(ir.Float32, sh(64, 64, 3, 3))
	attrs := a(ir.Ints("pads", 1, 1, 1, 1))
	for b.Loop() {
		if _, err := call("Conv", attrs, 1, x, w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatMul256(b *testing.B) {
	x := ir.NewTensor(ir.Float32, sh(256, 256))
	for b.Loop() {
		if _, err := call("MatMul", nil, 1, x, x); err != nil {
			b.Fatal(err)
		}
	}
}
