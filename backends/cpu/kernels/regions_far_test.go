package kernels

import "testing"

// TestPoolFar checks the pickup-time mean that Far reads (samples of a
// descheduled worker left out) and that RestartStream gives the next
// stream batch's first region to the first worker again.
func TestPoolFar(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	s := &p.slots[1]
	s.lat.Store(0)
	if p.Far() {
		t.Fatal("Far with no pickup seen")
	}
	// The pickup times go in as numbers (noteDelay), not as clock
	// readings: under qemu, or on a loaded machine, the gap between two
	// clock reads can itself pass 20 µs.
	for i, tc := range []struct {
		d    int64 // ns from the publish to the pickup
		want int64 // the mean after it
	}{
		{100, 100},    // the first sample taken as it is
		{50_000, 100}, // a descheduled worker: left out
		{400, 137},    // the mean moves an eighth of the way: (7·100+400)/8
		{-1e9, 137},   // a clock step back: left out
	} {
		s.noteDelay(tc.d)
		if got := s.lat.Load(); got != tc.want {
			t.Errorf("sample %d (%d ns): mean %d, want %d", i, tc.d, got, tc.want)
		}
	}
	// notePickup measures from the slot's publish time.
	s.lat.Store(0)
	s.pub.Store(monoNs() - 1000)
	s.notePickup()
	if got := s.lat.Load(); got != 0 && got < 1000 {
		t.Errorf("a pickup 1000 ns after its publish recorded as %d ns", got)
	}
	s.lat.Store(farNs - 1)
	if p.Far() {
		t.Errorf("Far at a mean of %d ns", farNs-1)
	}
	s.lat.Store(farNs + 1)
	if !p.Far() {
		t.Errorf("not Far at a mean of %d ns", farNs+1)
	}
	var nilPool *Pool
	if nilPool.Far() {
		t.Error("a nil pool is Far")
	}
	nilPool.RestartStream()

	// Three stream batches move the first region round; RestartStream
	// brings it back to worker 0.
	for i := 0; i < 3; i++ {
		p.RunStream(8, taskerFunc(func(int, int) {}))
	}
	if p.streamStart == 0 {
		t.Fatal("the stream start did not move")
	}
	p.RestartStream()
	if p.streamStart != 0 {
		t.Errorf("after RestartStream the stream starts at worker %d", p.streamStart)
	}
}

type taskerFunc func(w, i int)

func (f taskerFunc) Task(w, i int) { f(w, i) }
