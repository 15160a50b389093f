package kernels

import "sync/atomic"

// Regions runs a batch's tasks so that each worker streams through memory
// in one direction: tasks [0, n) are split into one contiguous region per
// worker, each worker runs its own region's tasks in ascending order, and
// a worker that runs out steals from the back of the other regions. A
// streaming kernel (the decode GEMV) whose tasks are consecutive stretches
// of weights then reads long sequential runs per core, so that its
// software prefetch ahead of the loads lands in its own next task instead
// of another core's; plain index order interleaves the workers' tasks.
//
// Every task runs exactly once, whichever worker takes it. A Regions is
// reused between batches (no allocation once its regions have grown) and
// must not run two batches at once.
type Regions struct {
	t   Tasker
	cur []regionCursor
}

// regionCursor is one region's unclaimed tasks [front, back), packed as
// front<<32 | back, on its own cache line.
type regionCursor struct {
	fb atomic.Uint64
	_  [56]byte
}

// Run runs t.Task(worker, i) for every i in [0, tasks) on pool in region
// order and returns when all have returned. The pool gets one task per
// worker, each of which claims the region's tasks until none are left
// anywhere: the workers' claims touch their own region's cursor, not a
// counter both cores fight over (on a VM whose two vCPUs may sit on
// different dies, a contended atomic costs a few hundred ns, and a
// 9 MB decode GEMV has over a hundred tasks).
func (r *Regions) Run(pool *Pool, tasks int, t Tasker) { r.run(pool, tasks, t, false) }

// RunStream is Run for a batch whose memory follows that of the previous
// RunStream batch on the same pool, as a decode step's weights follow one
// another in the file: the worker that ran the previous batch's last
// region runs this batch's first, so that the prefetches it issued past
// the end of the previous weights land in its own next task; otherwise
// one core would start every batch without data in flight and the other
// would have fetched that data for nothing.
func (r *Regions) RunStream(pool *Pool, tasks int, t Tasker) { r.run(pool, tasks, t, true) }

func (r *Regions) run(pool *Pool, tasks int, t Tasker, stream bool) {
	if tasks <= 0 {
		return
	}
	w := pool.Workers()
	if w == 1 || tasks == 1 {
		for i := 0; i < tasks; i++ {
			t.Task(0, i)
		}
		return
	}
	w = min(w, tasks)
	if cap(r.cur) < w {
		r.cur = make([]regionCursor, w)
	}
	r.cur = r.cur[:w]
	start := 0
	if stream {
		start = int(pool.streamStart.Load()) % w
		pool.streamStart.Store(uint32((start + w - 1) % w))
	}
	for k := 0; k < w; k++ { // region k belongs to worker start+k
		lo, hi := k*tasks/w, (k+1)*tasks/w
		r.cur[(start+k)%w].fb.Store(uint64(lo)<<32 | uint64(hi))
	}
	r.t = t
	pool.RunTasks(w, r)
	r.t = nil
}

// Task runs tasks until none is left: the worker's own region's from the
// front, then the other regions' from the back. Whichever goroutine runs
// it, and however many of them, every task runs exactly once.
func (r *Regions) Task(worker, _ int) {
	w := len(r.cur)
	worker %= w
	for {
		i, ok := r.claim(worker, w)
		if !ok {
			return
		}
		r.t.Task(worker, i)
	}
}

// claim takes one unclaimed task for worker, or reports that none is left.
func (r *Regions) claim(worker, w int) (int, bool) {
	for k := 0; k < w; k++ {
		c := &r.cur[(worker+k)%w].fb
		for {
			v := c.Load()
			f, b := v>>32, v&(1<<32-1)
			if f >= b {
				break // a region once empty stays empty
			}
			if k == 0 {
				if c.CompareAndSwap(v, (f+1)<<32|b) {
					return int(f), true
				}
			} else if c.CompareAndSwap(v, f<<32|(b-1)) {
				return int(b - 1), true
			}
		}
	}
	return 0, false
}
