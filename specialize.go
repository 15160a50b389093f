package weft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/ir"
)

// Shape specialization.
//
// A model whose inputs have symbolic dimensions (a dynamic batch or
// sequence length, the usual ONNX export) cannot be memory-planned, and
// the fast CPU kernels want static shapes, so its generic plan runs mostly
// on the reference kernels. A Model built by New or Open from such a graph
// keeps a copy of the graph as it was before the passes ran (the
// template). Each Run or RunInto binds the symbols from the actual input
// shapes (the same symbol at two different sizes is an error naming both
// inputs) and runs a variant compiled for that binding: the template is
// copied, the sizes substituted, and the pass pipeline (at the Model's
// -O level: shape inference makes every shape static), the scheduler, the
// memory planner and the devices compile it like a static model. Variants
// are cached by binding in a small LRU (Options.Variants, default 8); a
// variant is compiled once even when several runs ask for it at the same
// time, and an evicted variant is closed when its last run ends. When a
// variant cannot be compiled the run falls back to the generic plan
// (never a different answer), and the reason is written to
// Options.SpecializeLog; the failure is cached like a variant.
//
// A plan (.wplan) keeps only the optimized graph, not the template: a plan
// with symbolic dimensions specializes from that graph instead (the
// pipeline at the plan's -O level again, without quantizing: its weights
// are quantized already). Multi-device plans (with Transfer nodes) are not
// specialized. Compiling for the shapes you run (`weft compile --dim
// batch=1 --dim seq=128`) saves the compile at run time and stores the
// prepacked weights in the plan.

// DefaultVariants is the number of shape-specialized variants a Model
// keeps when Options.Variants is 0.
const DefaultVariants = 8

// maxStackDims is the number of bound dimensions a run keys its variant
// by without allocating.
const maxStackDims = 8

// dimSlot is one unknown dimension of a model input: symbol index sym of
// the binding.
type dimSlot struct {
	input, axis, sym int
}

// specializer owns a Model's template graph and its variants.
type specializer struct {
	tmpl   *ir.Graph
	opts   Options
	inputs []*ir.Value // the template's inputs (symbolic shapes)
	slots  []dimSlot
	names  []string // per binding index: the symbol, or "" for an unnamed dim
	max    int
	outs   []string // the generic model's output names
	log    io.Writer

	mu       sync.Mutex
	variants []*variant // most recently used first
	closed   bool
	// compiles counts variant compilations (a test hook).
	compiles atomic.Int64
}

// variant is the model compiled for one binding.
type variant struct {
	key   []int64
	done  chan struct{} // closed when the compilation has finished
	model *Model        // nil when err is set
	err   error         // why specialization failed (the run falls back)
	// remap is set when the variant names its outputs differently from the
	// generic model (Run renames them).
	remap []string

	users   int  // runs using the variant now (under specializer.mu)
	evicted bool // dropped from the cache: close after the last user
}

// newSpecializer returns the specializer of a graph whose inputs have
// unknown dimensions, or nil when they have none or opts disables it.
// tmpl is the graph before the passes (owned by the specializer).
func newSpecializer(tmpl *ir.Graph, opts Options, outNames []string) *specializer {
	if opts.Variants < 0 {
		return nil
	}
	s := &specializer{tmpl: tmpl, opts: opts, inputs: tmpl.Inputs, max: opts.Variants, outs: outNames, log: opts.SpecializeLog}
	if s.max == 0 {
		s.max = DefaultVariants
	}
	symIdx := map[string]int{}
	for i, v := range tmpl.Inputs {
		if v == nil || v.IsConst() {
			continue
		}
		for a, d := range v.Shape {
			if d.Known() {
				continue
			}
			k, ok := symIdx[d.Sym]
			if !ok || d.Sym == "" {
				k = len(s.names)
				s.names = append(s.names, d.Sym)
				if d.Sym != "" {
					symIdx[d.Sym] = k
				}
			}
			s.slots = append(s.slots, dimSlot{input: i, axis: a, sym: k})
		}
	}
	if len(s.slots) == 0 {
		return nil
	}
	// The variants compile quietly and are not prepared again.
	s.opts.PrintAfter, s.opts.PrintOut, s.opts.Prepare = "", nil, nil
	return s
}

// testBuildHook, set by tests, sees each specialized graph before it is
// compiled; an error makes the specialization fail.
var testBuildHook func(g *ir.Graph) error

