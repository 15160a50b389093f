package passes

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestInferRotaryEmbedding(t *testing.T) {
	runInferCases(t, []inferCase{
		{"rope", func(b *ir.Builder) []*ir.Value {
			x := b.Input("x", ir.Float32, sh("b", 8, "s", 64))
			pos := b.Input("pos", ir.Int64, sh("b", "s"))
			return []*ir.Value{
				b.OpA("RotaryEmbedding", at(ir.Int("interleaved", 1)), x, zeros(b, 512, 32), zeros(b, 512, 32), pos),
				b.OpA("RotaryEmbedding", at(ir.Int("rotary_embedding_dim", 16)), x, zeros(b, 512, 8), zeros(b, 512, 8), pos),
			}
		}, []string{"f32[b,8,s,64]", "f32[b,8,s,64]"}},
	})
	inferErr(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(1, 8, 3, 64))
		b.Output("y", b.Op("RotaryEmbedding", x, zeros(b, 512, 16), zeros(b, 512, 16), b.Input("p", ir.Int64, sh(1, 3))))
	}, "cos_cache has 16 columns")
	inferErr(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(1, 8, 3, 64))
		b.Output("y", b.Op("RotaryEmbedding", x, zeros(b, 512, 32), zeros(b, 512, 32), b.Input("p", ir.Int64, sh(1, 4))))
	}, "position_ids seq")
	inferErr(t, func(b *ir.Builder) {
		x := b.Input("x", ir.Float32, sh(8, 3, 64))
		b.Output("y", b.Op("RotaryEmbedding", x, zeros(b, 512, 32), zeros(b, 512, 32), b.Input("p", ir.Int64, sh(1, 3))))
	}, "rank 3")
}
