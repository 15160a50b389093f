package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// Control flow: If, Loop and Scan. Their subgraphs are inferred too, with
// the body inputs bound from the node's inputs.

func init() {
	register(ifOp, "If")
	register(loopOp, "Loop")
	register(scanOp, "Scan")
}

func valueType(v *ir.Value) typ {
	if v == nil {
		return typ{}
	}
	return typ{v.DType, v.Shape}
}

func ifOp(s *state, n *ir.Node) ([]typ, error) {
	then, els := n.AttrGraph("then_branch"), n.AttrGraph("else_branch")
	if then == nil || els == nil {
		return nil, fmt.Errorf("If without then_branch/else_branch")
	}
	if len(then.Outputs) != len(n.Outputs) || len(els.Outputs) != len(n.Outputs) {
		return nil, fmt.Errorf("If has %d outputs, branches %d and %d", len(n.Outputs), len(then.Outputs), len(els.Outputs))
	}
	if err := s.graph(then); err != nil {
		return nil, err
	}
	if err := s.graph(els); err != nil {
		return nil, err
	}
	out := make([]typ, len(n.Outputs))
	if c, ok := s.ints(n.In(0)); ok && len(c) == 1 {
		// A known condition: the taken branch decides alone.
		taken := els
		if c[0] != 0 {
			taken = then
		}
		for i := range out {
			out[i] = valueType(taken.Outputs[i])
		}
		return out, nil
	}
	for i := range out {
		a, b := valueType(then.Outputs[i]), valueType(els.Outputs[i])
		if a.dt.Valid() && b.dt.Valid() && a.dt != b.dt {
			return nil, fmt.Errorf("If output %d is %v in then_branch, %v in else_branch", i, a.dt, b.dt)
		}
		dt := a.dt
		if !dt.Valid() {
			dt = b.dt
		}
		out[i] = typ{dt, joinShapes(a.sh, b.sh)}
	}
	return out, nil
}

// snapshot records the types of every value a (sub)graph defines, so that a
// body can be inferred again from scratch with wider input types.
type snapshot map[*ir.Value]typ

func takeSnapshot(g *ir.Graph) snapshot {
	snap := snapshot{}
	g.Walk(func(sg *ir.Graph) {
		for _, v := range sg.Inputs {
			snap[v] = valueType(v)
		}
		for _, n := range sg.Nodes {
			for _, o := range n.Outputs {
				snap[o] = valueType(o)
			}
		}
	})
	return snap
}

func (s *state) restore(snap snapshot) {
	for v, t := range snap {
		v.DType, v.Shape = t.dt, t.sh.Clone()
		delete(s.vals, v)
	}
}

// inferBody binds body.Inputs to bind and infers the body. carried lists
// pairs {input index, output index} of loop-carried values: when an
// iteration's output type is wider than the bound input type, the binding
// is widened to cover both and the body inferred again, until stable.
// bind is updated in place with the final (widened) types.
func (s *state) inferBody(body *ir.Graph, bind []typ, carried [][2]int) error {
	if len(bind) != len(body.Inputs) {
		return fmt.Errorf("body %q has %d inputs, want %d", body.Name, len(body.Inputs), len(bind))
	}
	snap := takeSnapshot(body)
	var prev []typ
	for round := 0; ; round++ {
		for i, v := range body.Inputs {
			if err := s.set(v, bind[i]); err != nil {
				return fmt.Errorf("body %q input %d: %w", body.Name, i, err)
			}
			bind[i] = valueType(v)
		}
		if prev != nil {
			// The declared body inputs may pin a shape that inference cannot
			// prove; they are the model's word unless they contradict a
			// known size, which the widening below reports.
			same := true
			for _, c := range carried {
				same = same && bind[c[0]].sh.Equal(prev[c[0]].sh)
			}
			if same {
				if err := s.graph(body); err != nil {
					return err
				}
				for _, c := range carried {
					o := valueType(body.Outputs[c[1]])
					if !o.sh.Compatible(bind[c[0]].sh) {
						return fmt.Errorf("body %q: carried input %d is declared [%v] but an iteration returns [%v]", body.Name, c[0], bind[c[0]].sh, o.sh)
					}
				}
				return nil
			}
		}
		if err := s.graph(body); err != nil {
			return err
		}
		stable := true
		for _, c := range carried {
			if c[1] >= len(body.Outputs) {
				return fmt.Errorf("body %q has %d outputs, too few", body.Name, len(body.Outputs))
			}
			b, o := bind[c[0]], valueType(body.Outputs[c[1]])
			if o.dt.Valid() && b.dt.Valid() && o.dt != b.dt {
				return fmt.Errorf("body %q carries input %d as %v but returns %v", body.Name, c[0], b.dt, o.dt)
			}
			if !o.sh.Equal(b.sh) {
				stable = false
			}
		}
		if stable {
			return nil
		}
		if round > 4 {
			return fmt.Errorf("body %q: loop-carried shapes do not settle", body.Name)
		}
		prev = append(prev[:0], bind...)
		for _, c := range carried {
			b, o := bind[c[0]], valueType(body.Outputs[c[1]])
			if !o.sh.Equal(b.sh) {
				bind[c[0]].sh = joinShapes(b.sh, o.sh)
				if round >= 3 {
					bind[c[0]].sh = nil
				}
			}
		}
		s.restore(snap)
	}
}

