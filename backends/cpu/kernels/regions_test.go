package kernels

import (
	"fmt"
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
// workers, and checks that every task ran exactly
// once.
func TestRegionsEveryTaskOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 4} {
		p := NewPool(workers)
		for _, n := range []int{0, 1, 2, 3, 5, 8, 17, 64, 1000} {
			for rep := 0; rep < 20; rep++ {
				c := &regionCounter{runs: make([]atomic.Int32, n), by: make([]atomic.Int32, n)}
				if rep%2 == 0 {
					p.RunRegions(n, c)
				} else {
					p.RunStream(n, c)
				}
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
	var order []int
	p.RunRegions(6, funcTasker(func(i int) { order = append(order, i) }))
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v, want 0..5", order)
		}
	}
	if len(order) != 6 {
		t.Fatalf("ran %d tasks, want 6", len(order))
	}
}

// firstOfCaller records the first task the calling goroutine (worker 0)
// runs in a batch.
type firstOfCaller struct{ first atomic.Int32 }

func (c *firstOfCaller) Task(w, i int) {
	if w == 0 {
		c.first.CompareAndSwap(-1, int32(i))
	}
}

// TestRegionsStreamHandsOver: consecutive RunStream batches on two workers
// swap the regions' owners, so that the worker that ran a batch's last
// region runs the next batch's first: the caller starts at task 0, then at
// the second region's front, and so on; Run always starts it at task 0.
func TestRegionsStreamHandsOver(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for b := 0; b < 6; b++ {
		c := &firstOfCaller{}
		c.first.Store(-1)
		want := int32(4 * (b % 2))
		p.RunStream(8, c)
		if got := c.first.Load(); got != want {
			t.Fatalf("RunStream batch %d: the caller started at task %d, want %d", b, got, want)
		}
		c.first.Store(-1)
		p.RunRegions(8, c)
		if got := c.first.Load(); got != 0 {
			t.Fatalf("Run after batch %d: the caller started at task %d, want 0", b, got)
		}
	}
}

// spinTasker does a fixed amount of arithmetic per task, on private data.
type spinTasker struct {
	n   int
	out [8]struct {
		v uint64
		_ [56]byte
	}
}

func (s *spinTasker) Task(w, i int) {
	x := uint64(i) + 1
	for k := 0; k < s.n; k++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	s.out[w].v += x
}

// BenchmarkRegionsBatch measures one region batch of 16 short tasks on
// two workers (a decode step runs about 60 of them a token), against the
// same tasks run serially: the difference is the batch's fixed cost.
func BenchmarkRegionsBatch(b *testing.B) {
	for _, work := range []int{0, 200} {
		t := &spinTasker{n: work}
		b.Run(fmt.Sprintf("serial/work%d", work), func(b *testing.B) {
			for b.Loop() {
				for i := 0; i < 16; i++ {
					t.Task(0, i)
				}
			}
		})
		b.Run(fmt.Sprintf("w2/work%d", work), func(b *testing.B) {
			p := NewPool(2)
			defer p.Close()
			for b.Loop() {
				p.RunStream(16, t)
			}
		})
	}
}
