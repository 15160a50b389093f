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

// BenchmarkQ8ReadShare is the Q8_0 decode GEMV's streaming rate as a
// share of the read probe's, measured turn about with it as in
// BenchmarkQ4ReadShare (readShareRounds): QMatMul of one activation row
// over 256 MB of cold Q8_0 rows ("rows": the many-rows kernel where the
// ISA has one), against the same tasks computed by one row dot product
// call per row, without prefetch ("dots": what QMatMul ran before).
func BenchmarkQ8ReadShare(b *testing.B) {
	reader := shareReader(b)
	var slabs hugemem.Slabs
	for _, threads := range []int{1, 2} {
		pool := NewPool(threads)
		probe := membw.NewProber(threads)
		for _, K := range []int{768, 2048} {
			nb := K / qBlock
			rb := nb * 34
			rows := (256 << 20) / rb
			r := rand.New(rand.NewPCG(1, 2))
			var qa QuantizedActs
			if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
				b.Fatal(err)
			}
			w, _ := randQWeights(r, ir.Q8_0, 1024, K)
			piece, err := slabs.Alloc(rows * rb)
			if err != nil {
				b.Fatal(err)
			}
			p := piece.B
			for i := 0; i < rows; i += 1024 {
				n := min(1024, rows-i)
				copy(p[i*rb:(i+n)*rb], w[:n*rb])
			}
			y := make([]float32, rows)
			dot := qDotFunc(ir.Q8_0, CurrentISA())
			tr := max(1, min((rows+4*pool.Workers()-1)/(4*pool.Workers()), qTaskBytes/rb))
			dots := taskFunc(func(t int) {
				for n := t * tr; n < min(rows, (t+1)*tr); n++ {
					y[n] = dot(nb, p[n*rb:(n+1)*rb], qa.qs, qa.d, qa.nsum)
				}
			})
			pass := func(i int) time.Duration {
				t0 := time.Now()
				if i == 0 {
					if err := QMatMul(pool, ir.Q8_0, p, rows, &qa, y, rows); err != nil {
						b.Fatal(err)
					}
				} else {
					pool.RunStream((rows+tr-1)/tr, dots)
				}
				return time.Since(t0)
			}
			b.Run(fmt.Sprintf("K%d/t=%d", K, threads), func(b *testing.B) {
				readShareRounds(b, probe, reader, rows*rb, []string{"rows", "dots"}, pass)
			})
			piece.Free()
		}
		pool.Close()
	}
}

// taskFunc is a Tasker of one function of the task index.
type taskFunc func(t int)

func (f taskFunc) Task(_, t int) { f(t) }