// errNoBinding says that the inputs do not fit the model's declared ranks
// (or are missing): the generic session reports the precise error.
var errNoBinding = errors.New("weft: no binding")

// bind fills key with the size of each dimension symbol from inputs (in
// the order of the model's inputs). The same symbol at two sizes is an
// error naming both inputs.
func (s *specializer) bind(inputs []*ir.Tensor, key []int64) error {
	if len(inputs) != len(s.inputs) {
		return errNoBinding
	}
	for i := range key {
		key[i] = -1
	}
	for _, sl := range s.slots {
		t := inputs[sl.input]
		if t == nil || len(t.Shape) != len(s.inputs[sl.input].Shape) {
			return errNoBinding
		}
		n := t.Shape[sl.axis]
		switch {
		case key[sl.sym] < 0:
			key[sl.sym] = n
		case key[sl.sym] != n:
			return s.conflict(inputs, sl, n)
		}
	}
	return nil
}

// conflict describes two inputs that bind one symbol to different sizes.
func (s *specializer) conflict(inputs []*ir.Tensor, at dimSlot, n int64) error {
	for _, first := range s.slots {
		if first.sym != at.sym {
			continue
		}
		m := inputs[first.input].Shape[first.axis]
		sym := s.names[at.sym]
		return fmt.Errorf("weft: input %q dim %d (%s) is %d, but input %q dim %d binds %s=%d: inputs disagree on the symbolic dimension %s",
			s.inputs[at.input].Name, at.axis, sym, n, s.inputs[first.input].Name, first.axis, sym, m, sym)
	}
	return fmt.Errorf("weft: input %q dim %d: inconsistent size %d", s.inputs[at.input].Name, at.axis, n)
}

// acquire returns the variant for inputs, compiling it on first use, with
// its user count raised (release it after the run). It returns nil, nil
// when the run should use the generic plan: the inputs do not fit the
// declared ranks (the generic session says why), or specialization failed.
func (s *specializer) acquire(inputs []*ir.Tensor) (*variant, error) {
	var buf [maxStackDims]int64
	var key []int64
	if len(s.names) <= maxStackDims {
		key = buf[:len(s.names)]
	} else {
		key = make([]int64, len(s.names))
	}
	if err := s.bind(inputs, key); err != nil {
		if err == errNoBinding {
			return nil, nil
		}
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("weft: the model is closed")
	}
	v := s.lookup(key)
	if v == nil {
		v = &variant{key: slices.Clone(key), done: make(chan struct{})}
		s.insert(v)
		v.users++
		s.mu.Unlock()
		s.compile(v)
	} else {
		v.users++
		s.mu.Unlock()
		<-v.done
	}
	if v.model == nil { // specialization failed: the generic plan runs
		s.release(v)
		return nil, nil
	}
	return v, nil
}

// lookup finds the variant of key and makes it the most recently used
// (under s.mu).
func (s *specializer) lookup(key []int64) *variant {
	for i, v := range s.variants {
		if slices.Equal(v.key, key) {
			copy(s.variants[1:i+1], s.variants[:i])
			s.variants[0] = v
			return v
		}
	}
	return nil
}

// insert adds v as the most recently used variant, evicting the least
// recently used ones beyond the limit (under s.mu).
func (s *specializer) insert(v *variant) {
	s.variants = slices.Insert(s.variants, 0, v)
	for len(s.variants) > s.max {
		old := s.variants[len(s.variants)-1]
		s.variants = s.variants[:len(s.variants)-1]
		old.evicted = true
		if old.users == 0 {
			go old.close() // never under the lock; no run uses it
		}
	}
}

// release ends a run's use of v, closing it when it was evicted and this
// was its last user.
func (s *specializer) release(v *variant) {
	s.mu.Lock()
	v.users--
	last := v.evicted && v.users == 0
	s.mu.Unlock()
	if last {
		v.close()
	}
}

func (v *variant) close() {
	<-v.done
	if v.model != nil {
		v.model.Close()
	}
}

// compile builds v's model from a copy of the template and closes v.done.
func (s *specializer) compile(v *variant) {
	defer close(v.done)
	s.compiles.Add(1)
	m, err := s.build(v.key)
	if err != nil {
		v.err = err
		if s.log != nil {
			fmt.Fprintf(s.log, "weft: shape specialization for %s failed, running the generic plan: %v\n", s.describe(v.key), err)
		}
		return
	}
	if names := m.OutputNames(); !slices.Equal(names, s.outs) {
		v.remap = names
	}
	v.model = m
	if s.log != nil {
		fmt.Fprintf(s.log, "weft: compiled a shape-specialized variant for %s\n", s.describe(v.key))
	}
}

