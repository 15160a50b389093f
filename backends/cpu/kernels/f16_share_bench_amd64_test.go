//go:build amd64 && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftrt/weft/internal/hugemem"
	"github.com/weftrt/weft/internal/membw"
	"github.com/weftrt/weft/ir"
)

// BenchmarkF16ReadShare is the f16 decode GEMV's streaming rate as a
// share of the read probe's, the two measured turn about as in
// BenchmarkQ4ReadShare (readShareRounds): each round runs one HalfMatMul
// of one activation row over 256 MB of cold f16 weights on huge pages
// (rows of K, the threads' pool splitting them as in a decode step), then
// one pass of the probe (membw's widest vector reader over its own
// 256 MB, same threads: shareReader); the share is the median over
// rounds of the GEMV's rate against the faster of the probe passes either
// side of it.
func BenchmarkF16ReadShare(b *testing.B) {
	reader := shareReader(b)
	var slabs hugemem.Slabs
	for _, threads := range []int{1, 2} {
		pool := NewPool(threads)
		probe := membw.NewProber(threads)
		for _, K := range []int{768, 2048} {
			rb := 2 * K
			rows := (256 << 20) / rb
			r := rand.New(rand.NewPCG(1, 2))
			piece, err := slabs.Alloc(rows * rb)
			if err != nil {
				b.Fatal(err)
			}
			w := piece.B
			// A random 8 KiB of f16 values repeated: the values do not
			// change the speed.
			var h [4096]uint16
			for i := range h {
				h[i] = ir.F32ToF16(float32(r.NormFloat64()))
			}
			for i := 0; i < rows*K; i++ {
				v := h[i%len(h)]
				w[2*i], w[2*i+1] = byte(v), byte(v>>8)
			}
			x := randFloats(r, K)
			y := make([]float32, rows)
			pass := func() time.Duration {
				t0 := time.Now()
				if err := HalfMatMul(pool, ir.Float16, w, rows, K, x, K, 1, y, rows); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			b.Run(fmt.Sprintf("K%d/t=%d", K, threads), func(b *testing.B) {
				readShareRounds(b, probe, reader, rows*rb, []string{"f16"}, func(int) time.Duration { return pass() })
			})
			piece.Free()
		}
		pool.Close()
	}
}
