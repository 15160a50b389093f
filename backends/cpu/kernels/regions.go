package kernels

import (
	"sync/atomic"
	"time"
)

// Region batches run a batch's tasks so that each worker streams through
// memory in one direction: tasks [0, n) are split into one contiguous
// region per worker, each worker runs its own region's tasks in ascending
// order, and a worker that runs out steals from the back of the other
// regions. A streaming kernel (the decode GEMV) whose tasks are
// consecutive stretches of weights then reads long sequential runs per
// core, so that its software prefetch ahead of the loads lands in its own
// next task instead of another core's; plain index order interleaves the
// workers' tasks.
//
// They are also the pool's cheapest batches, since a decode step runs
// about sixty of them a token and on a VM whose vCPUs sit on different
// dies every cache line that moves between cores costs some 300 ns. Each
// worker has one slot, a cache line of its own, that holds its region's
// unclaimed tasks, the batch's Tasker and the count of region tasks the
// worker has ever run. The caller publishes a batch by writing the slots;
// an idle worker polls its own slot, so the batch reaches it in one line
// transfer; it claims and counts its tasks on that line, which no other
// core touches unless it steals; and the caller learns that the batch is
// done by summing the counts, one line read per worker. There is no
// counter that every core updates, unlike Pool.RunTasks.
//
// Every task runs exactly once, whichever worker takes it, and a worker
// that the OS has descheduled holds up only the task it is running.

// regionSlot is one worker's part of the current region batch, on cache
// lines no other slot shares (its hot words come first and it spans two
// lines, so it needs no alignment).
type regionSlot struct {
	// fb is the region's unclaimed tasks [front, back), packed as
	// front<<32 | back; empty (front >= back) between batches.
	fb atomic.Uint64
	// done counts the region tasks this worker has run, in all batches.
	done atomic.Uint64
	// t is the batch's tasks. It is written before fb publishes a region
	// and read only after a claim succeeds: a successful claim proves its
	// batch has not ended, so t is not being rewritten.
	t Tasker
	// pub is when the caller published the region (monoNs), written with
	// t; lat is the worker's running mean of how long a published region
	// took to reach it while it spun (Pool.Far).
	pub atomic.Int64
	lat atomic.Int64
	_   [80]byte
}

// pending reports whether the slot's region has unclaimed tasks.
func (s *regionSlot) pending() bool {
	v := s.fb.Load()
	return v>>32 < v&(1<<32-1)
}

// RunRegions runs t.Task(worker, i) for every i in [0, tasks) on the pool
// in region order (above) and returns when all have returned. A nil Pool,
// or one busy with another batch, runs them serially in order.
func (p *Pool) RunRegions(tasks int, t Tasker) { p.runRegions(tasks, t, false) }

// RunStream is RunRegions for a batch whose memory follows that of the
// previous RunStream batch on the same pool, as a decode step's weights
// follow one another in the file: the worker that ran the previous
// batch's last region runs this batch's first, so that the prefetches it
// issued past the end of the previous weights land in its own next task;
// otherwise one core would start every batch without data in flight and
// the other would have fetched that data for nothing.
func (p *Pool) RunStream(tasks int, t Tasker) { p.runRegions(tasks, t, true) }

func (p *Pool) runRegions(tasks int, t Tasker, stream bool) {
	if tasks <= 0 {
		return
	}
	if p == nil || p.n == 1 || tasks == 1 || tasks > maxBatch || p.closed.Load() || !p.mu.TryLock() {
		for i := 0; i < tasks; i++ {
			t.Task(0, i)
		}
		return
	}
	w := min(p.n, tasks)
	start := 0
	if stream {
		start = p.streamStart % w
		p.streamStart = (start + w - 1) % w
	}
	// Every slot is empty (the previous batch ended), so only the slots of
	// workers with a region are written.
	target := p.regionTarget.Load() + uint64(tasks)
	p.regionTarget.Store(target)
	now := monoNs()
	for k := 0; k < w; k++ { // region k belongs to worker start+k
		lo, hi := k*tasks/w, (k+1)*tasks/w
		s := &p.slots[(start+k)%w]
		s.t = t
		s.pub.Store(now)
		s.fb.Store(uint64(lo)<<32 | uint64(hi))
	}
	p.wake(w - 1)
	p.regionWork(0)
	// Every task is claimed; wait for the ones workers still run.
	p.await(true, target)
	p.mu.Unlock()
}