// build compiles the template for the binding key.
func (s *specializer) build(key []int64) (m *Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("panic while compiling: %v", r)
		}
	}()
	g := cloneGraph(s.tmpl)
	dims := map[string]int64{}
	anon := map[[2]int]int64{}
	for _, sl := range s.slots {
		if name := s.names[sl.sym]; name != "" {
			dims[name] = key[sl.sym]
		} else {
			anon[[2]int{sl.input, sl.axis}] = key[sl.sym]
		}
	}
	bindDims(g, dims, anon)
	if testBuildHook != nil {
		if err := testBuildHook(g); err != nil {
			return nil, err
		}
	}
	o := s.opts
	o.Variants = -1 // the variant's inputs are static
	m, err = New(g, o)
	if err != nil {
		return nil, err
	}
	if err := sameInputs(m.Inputs(), s.inputs); err != nil {
		m.Close()
		return nil, err
	}
	if len(m.Outputs()) != len(s.outs) {
		m.Close()
		return nil, fmt.Errorf("the variant has %d outputs, the model %d", len(m.Outputs()), len(s.outs))
	}
	return m, nil
}

// sameInputs checks that a variant takes the inputs of the generic model,
// in the same order.
func sameInputs(got, want []*ir.Value) error {
	if len(got) != len(want) {
		return fmt.Errorf("the variant takes %d inputs, the model %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Name != want[i].Name {
			return fmt.Errorf("the variant's input %d is %q, the model's %q", i, got[i].Name, want[i].Name)
		}
	}
	return nil
}

// describe renders a binding: "batch=1 seq=128".
func (s *specializer) describe(key []int64) string {
	parts := make([]string, 0, len(key))
	for i, n := range key {
		name := s.names[i]
		if name == "" {
			for _, sl := range s.slots {
				if sl.sym == i {
					name = fmt.Sprintf("%s[%d]", s.inputs[sl.input].Name, sl.axis)
					break
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, n))
	}
	return strings.Join(parts, " ")
}

// run executes a Run on the variant for inputs, or reports ok=false when
// the generic plan should run.
func (s *specializer) run(ctx context.Context, inputs map[string]*ir.Tensor) (out map[string]*ir.Tensor, ok bool, err error) {
	list := make([]*ir.Tensor, len(s.inputs))
	for i, v := range s.inputs {
		if v.IsConst() {
			list[i] = v.Const
			continue
		}
		t, has := inputs[v.Name]
		if !has || t == nil {
			return nil, false, nil
		}
		list[i] = t
	}
	v, err := s.acquire(list)
	if err != nil || v == nil {
		return nil, false, err
	}
	defer s.release(v)
	out, err = v.model.Session.Run(ctx, inputs)
	if err != nil || v.remap == nil {
		return out, true, err
	}
	renamed := make(map[string]*ir.Tensor, len(out))
	for i, name := range v.remap {
		renamed[s.outs[i]] = out[name]
	}
	return renamed, true, nil
}

// runInto executes a RunInto on the variant for inputs, or reports
// ok=false when the generic plan should run.
func (s *specializer) runInto(ctx context.Context, inputs, outputs []*ir.Tensor) (bool, error) {
	v, err := s.acquire(inputs)
	if err != nil || v == nil {
		return false, err
	}
	defer s.release(v)
	return true, v.model.Session.RunInto(ctx, inputs, outputs)
}

// close closes every cached variant. No run may be in flight.
func (s *specializer) close() error {
	s.mu.Lock()
	vs := s.variants
	s.variants, s.closed = nil, true
	s.mu.Unlock()
	var errs []error
	for _, v := range vs {
		<-v.done
		if v.model != nil {
			errs = append(errs, v.model.Close())
		}
	}
	return errors.Join(errs...)
}

// Specialized reports how many shape-specialized variants the model has
// compiled so far (failed attempts included) and how many it keeps now;
// both are 0 for a model without symbolic input dimensions.
func (m *Model) Specialized() (compiled, cached int) {
	if m.spec == nil {
		return 0, 0
	}
	m.spec.mu.Lock()
	defer m.spec.mu.Unlock()
	return int(m.spec.compiles.Load()), len(m.spec.variants)
}
