//go:build amd64 && !noasm

package kernels

import (
	"fmt"
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
			piece, rows, rb, qa := coldQWeights(b, &slabs, ir.Q8_0, K, false)
			p := piece.B
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
					if err := QMatMul(pool, ir.Q8_0, p, rows, qa, y, rows); err != nil {
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
