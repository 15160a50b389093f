package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolRunsEveryTaskOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		p := NewPool(workers)
		for _, tasks := range []int{0, 1, 2, 7, 100, 1000} {
			hits := make([]atomic.Int32, tasks)
			for rep := 0; rep < 20; rep++ {
				p.Run(tasks, func(i int) { hits[i].Add(1) })
			}
			for i := range hits {
				if h := hits[i].Load(); h != 20 {
					t.Fatalf("workers=%d tasks=%d: task %d ran %d times, want 20", workers, tasks, i, h)
				}
			}
		}
		p.Close()
		// After Close, Run still works (serially).
		n := 0
		p.Run(5, func(int) { n++ })
		if n != 5 {
			t.Fatalf("Run after Close ran %d tasks", n)
		}
	}
}

type countTasker struct {
	n       atomic.Int64
	workers [16]atomic.Int64
}

func (c *countTasker) Task(w, i int) { c.n.Add(int64(i)); c.workers[w].Add(1) }

func TestPoolWorkerIndexAndConcurrentRuns(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	var ct countTasker
	var wg sync.WaitGroup
	// Concurrent callers and nested Runs must not deadlock.
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 50; rep++ {
				p.RunTasks(64, &ct)
				p.Run(2, func(int) { p.RunTasks(3, &ct) })
			}
		}()
	}
	wg.Wait()
	want := int64(4 * 50 * (64*63/2 + 2*3))
	if got := ct.n.Load(); got != want {
		t.Fatalf("sum of task indices = %d, want %d", got, want)
	}
	for w := 4; w < len(ct.workers); w++ {
		if ct.workers[w].Load() != 0 {
			t.Fatalf("worker index %d out of range", w)
		}
	}
}

func TestPoolRunDoesNotAllocate(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var sum atomic.Int64
	fn := func(i int) { sum.Add(int64(i)) }
	ct := &countTasker{}
	if a := testing.AllocsPerRun(200, func() { p.Run(16, fn) }); a != 0 {
		t.Errorf("Run allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(200, func() { p.RunTasks(16, ct) }); a != 0 {
		t.Errorf("RunTasks allocates %v times per call", a)
	}
}

func TestSgemmPackedDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	p := NewPool(2)
	defer p.Close()
	M, N, K := 20, 70, 300
	a, b, c := make([]float32, M*K), make([]float32, K*N), make([]float32, M*N)
	pb := PackB(b, N, K, N)
	SgemmPacked(p, M, a, K, pb, c, N, false) // warm the scratch pools
	if n := testing.AllocsPerRun(50, func() { SgemmPacked(p, M, a, K, pb, c, N, false) }); n != 0 {
		t.Errorf("SgemmPacked allocates %v times per call", n)
	}
}

// BenchmarkPoolRun measures the fixed cost of one Run with trivial tasks
// (the per-operator overhead at batch 1).
func BenchmarkPoolRun(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "w1", 2: "w2"}[w], func(b *testing.B) {
			p := NewPool(w)
			defer p.Close()
			var n atomic.Int64
			fn := func(i int) { n.Add(1) }
			for b.Loop() {
				p.Run(8, fn)
			}
		})
	}
}

// TestPoolStress runs many small batches back to back, so that workers
// keep crossing between spinning, parking and waking (a lost or stale
// wake-up shows up as a hang or a wrong count).
func TestPoolStress(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var n atomic.Int64
	fn := func(int) { n.Add(1) }
	want, reps := int64(0), 20000
	if raceEnabled || testing.Short() || runtime.GOARCH != "amd64" {
		reps = 2000 // the race detector and emulators (qemu) are slow
	}
	for rep := 0; rep < reps; rep++ {
		tasks := 2 + rep%5
		p.Run(tasks, fn)
		want += int64(tasks)
		if got := n.Load(); got != want {
			t.Fatalf("after batch %d: %d tasks ran, want %d", rep, got, want)
		}
	}
}

// slowWorkerTasker sleeps in tasks that a worker (not the caller) runs,
// long past the caller's spin, so that the caller blocks until the last
// task ends; done records every task's end.
type slowWorkerTasker struct {
	done    [4]atomic.Int32
	onOther atomic.Int32
}

func (s *slowWorkerTasker) Task(w, i int) {
	if w != 0 {
		s.onOther.Add(1)
		time.Sleep(2 * time.Millisecond)
	} else {
		time.Sleep(200 * time.Microsecond) // leave the worker tasks to take
	}
	s.done[i].Add(1)
}

// TestPoolWaitsForSlowWorkerTasks: a batch returns only after tasks that
// workers still run have ended (the caller's blocking wait), every task
// once, and the next batch starts clean.
func TestPoolWaitsForSlowWorkerTasks(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	other := 0
	for rep := 0; rep < 50; rep++ {
		var s slowWorkerTasker
		p.RunTasks(len(s.done), &s)
		for i := range s.done {
			if d := s.done[i].Load(); d != 1 {
				t.Fatalf("rep %d: task %d ended %d times when RunTasks returned, want 1", rep, i, d)
			}
		}
		other += int(s.onOther.Load())
	}
	t.Logf("%d tasks ran on the worker", other)
}

// TestPoolCallerDoesNotWaitForIdleWorkers: with workers that never get to
// run (GOMAXPROCS 1 and a caller that does not yield), batches still end:
// completion counts tasks, not worker acknowledgements.
func TestPoolCallerDoesNotWaitForIdleWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := NewPool(4)
	defer p.Close()
	var n atomic.Int64
	for rep := 0; rep < 1000; rep++ {
		p.Run(3, func(int) { n.Add(1) })
	}
	if n.Load() != 3000 {
		t.Fatalf("%d tasks ran, want 3000", n.Load())
	}
}
