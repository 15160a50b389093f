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
	for i, tc := range []struct {
		ago     int64 // ns since the publish
		wantMin int64
		wantMax int64
	}{
		{100, 90, 1e6},    // the first sample taken as it is (the clock moves on)
		{50_000, 90, 1e6}, // a descheduled worker: left out
		{400, 130, 1e6},   // the mean moves an eighth of the way
		{-1e9, 130, 1e6},  // a clock step back: left out
	} {
		before := s.lat.Load()
		s.pub.Store(monoNs() - tc.ago)
		s.notePickup()
		got := s.lat.Load()
		if got < tc.wantMin || got > tc.wantMax {
			t.Errorf("sample %d (%d ns ago): mean %d, want in [%d, %d]", i, tc.ago, got, tc.wantMin, tc.wantMax)
		}
		if (tc.ago > 20000 || tc.ago <= 0) && got != before {
			t.Errorf("sample %d (%d ns ago) moved the mean from %d to %d", i, tc.ago, before, got)
		}
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