// regionDone is the number of region tasks all workers have run.
func (p *Pool) regionDone() uint64 {
	var n uint64
	for i := range p.slots {
		n += p.slots[i].done.Load()
	}
	return n
}

// regionWork runs worker w's region's tasks from the front, then the other
// regions' from the back, until no task is left unclaimed.
func (p *Pool) regionWork(w int) {
	own := &p.slots[w]
	for {
		s, i, ok := p.regionClaim(w)
		if !ok {
			return
		}
		s.t.Task(w, i)
		own.done.Add(1)
		if p.waiting.Load() == 1 && p.regionDone() == p.regionTarget.Load() && p.waiting.CompareAndSwap(1, 0) {
			p.finished <- struct{}{}
		}
	}
}

// regionClaim claims one task for worker w, from its own region's front or
// another's back, and returns it with the slot it came from; ok is false
// when none is left.
func (p *Pool) regionClaim(w int) (s *regionSlot, i int, ok bool) {
	n := len(p.slots)
	for k := 0; k < n; k++ {
		s := &p.slots[(w+k)%n]
		for {
			v := s.fb.Load()
			f, b := v>>32, v&(1<<32-1)
			if f >= b {
				break // a region once empty stays empty until the batch ends
			}
			if k == 0 {
				if s.fb.CompareAndSwap(v, (f+1)<<32|b) {
					return s, int(f), true
				}
			} else if s.fb.CompareAndSwap(v, f<<32|(b-1)) {
				return s, int(b - 1), true
			}
		}
	}
	return nil, 0, false
}

// epoch is monoNs's origin.
var epoch = time.Now()

// monoNs is a monotonic clock in nanoseconds.
func monoNs() int64 { return int64(time.Since(epoch)) }

// notePickup records, for the slot's worker that was spinning when its
// region of a batch was published, how long the region took to reach it:
// about one cache-line transfer from the caller's core plus two clock
// reads (measured 115–180 ns between cores that share a cache, 320–350 ns
// across dies).
func (s *regionSlot) notePickup() { s.noteDelay(monoNs() - s.pub.Load()) }

// noteDelay folds one pickup time d (ns) into the slot's running mean,
// leaving out those of a descheduled worker (over 20 µs) and a clock that
// stepped back.
func (s *regionSlot) noteDelay(d int64) {
	if d <= 0 || d > 20000 { // descheduled: not a transfer time
		return
	}
	if m := s.lat.Load(); m != 0 {
		d = (7*m + d) / 8
	}
	s.lat.Store(d)
}

// farNs is the mean pickup time above which Pool.Far reports the workers
// on different dies.
const farNs = 250

// Far reports whether the pool's workers seem to sit on different dies
// (caches not shared): a region the caller publishes reaches a spinning
// worker in more than farNs on average.
func (p *Pool) Far() bool {
	if p == nil {
		return false
	}
	for i := 1; i < len(p.slots); i++ {
		if p.slots[i].lat.Load() > farNs {
			return true
		}
	}
	return false
}

// RestartStream makes the next RunStream batch's first region the first
// worker's again, as on the pool's first batch: each run of a plan then
// gives every worker the same regions of the same weights as the run
// before. An executor calls it as a run starts when the workers are Far:
// what each die's cache kept of its worker's regions then serves it again
// (a 62 MB model's two halves stay in two 32 MB L3s: Llama-110M Q4_0 at
// two threads decoded a token in a median 0.97 of the time over 11 ABBA
// rounds across dies, 0.87–1.09, and 0.75–0.78 in two earlier ones;
// Qwen2-0.5B, which no L3 holds, 0.93–1.00). On one shared
// cache it is better left alone: a step of an odd number of stream
// batches hands every region to the other worker on the next step, and
// that ran 2–12% faster there. A busy pool is left as it is.
func (p *Pool) RestartStream() {
	if p != nil && p.mu.TryLock() {
		p.streamStart = 0
		p.mu.Unlock()
	}
}