func loopOp(s *state, n *ir.Node) ([]typ, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("Loop without body")
	}
	nc := len(n.Inputs) - 2 // loop-carried values
	if nc < 0 || len(body.Inputs) != nc+2 || len(body.Outputs) < nc+1 {
		return nil, fmt.Errorf("Loop with %d inputs, body with %d inputs and %d outputs", len(n.Inputs), len(body.Inputs), len(body.Outputs))
	}
	nscan := len(body.Outputs) - 1 - nc
	if len(n.Outputs) != nc+nscan {
		return nil, fmt.Errorf("Loop has %d outputs, want %d", len(n.Outputs), nc+nscan)
	}
	bind := []typ{{ir.Int64, ir.Scalar()}, {ir.Bool, ir.Scalar()}}
	var carried [][2]int
	for i := 0; i < nc; i++ {
		bind = append(bind, in(n, 2+i))
		carried = append(carried, [2]int{2 + i, 1 + i})
	}
	if err := s.inferBody(body, bind, carried); err != nil {
		return nil, err
	}
	out := make([]typ, 0, nc+nscan)
	out = append(out, bind[2:]...)
	// Scan outputs stack one slice per iteration; the count is known only
	// for a loop that runs exactly M times.
	iters := unk
	if m, ok := s.scalarInt(n.In(0)); ok && body.Outputs[0] == body.Inputs[1] {
		c, ok := s.ints(n.In(1))
		if n.In(1) == nil || (ok && len(c) == 1 && c[0] != 0) {
			iters = dim(max(m, 0))
		}
	}
	for k := 0; k < nscan; k++ {
		t := valueType(body.Outputs[1+nc+k])
		if t.sh != nil {
			t.sh = append(ir.Shape{iters}, t.sh...)
		}
		out = append(out, t)
	}
	return out, nil
}

func scanOp(s *state, n *ir.Node) ([]typ, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("Scan without body")
	}
	if n.AttrInt("batched", 0) == 1 {
		return nil, nil // Scan-8's batched form: left to run time
	}
	m := int(n.AttrInt("num_scan_inputs", 0))
	ns := len(n.Inputs) - m // state variables
	if m <= 0 || ns < 0 || len(body.Inputs) != ns+m || len(body.Outputs) < ns {
		return nil, fmt.Errorf("Scan with %d inputs (%d scanned), body with %d inputs and %d outputs", len(n.Inputs), m, len(body.Inputs), len(body.Outputs))
	}
	k := len(body.Outputs) - ns
	if len(n.Outputs) != ns+k {
		return nil, fmt.Errorf("Scan has %d outputs, want %d", len(n.Outputs), ns+k)
	}
	inAxes := n.AttrInts("scan_input_axes", make([]int64, m))
	outAxes := n.AttrInts("scan_output_axes", make([]int64, k))
	if len(inAxes) != m || len(outAxes) != k {
		return nil, fmt.Errorf("Scan axes %v, %v for %d inputs, %d outputs", inAxes, outAxes, m, k)
	}
	bind := make([]typ, 0, ns+m)
	var carried [][2]int
	for i := 0; i < ns; i++ {
		bind = append(bind, in(n, i))
		carried = append(carried, [2]int{i, i})
	}
	seq := unk
	for j := 0; j < m; j++ {
		t := in(n, ns+j)
		if t.sh != nil {
			ax, err := normAxis(inAxes[j], len(t.sh))
			if err != nil {
				return nil, fmt.Errorf("Scan input %d: %w", ns+j, err)
			}
			if j == 0 {
				seq = t.sh[ax]
			}
			sh := append(t.sh[:ax:ax], t.sh[ax+1:]...)
			t = t.withShape(sh)
		}
		bind = append(bind, t)
	}
	if err := s.inferBody(body, bind, carried); err != nil {
		return nil, err
	}
	out := append([]typ{}, bind[:ns]...)
	for j := 0; j < k; j++ {
		t := valueType(body.Outputs[ns+j])
		if t.sh != nil {
			ax, err := normAxis(outAxes[j], len(t.sh)+1)
			if err != nil {
				return nil, fmt.Errorf("Scan output %d: %w", ns+j, err)
			}
			sh := append(t.sh[:ax:ax], seq)
			t.sh = append(sh, t.sh[ax:]...)
		}
		out = append(out, t)
	}
	return out, nil
}
