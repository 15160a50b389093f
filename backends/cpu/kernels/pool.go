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
// (a few tens of microseconds): short enough not to burn a core between
// operators, long enough to bridge back-to-back kernels without a wake-up.
const spinIters = 1 << 14

// Pool is a fixed set of persistent workers that run tasks handed out by
// index from an atomic counter. The calling goroutine works too, so a Pool
// of n workers starts n-1 goroutines. Workers spin briefly after a batch
// and then park on a channel. Run does not allocate.
//
// A Pool runs one batch at a time: a Run that finds the pool busy (another
// goroutine's batch, or a nested Run from inside a task) runs its tasks
// serially on the calling goroutine instead of waiting.
type Pool struct {
	n    int
	mu   sync.Mutex // held for the duration of a batch
	gen  atomic.Uint64
	next atomic.Int64 // next task index

	tasks int
	t     Tasker

	workers []*worker
	closed  atomic.Bool
	wg      sync.WaitGroup
}

type worker struct {
	sleeping atomic.Int32
	doneGen  atomic.Uint64 // the last batch (gen) this worker finished
	wake     chan struct{}
	_        [40]byte // keep workers' flags on separate cache lines
}

// NewPool starts a pool of n workers (n <= 0 means runtime.GOMAXPROCS(0)).
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{n: n}
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
	p.tasks, p.t = tasks, t
	p.next.Store(0)
	g := p.gen.Add(1) // publishes tasks and t to the workers
	for _, wk := range p.workers {
		if wk.sleeping.CompareAndSwap(1, 0) {
			wk.wake <- struct{}{}
		}
	}
	p.work(0)
	// Wait for every worker to finish this batch, so that the next batch
	// can reset the counter and the task safely.
	for _, wk := range p.workers {
		for spins := 0; wk.doneGen.Load() != g; spins++ {
			if spins > 64 {
				runtime.Gosched()
			}
		}
	}
	p.t = nil
	p.mu.Unlock()
}

// work runs tasks of the current batch until none are left.
func (p *Pool) work(w int) {
	n := int64(p.tasks)
	for {
		i := p.next.Add(1) - 1
		if i >= n {
			return
		}
		p.t.Task(w, int(i))
	}
}

// loop is a worker goroutine: wait for a new batch, work, report done.
func (p *Pool) loop(w int, wk *worker) {
	defer p.wg.Done()
	var seen uint64 // gen is 0 when the pool starts; a batch may be published before this goroutine runs
	for {
		for i := 0; ; i++ {
			if g := p.gen.Load(); g != seen {
				seen = g
				break
			}
			if i < spinIters {
				continue
			}
			// Park. The runner wakes us only if it sees sleeping == 1; if a
			// batch was published meanwhile, take the flag back ourselves.
			wk.sleeping.Store(1)
			if g := p.gen.Load(); g != seen {
				if !wk.sleeping.CompareAndSwap(1, 0) {
					<-wk.wake // the runner claimed the flag and is sending
				}
				seen = g
				break
			}
			<-wk.wake
			i = 0 // look at gen again: a wake-up proves nothing by itself
		}
		if p.closed.Load() {
			return
		}
		p.work(w)
		wk.doneGen.Store(seen)
	}
}

// Close stops the workers. Run after Close runs serially.
func (p *Pool) Close() {
	if p == nil || p.closed.Swap(true) {
		return
	}
	p.mu.Lock()
	p.gen.Add(1)
	for _, wk := range p.workers {
		if wk.sleeping.CompareAndSwap(1, 0) {
			wk.wake <- struct{}{}
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}
