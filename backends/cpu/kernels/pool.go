package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Tasker is a unit of parallel work: Task(worker, i) runs task i on the
// given worker (0 <= worker < Pool.Workers()). Passing a pointer that is
// reused between calls keeps Pool.RunTasks free of allocations.
type Tasker interface {
	Task(worker, i int)
}

// funcTasker adapts a func(i int) to Tasker. A func value is pointer-shaped,
// so converting it to an interface does not allocate.
type funcTasker func(i int)

func (f funcTasker) Task(_, i int) { f(i) }

// spinIters is how many polls a worker makes for new work before parking
// (about 120µs on a 2020s x86 core): long enough to bridge back-to-back
// kernels and the short serial stretches between them (a norm, RoPE, an
// attention head's tail) without a wake-up, short enough not to burn a
// core for long between runs. A parked worker costs the next batch a
// wake-up (tens to hundreds of µs on a VM, whose idle vCPU the host
// deschedules) during which the caller works alone. Measured on two free
// cores against 1<<16 (about 30µs), each in alternating runs: ResNet-50
// 17.6 → 16.9 ms, BERT-4l 20.2 → 19.2 ms, 110M Q4_0 decode 583–705 →
// 752–774 tok/s. At 1<<14 over a third of ResNet-18's batches found
// their worker parked. On a machine with fewer free cores than threads a
// spinning worker takes a core from the caller, so the spin stays bounded.
const spinIters = 1 << 18

// waitSpins is how many polls the caller makes for the last tasks of its
// batch (run by workers) before it blocks until the last one ends (about
// 120µs, as spinIters): a worker descheduled mid-task by the OS then gets
// the core instead of a spinning caller. Blocking puts a wake-up on the
// critical path, so the spin covers the usual tail of a batch; at 1<<13
// (about 4µs) the caller blocked in a third of ResNet-18's batches at 2
// threads.
const waitSpins = 1 << 18

// The batch word packs the task count and the next task index, so that one
// atomic add both claims an index and says which batch's count bounds it.
const (
	idxBits  = 32
	idxMask  = 1<<idxBits - 1
	maxBatch = 1<<31 - 1 // tasks per batch; larger runs go in several batches
)

// Pool is a fixed set of persistent workers that run tasks handed out by
// index from an atomic counter. The calling goroutine works too, so a Pool
// of n workers starts n-1 goroutines. Run does not allocate.
//
// Completion is counted per task, not per worker: a batch is done when all
// of its tasks have returned, whichever goroutine ran them, so a worker
// that the OS has descheduled (a busy machine) never holds up a batch it
// did not take a task of. Idle workers spin briefly, then park on a
// channel; the caller spins briefly for the tasks workers still run, then
// blocks until the last one signals. Nobody calls runtime.Gosched.
//
// A Pool runs one batch at a time: a Run that finds the pool busy (another
// goroutine's batch, or a nested Run from inside a task) runs its tasks
// serially on the calling goroutine instead of waiting.
type Pool struct {
	n  int
	mu sync.Mutex // held for the duration of a batch

	// batch is tasks<<idxBits | next task index of the current batch.
	batch atomic.Uint64
	_     [56]byte
	done  atomic.Int64 // tasks of the current batch that have returned
	_     [56]byte

	t Tasker // the current batch's tasks; stable while any is unclaimed or running

	// waiting is 1 while the caller is blocked on finished for the last
	// running task; the goroutine that ends it swaps it to 0 and sends.
	waiting  atomic.Int32
	finished chan struct{}

	workers []*worker
	closed  atomic.Bool
	wg      sync.WaitGroup

	// Region batches (regions.go): one slot per worker, the total of
	// region tasks published so far (what the slots' done counts sum to
	// once the current batch has ended), and the worker that runs the
	// first region of the next RunStream batch (the one that ran the last
	// region of the previous one; read and written under mu).
	slots        []regionSlot
	_            [64]byte // regionTarget, written every region batch, apart from closed
	regionTarget atomic.Uint64
	streamStart  int
}

type worker struct {
	sleeping atomic.Int32
	wake     chan struct{}
	_        [48]byte // keep workers' flags on separate cache lines
}

// NewPool starts a pool of n workers (n <= 0 means runtime.GOMAXPROCS(0)).
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{n: n, finished: make(chan struct{}, 1), slots: make([]regionSlot, n)}
	for w := 1; w < n; w++ {
		wk := &worker{wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, wk)
		p.wg.Add(1)
		go p.loop(w, wk)
	}
	return p
}

var (
	defaultPool     *Pool
	defaultPoolOnce sync.Once
)

// Default returns a process-wide pool with GOMAXPROCS workers, started on
// first use.
func Default() *Pool {
	defaultPoolOnce.Do(func() { defaultPool = NewPool(0) })
	return defaultPool
}

// Workers returns the number of workers, the caller included.
func (p *Pool) Workers() int {
	if p == nil {
		return 1
	}
	return p.n
}

