package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Session runs one plan. Run and RunInto are safe for concurrent use.
//
// Each run borrows a run state from the session's pool: one arena per
// device (plan.Arenas, allocated with Device.Alloc when the state is made)
// and the devices' per-run executable states. Concurrent runs get distinct
// states; sequential runs reuse one, so after the first run nothing is
// allocated for intermediates.
type Session struct {
	plan    *plan.Plan
	exes    []backends.Executable
	consts  *backends.Env
	inputs  []*ir.Value
	outputs []*ir.Value
	outName []string
	// produced[i] reports whether a top-level node computes output i (so
	// that a destination tensor can be bound for it before a run).
	produced []bool
	// arenaDev[a] is the device of plan arena a when some partition runs
	// into it, nil otherwise (no allocation needed).
	arenaDev []backends.Device
	partDev  []int // per partition: its arena index, or -1

	mu     sync.Mutex
	free   []*runState
	closed bool
}

// runState is the storage of one run.
type runState struct {
	env    *backends.Env
	arenas []backends.Buffer
	states []backends.ExecState // per partition; nil for stateless executables
}

// NewSession compiles every partition of p on its device (through
// backends.PlanCompiler when the device offers it, so the partition runs
// into the plan's arena).
func NewSession(p *plan.Plan, devices []backends.Device) (*Session, error) {
	byName := map[string]backends.Device{}
	for _, d := range devices {
		byName[d.Name()] = d
	}
	s := &Session{plan: p, consts: backends.NewEnv(nil), inputs: p.Graph.Inputs, outputs: p.Graph.Outputs}
	arenaOf := map[string]int{}
	for i, a := range p.Arenas {
		arenaOf[a.Device] = i
	}
	s.arenaDev = make([]backends.Device, len(p.Arenas))
	for _, part := range p.Partitions {
		d, ok := byName[part.Device]
		if !ok {
			return nil, fmt.Errorf("runtime: partition %d wants device %q, which is not available", part.Index, part.Device)
		}
		var exe backends.Executable
		var err error
		if pc, ok := d.(backends.PlanCompiler); ok {
			exe, err = pc.CompilePlanned(p, part)
		} else {
			exe, err = d.Compile(part)
		}
		if err != nil {
			return nil, fmt.Errorf("runtime: compile partition %d on %s: %w", part.Index, part.Device, err)
		}
		s.exes = append(s.exes, exe)
		a, hasArena := arenaOf[part.Device]
		if _, stateful := exe.(backends.StatefulExecutable); stateful && hasArena {
			s.arenaDev[a] = d
		} else {
			a = -1
		}
		s.partDev = append(s.partDev, a)
	}
	for _, c := range p.Graph.Consts {
		s.consts.Set(c, c.Const)
	}
	s.outName = OutputNames(p.Graph)
	s.produced = make([]bool, len(s.outputs))
	for i, o := range s.outputs {
		s.produced[i] = o != nil && o.Producer != nil && o.Graph == p.Graph
	}
	return s, nil
}

// OutputNames returns the names under which Run reports the graph outputs:
// the value's name, or "output_K" when it has none or repeats one.
func OutputNames(g *ir.Graph) []string {
	names := make([]string, len(g.Outputs))
	seen := map[string]bool{}
	for i, o := range g.Outputs {
		name := o.Name
		if name == "" || seen[name] {
			name = fmt.Sprintf("output_%d", i)
		}
		seen[name] = true
		names[i] = name
	}
	return names
}

// Plan returns the plan the session runs.
func (s *Session) Plan() *plan.Plan { return s.plan }

// Inputs returns the graph inputs, in order.
func (s *Session) Inputs() []*ir.Value { return s.inputs }

// Outputs returns the graph outputs, in order.
func (s *Session) Outputs() []*ir.Value { return s.outputs }

