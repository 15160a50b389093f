package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// BenchmarkKVAttentionDecode measures one decode step's KVAttention on one
// worker: 12 heads of 64 over an f16 cache of 256 positions, 192 of them
// read. warm reads the same cache every time (it stays in L2); cold reads
// it after 64 MiB of other data has gone through the caches, as a decode
// step's does after the weights. MB/s counts the cache bytes read.
func BenchmarkKVAttentionDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const H, P, D, pos = 12, 256, 64, 191
	q := randF32(r, 1, H, 1, D)
	k := kvStore(nil, ir.Float16, randF32(r, 1, H, P, D))
	v := kvStore(nil, ir.Float16, randF32(r, 1, H, P, D))
	ps := ir.FromInt64([]int64{1, 1}, []int64{pos})
	y := ir.NewTensor(ir.Float32, []int64{1, H, 1, D})
	in := []*ir.Tensor{q, k, v, ps}
	spec := &nodeSpec{n: node("KVAttention", nil, in), pool: poolFor(1)}
	for _, t := range in {
		spec.in = append(spec.in, arg{dt: t.DType, shape: t.Shape, ok: true})
	}
	spec.out = []arg{{dt: y.DType, shape: y.Shape, ok: true}}
	kern := build("KVAttention", spec)
	if kern == nil {
		b.Fatal("no KVAttention kernel")
	}
	scratch := ir.AlignedBytes(spec.scratch)
	evict := make([]byte, 64<<20)
	bytes := int64(2 * H * (pos + 1) * D * 2)
	for _, cold := range []bool{false, true} {
		b.Run(fmt.Sprintf("cold=%v", cold), func(b *testing.B) {
			b.SetBytes(bytes)
			var sink byte
			for b.Loop() {
				if cold {
					b.StopTimer()
					for i := 0; i < len(evict); i += 64 {
						sink += evict[i]
					}
					b.StartTimer()
				}
				if err := kern(in, []*ir.Tensor{y}, scratch); err != nil {
					b.Fatal(err)
				}
			}
			_ = sink
		})
	}
}
