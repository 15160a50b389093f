package kernels

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestZZPoolStress(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var progress atomic.Int64
	go func() {
		last := int64(-1)
		for {
			time.Sleep(3 * time.Second)
			cur := progress.Load()
			if cur == last {
				fmt.Fprintf(os.Stderr, "STUCK: gen=%d next=%d tasks=%d", p.gen.Load(), p.next.Load(), p.tasks)
				for i, wk := range p.workers {
					fmt.Fprintf(os.Stderr, " w%d sleeping=%d chan=%d doneGen=%d", i+1, wk.sleeping.Load(), len(wk.wake), wk.doneGen.Load())
				}
				fmt.Fprintln(os.Stderr)
				os.Exit(3)
			}
			last = cur
		}
	}()
	var n atomic.Int64
	fn := func(i int) {
		n.Add(1)
	}
	for rep := 0; rep < 200000; rep++ {
		p.Run(2+rep%5, fn)
		progress.Add(1)
		if rep%1000 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
}
