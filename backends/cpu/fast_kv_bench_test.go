package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/internal/hugemem"
	"github.com/weftrt/weft/ir"
)

// BenchmarkKVAttentionDecode measures one decode step's KVAttention over
// an f16 cache: Llama-110M's 12 heads of 64 on 12 KV heads and
// Qwen2-0.5B's 14 on 2 (groups of 7), at 192 positions of 256 and at 2048
// of 2048, and a Llama 3 layer's 32 heads of 128 on 8 at 2048, on one
// worker and on two, the cache on huge pages as in
// runtime/llm. warm reads the same cache every time
// (it stays in L2 when it fits); cold reads it after 128 MiB of other
// data has gone through the caches, as a decode step's does after the
// weights, read by the benchmark's workers themselves: every core's caches
// are flushed (two L3s where the workers sit on two dies), and a worker
// that read them is still spinning, not parked, when the kernel starts.
// MB/s counts the cache bytes read.
func BenchmarkKVAttentionDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const chunk = 1 << 20
	evict := make([]byte, 128<<20)
	for i := range evict {
		evict[i] = byte(i) // touched: untouched pages all map the one zero page
	}
	sums := make([]byte, len(evict)/chunk)
	for _, sh := range []struct {
		name       string
		H, Hkv, P  int64
		pos        int64
		workerRuns []int
	}{
		{"llama", 12, 12, 256, 191, []int{1, 2}},
		{"qwen2", 14, 2, 256, 191, []int{1, 2}},
		{"llama", 12, 12, 2048, 2047, []int{1, 2}},
		{"qwen2", 14, 2, 2048, 2047, []int{1, 2}},
		// Llama 3's attention geometry (head size 128, groups of 4), one
		// layer's eight KV heads.
		{"llama3", 32, 8, 2048, 2047, []int{1, 2}},
	} {
		D := int64(64)
		if sh.name == "llama3" {
			D = 128
		}
		q := randF32(r, 1, sh.H, 1, D)
		// K and V in one buffer on huge pages, as runtime/llm lays them.
		k := kvStore(nil, ir.Float16, randF32(r, 1, sh.Hkv, sh.P, D))
		v := kvStore(nil, ir.Float16, randF32(r, 1, sh.Hkv, sh.P, D))
		slab := hugemem.Bytes(2 * len(k.Data))
		k.Data = slab[:copy(slab, k.Data)]
		v.Data = slab[len(k.Data):][:copy(slab[len(k.Data):], v.Data)]
		ps := ir.FromInt64([]int64{1, 1}, []int64{sh.pos})
		y := ir.NewTensor(ir.Float32, []int64{1, sh.H, 1, D})
		in := []*ir.Tensor{q, k, v, ps}
		for _, workers := range sh.workerRuns {
			spec := &nodeSpec{n: node("KVAttention", nil, in), pool: poolFor(workers)}
			for _, t := range in {
				spec.in = append(spec.in, arg{dt: t.DType, shape: t.Shape, ok: true})
			}
			spec.out = []arg{{dt: y.DType, shape: y.Shape, ok: true}}
			kern := build("KVAttention", spec)
			if kern == nil {
				b.Fatal("no KVAttention kernel")
			}
			scratch := ir.AlignedBytes(spec.scratch)
			bytes := 2 * sh.Hkv * (sh.pos + 1) * D * 2
			for _, cold := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/pos=%d/t=%d/cold=%v", sh.name, sh.pos+1, workers, cold), func(b *testing.B) {
					b.SetBytes(bytes)
					pool := poolFor(workers)
					for b.Loop() {
						if cold {
							b.StopTimer()
							pool.Run(len(sums), func(c int) {
								var s byte
								for i := c * chunk; i < (c+1)*chunk; i += 64 {
									s += evict[i]
								}
								sums[c] = s
							})
							b.StartTimer()
						}
						if err := kern(in, []*ir.Tensor{y}, scratch); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