// Run calls fn(i) for every i in [0, tasks), spread over the workers, and
// returns when all calls have returned. A nil Pool runs serially.
func (p *Pool) Run(tasks int, fn func(i int)) {
	p.RunTasks(tasks, funcTasker(fn))
}

// RunTasks calls t.Task(worker, i) for every i in [0, tasks), spread over
// the workers, and returns when all calls have returned.
func (p *Pool) RunTasks(tasks int, t Tasker) {
	if tasks <= 0 {
		return
	}
	if p == nil || p.n == 1 || tasks == 1 || p.closed.Load() || !p.mu.TryLock() {
		for i := 0; i < tasks; i++ {
			t.Task(0, i)
		}
		return
	}
	for off := 0; off < tasks; off += maxBatch {
		if off == 0 && tasks <= maxBatch {
			p.batchRun(tasks, t)
			break
		}
		// Very large runs (never the kernels' sizes): batches of maxBatch
		// with the index offset; this path may allocate.
		o := off
		p.batchRun(min(maxBatch, tasks-off), offsetTasker{t, o})
	}
	p.mu.Unlock()
}

// offsetTasker runs task i of a batch as task off+i of t.
type offsetTasker struct {
	t   Tasker
	off int
}

func (o offsetTasker) Task(w, i int) { o.t.Task(w, o.off+i) }

// batchRun publishes one batch of tasks (at most maxBatch), works on it and
// returns when every task has returned. p.mu is held.
func (p *Pool) batchRun(tasks int, t Tasker) {
	p.t = t
	p.done.Store(0)
	p.batch.Store(uint64(tasks) << idxBits) // publishes t and done to whoever claims an index
	p.wake(len(p.workers))
	p.work(0)
	// Every task is claimed; wait for the ones workers still run.
	p.await(false, uint64(tasks))
	p.t = nil
}

// await returns once the current batch has ended: every task counted done
// (the region slots' counts summing to want for a region batch, the done
// counter reaching want otherwise). It spins waitSpins polls, then blocks
// until the goroutine that ends the last task signals finished.
func (p *Pool) await(region bool, want uint64) {
	ended := func() bool {
		if region {
			return p.regionDone() == want
		}
		return uint64(p.done.Load()) == want
	}
	for spins := 0; !ended(); spins++ {
		if spins < waitSpins {
			continue
		}
		p.waiting.Store(1)
		if ended() {
			if p.waiting.CompareAndSwap(1, 0) {
				return
			}
			<-p.finished // the last task's goroutine took the flag and is sending
			return
		}
		<-p.finished
		return
	}
}

// wake wakes those of the first k workers (workers 1..k) that are parked.
func (p *Pool) wake(k int) {
	for _, wk := range p.workers[:k] {
		if wk.sleeping.Load() == 1 && wk.sleeping.CompareAndSwap(1, 0) {
			wk.wake <- struct{}{}
		}
	}
}

// work claims and runs tasks of the current batch until none are left. It
// reports whether it ran any.
func (p *Pool) work(w int) bool {
	ran := false
	for {
		b := p.batch.Add(1) - 1
		i, n := b&idxMask, b>>idxBits
		if i >= n {
			return ran
		}
		// A valid claim: the batch cannot end, nor t change, before this
		// task is counted done.
		p.t.Task(w, int(i))
		ran = true
		if p.done.Add(1) == int64(n) && p.waiting.Load() == 1 && p.waiting.CompareAndSwap(1, 0) {
			p.finished <- struct{}{}
		}
	}
}

// available reports whether the current batch has unclaimed tasks.
func (p *Pool) available() bool {
	b := p.batch.Load()
	return b&idxMask < b>>idxBits
}

// loop is a worker goroutine: wait for unclaimed tasks, work, repeat.
func (p *Pool) loop(w int, wk *worker) {
	defer p.wg.Done()
	slot := &p.slots[w]
	for {
		spun := true
		for i := 0; ; i++ {
			if p.available() || slot.pending() || p.closed.Load() {
				break
			}
			if i < spinIters {
				continue
			}
			// Park. The runner wakes us only if it sees sleeping == 1; if a
			// batch was published meanwhile, take the flag back ourselves.
			spun = false
			wk.sleeping.Store(1)
			if p.available() || slot.pending() || p.closed.Load() {
				if !wk.sleeping.CompareAndSwap(1, 0) {
					<-wk.wake // the runner claimed the flag and is sending
				}
				break
			}
			<-wk.wake
			i = 0 // look again: a wake-up proves nothing by itself
		}
		if p.closed.Load() {
			return
		}
		if p.available() { // (an idle claim would take the batch word's line from the caller)
			p.work(w)
		}
		if spun && slot.pending() {
			slot.notePickup()
		}
		p.regionWork(w)
	}
}

// Close stops the workers. Run after Close runs serially.
func (p *Pool) Close() {
	if p == nil || p.closed.Swap(true) {
		return
	}
	p.mu.Lock()
	for _, wk := range p.workers {
		if wk.sleeping.CompareAndSwap(1, 0) {
			wk.wake <- struct{}{}
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}
