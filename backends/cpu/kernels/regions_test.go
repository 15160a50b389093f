package kernels

import (
	"sync/atomic"
	"testing"
)

type regionCounter struct {
	runs []atomic.Int32
	by   []atomic.Int32 // worker that ran task i, plus one
}

func (c *regionCounter) Task(w, i int) {
	c.runs[i].Add(1)
	c.by[i].Store(int32(w) + 1)
}

// TestRegionsEveryTaskOnce runs batches of many sizes on pools of 1 to 4
// workers, reusing one Regions, and checks that every task ran exactly
// once.
func TestRegionsEveryTaskOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 4} {
		p := NewPool(workers)
		var r Regions
		for _, n := range []int{0, 1, 2, 3, 5, 8, 17, 64, 1000} {
			for rep := 0; rep < 20; rep++ {
				c := &regionCounter{runs: make([]atomic.Int32, n), by: make([]atomic.Int32, n)}
				r.Run(p, n, c)
				for i := range c.runs {
					if got := c.runs[i].Load(); got != 1 {
						t.Fatalf("%d workers, %d tasks: task %d ran %d times", workers, n, i, got)
					}
				}
			}
		}
		p.Close()
	}
}

// TestRegionsSerialOrder: with one worker (or the pool busy, which runs a
// batch on the caller) the tasks still all run, the own region in order.
func TestRegionsSerialOrder(t *testing.T) {
	p := NewPool(1)
	defer p.Close()
	var r Regions
	var order []int
	r.Run(p, 6, funcTasker(func(i int) { order = append(order, i) }))
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want 0..5", order)
		}
	}
	if len(order) != 6 {
		t.Fatalf("ran %d tasks, want 6", len(order))
	}
}