// Run executes the plan on named inputs and returns the named outputs,
// which the caller owns (they are allocated by this call). Intermediates
// live in the session's arenas and are not allocated again after the first
// run; use RunInto to avoid allocating the outputs too.
func (s *Session) Run(ctx context.Context, inputs map[string]*ir.Tensor) (map[string]*ir.Tensor, error) {
	st, err := s.get()
	if err != nil {
		return nil, err
	}
	defer s.put(st)
	if err := s.bind(st.env, inputs); err != nil {
		return nil, err
	}
	for i, o := range s.outputs {
		if s.produced[i] {
			st.env.Set(o, nil) // no destination: the devices allocate
		}
	}
	if err := s.exec(ctx, st); err != nil {
		return nil, err
	}
	out := make(map[string]*ir.Tensor, len(s.outputs))
	for i, o := range s.outputs {
		t := st.env.Get(o)
		if t == nil {
			return nil, fmt.Errorf("runtime: output %q was not computed", s.outName[i])
		}
		out[s.outName[i]] = t
	}
	return out, nil
}

// RunInto executes the plan on inputs given in the order of Inputs and
// writes the results into outputs, caller-owned tensors given in the order
// of Outputs whose dtype and shape must match what the model computes.
// After the first call on a session (which allocates the arenas and the
// run state), a RunInto that does not run concurrently with another run
// allocates nothing, provided every node has a planned kernel on its device
// (see the device's documentation; other nodes still allocate their
// results). Inputs are only read, except a cache that the graph's
// KVCacheUpdate ops write in place (ir/ops.go): state the caller owns.
func (s *Session) RunInto(ctx context.Context, inputs, outputs []*ir.Tensor) error {
	if len(inputs) != len(s.inputs) {
		return fmt.Errorf("runtime: RunInto got %d inputs, the model takes %d (%s)", len(inputs), len(s.inputs), inputList(s.inputs))
	}
	if len(outputs) != len(s.outputs) {
		return fmt.Errorf("runtime: RunInto got %d output tensors, the model has %d outputs", len(outputs), len(s.outputs))
	}
	st, err := s.get()
	if err != nil {
		return err
	}
	defer s.put(st)
	for i, v := range s.inputs {
		t := inputs[i]
		if t == nil {
			return fmt.Errorf("runtime: RunInto: input %q is nil", v.Name)
		}
		if err := CheckInput(v, t); err != nil {
			return err
		}
		st.env.Set(v, t)
	}
	for i, o := range s.outputs {
		if outputs[i] == nil {
			return fmt.Errorf("runtime: RunInto: output tensor %q is nil", s.outName[i])
		}
		if s.produced[i] {
			st.env.Set(o, outputs[i])
		}
	}
	if err := s.exec(ctx, st); err != nil {
		return err
	}
	for i, o := range s.outputs {
		t, dst := st.env.Get(o), outputs[i]
		if t == nil {
			return fmt.Errorf("runtime: output %q was not computed", s.outName[i])
		}
		if t == dst {
			continue
		}
		if t.DType != dst.DType || !slices.Equal(t.Shape, dst.Shape) || len(t.Data) != len(dst.Data) {
			return fmt.Errorf("runtime: output %q is %v, the caller's tensor is %v", s.outName[i], t, dst)
		}
		copy(dst.Data, t.Data)
	}
	return nil
}

// exec runs every partition in order in st.
func (s *Session) exec(ctx context.Context, st *runState) error {
	tr := backends.TracerFrom(ctx)
	if tr != nil {
		return s.execTraced(ctx, tr, st)
	}
	for i, exe := range s.exes {
		var err error
		if st.states[i] != nil {
			err = st.states[i].Run(ctx, st.env)
		} else {
			err = exe.Run(ctx, st.env)
		}
		if err != nil {
			part := s.plan.Partitions[i]
			return fmt.Errorf("runtime: partition %d on %s: %w", part.Index, part.Device, err)
		}
	}
	return nil
}

