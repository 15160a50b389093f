package passes

import (
	"testing"

	"github.com/weftrt/weft/ir"
)

func TestInferKVOps(t *testing.T) {
	cache := func(b *ir.Builder, name string, dt ir.DType, d int) *ir.Value {
		return b.Input(name, dt, sh(1, 2, 16, d))
	}
	pos := func(b *ir.Builder, s any) *ir.Value { return b.Input("pos", ir.Int64, sh(1, s)) }
	runInferCases(t, []inferCase{
		{"update", func(b *ir.Builder) []*ir.Value {
			p := pos(b, "s")
			return []*ir.Value{
				b.Op("KVCacheUpdate", cache(b, "k", ir.Float16, 64), b.Input("new", ir.Float32, sh(1, 2, "s", 64)), p),
				b.Op("KVCacheUpdate", cache(b, "q", ir.Q8_0, 64), b.Input("new2", ir.Float32, sh(1, 2, "s", 64)), p),
			}
		}, []string{"f16[1,2,16,64]", "q8_0[1,2,16,64]"}},
		{"attention", func(b *ir.Builder) []*ir.Value {
			q := b.Input("q", ir.Float32, sh(1, 8, 3, 32))
			k, v := cache(b, "k", ir.Q8_0, 32), cache(b, "v", ir.Q8_0, 32)
			return []*ir.Value{b.Op("KVAttention", q, k, v, pos(b, 3))}
		}, []string{"f32[1,8,3,32]"}},
		{"qgather", func(b *ir.Builder) []*ir.Value {
			tab := b.Const("tab", ir.NewTensor(ir.Q4_0, []int64{10, 64}))
			return []*ir.Value{b.Op("QGather", tab, b.Input("idx", ir.Int64, sh(1, "s")))}
		}, []string{"f32[1,s,64]"}},
	})
	inferErr(t, func(b *ir.Builder) {
		b.Op("KVCacheUpdate", cache(b, "k", ir.Q8_0, 16), b.Input("new", ir.Float32, sh(1, 2, 1, 16)), pos(b, 1))
	}, "q8_0 with head size 16", "unsupported")
	inferErr(t, func(b *ir.Builder) {
		b.Op("KVCacheUpdate", cache(b, "k", ir.Float32, 8), b.Input("new", ir.Float32, sh(1, 3, 1, 8)), pos(b, 1))
	}, "kv heads")
	inferErr(t, func(b *ir.Builder) {
		b.Op("KVCacheUpdate", cache(b, "k", ir.Float32, 8), b.Input("new", ir.Float32, sh(1, 2, 2, 8)), pos(b, 3))
	}, "Positions length")
	inferErr(t, func(b *ir.Builder) {
		q := b.Input("q", ir.Float32, sh(1, 3, 1, 8))
		b.Op("KVAttention", q, cache(b, "k", ir.Float32, 8), cache(b, "v", ir.Float32, 8), pos(b, 1))
	}, "not a multiple")
	inferErr(t, func(b *ir.Builder) {
		q := b.Input("q", ir.Float32, sh(1, 2, 1, 8))
		b.Op("KVAttention", q, cache(b, "k", ir.Float32, 8), cache(b, "v", ir.Float16, 8), pos(b, 1))
	}, "VCache is f16")
	inferErr(t, func(b *ir.Builder) {
		b.Op("QGather", b.Input("t", ir.Float32, sh(4, 8)), b.Input("idx", ir.Int64, sh(2)))
	}, "Gather")
}
