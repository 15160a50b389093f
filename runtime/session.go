package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// Session runs one plan. Run is safe for concurrent use.
type Session struct {
	plan    *plan.Plan
	exes    []backends.Executable
	consts  *backends.Env
	inputs  []*ir.Value
	outputs []*ir.Value
	outName []string
}

// NewSession compiles every partition of p on its device.
func NewSession(p *plan.Plan, devices []backends.Device) (*Session, error) {
	byName := map[string]backends.Device{}
	for _, d := range devices {
		byName[d.Name()] = d
	}
	s := &Session{plan: p, consts: backends.NewEnv(nil), inputs: p.Graph.Inputs, outputs: p.Graph.Outputs}
	for _, part := range p.Partitions {
		d, ok := byName[part.Device]
		if !ok {
			return nil, fmt.Errorf("runtime: partition %d wants device %q, which is not available", part.Index, part.Device)
		}
		exe, err := d.Compile(part)
		if err != nil {
			return nil, fmt.Errorf("runtime: compile partition %d on %s: %w", part.Index, part.Device, err)
		}
		s.exes = append(s.exes, exe)
	}
	for _, c := range p.Graph.Consts {
		s.consts.Set(c, c.Const)
	}
	s.outName = OutputNames(p.Graph)
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

// Run executes the plan on named inputs and returns the named outputs.
func (s *Session) Run(ctx context.Context, inputs map[string]*ir.Tensor) (map[string]*ir.Tensor, error) {
	env := backends.NewEnv(s.consts)
	if err := s.bind(env, inputs); err != nil {
		return nil, err
	}
	for i, exe := range s.exes {
		if err := exe.Run(ctx, env); err != nil {
			part := s.plan.Partitions[i]
			return nil, fmt.Errorf("runtime: partition %d on %s: %w", part.Index, part.Device, err)
		}
	}
	out := make(map[string]*ir.Tensor, len(s.outputs))
	for i, o := range s.outputs {
		t := env.Get(o)
		if t == nil {
			return nil, fmt.Errorf("runtime: output %q was not computed", s.outName[i])
		}
		out[s.outName[i]] = t
	}
	return out, nil
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