// get takes a run state from the pool, or makes one.
func (s *Session) get() (*runState, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("runtime: the session is closed")
	}
	if n := len(s.free); n > 0 {
		st := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return st, nil
	}
	s.mu.Unlock()
	st := &runState{env: backends.NewEnv(s.consts), arenas: make([]backends.Buffer, len(s.arenaDev)), states: make([]backends.ExecState, len(s.exes))}
	for a, d := range s.arenaDev {
		if d == nil {
			continue
		}
		ar := s.plan.Arenas[a]
		buf, err := d.Alloc(int(ar.Size))
		if err != nil {
			return nil, fmt.Errorf("runtime: allocate the %d-byte arena on %s: %w", ar.Size, ar.Device, err)
		}
		st.arenas[a] = buf
	}
	for i, exe := range s.exes {
		se, ok := exe.(backends.StatefulExecutable)
		if !ok {
			continue
		}
		var arena backends.Buffer
		if a := s.partDev[i]; a >= 0 {
			arena = st.arenas[a]
		}
		es, err := se.NewState(arena)
		if err != nil {
			part := s.plan.Partitions[i]
			return nil, fmt.Errorf("runtime: prepare partition %d on %s: %w", part.Index, part.Device, err)
		}
		st.states[i] = es
	}
	return st, nil
}

// Close releases what the session holds on its devices, deterministically
// rather than when the garbage collector gets to it: each run state's
// per-partition states and arenas, then the compiled executables (those
// that implement io.Closer; a GPU backend frees device memory, command
// buffers and descriptor pools there). No run may be in flight; runs after
// Close fail. Close may be called again.
func (s *Session) Close() error {
	s.mu.Lock()
	free, closed := s.free, s.closed
	s.free, s.closed = nil, true
	s.mu.Unlock()
	if closed {
		return nil
	}
	var errs []error
	for _, st := range free {
		for _, es := range st.states {
			if c, ok := es.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		for _, a := range st.arenas {
			if a != nil {
				a.Free()
			}
		}
	}
	for _, exe := range s.exes {
		if c, ok := exe.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// put returns a run state to the pool. The inputs' and outputs' bindings
// are dropped so that the state does not keep the caller's tensors alive.
func (s *Session) put(st *runState) {
	for _, v := range s.inputs {
		st.env.Set(v, nil)
	}
	for i, o := range s.outputs {
		if s.produced[i] {
			st.env.Set(o, nil)
		}
	}
	s.mu.Lock()
	s.free = append(s.free, st)
	s.mu.Unlock()
}

// bind checks the caller's inputs against the graph's declared inputs and
// stores them in env.
func (s *Session) bind(env *backends.Env, inputs map[string]*ir.Tensor) error {
	known := map[string]bool{}
	var missing []string
	for _, v := range s.inputs {
		known[v.Name] = true
		t, ok := inputs[v.Name]
		if !ok || t == nil {
			missing = append(missing, v.Name)
			continue
		}
		if err := CheckInput(v, t); err != nil {
			return err
		}
		env.Set(v, t)
	}
	var extra []string
	for name := range inputs {
		if !known[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		return fmt.Errorf("runtime: unknown input(s) %s (the model takes %s)", strings.Join(extra, ", "), inputList(s.inputs))
	}
	if len(missing) > 0 {
		return fmt.Errorf("runtime: missing input(s) %s (the model takes %s)", strings.Join(missing, ", "), inputList(s.inputs))
	}
	return nil
}

// CheckInput verifies that t fits the declared dtype and shape of input v
// (unknown and symbolic dims accept any size).
func CheckInput(v *ir.Value, t *ir.Tensor) error {
	if err := t.Check(); err != nil {
		return fmt.Errorf("runtime: input %q: %w", v.Name, err)
	}
	if v.DType.Valid() && t.DType != v.DType {
		return fmt.Errorf("runtime: input %q is %v, the model wants %v", v.Name, t.DType, v.DType)
	}
	if v.Shape != nil {
		ok := len(v.Shape) == len(t.Shape)
		for i := 0; ok && i < len(t.Shape); i++ {
			if d := v.Shape[i]; d.Known() && d.Size != t.Shape[i] {
				ok = false
			}
		}
		if !ok {
			return fmt.Errorf("runtime: input %q has shape %v, the model wants [%v]", v.Name, t.Shape, v.Shape)
		}
	}
	return nil
}

func inputList(vs []*ir.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s: %v[%v]", v.Name, v.DType, v.Shape)
	}
	return strings.Join(parts, ", ")
}
