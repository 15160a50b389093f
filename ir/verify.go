package ir

import (
	"errors"
	"fmt"
)

// Verify checks the structure of g and its subgraphs: nodes are in
// topological order, every value is defined exactly once before use (graph
// input, constant, or an earlier node's output, possibly of an enclosing
// graph), outputs are defined, constants agree with their declared dtype and
// shape, and known dtypes/shapes are well formed.
func Verify(g *Graph) error {
	return verify(g, map[*Value]bool{}, false)
}

// VerifyTyped is Verify plus: every value has a valid dtype and a known rank.
// Passes run it after shape inference.
func VerifyTyped(g *Graph) error {
	return verify(g, map[*Value]bool{}, true)
}

func verify(g *Graph, outer map[*Value]bool, typed bool) error {
	defined := make(map[*Value]bool, len(outer)+len(g.Nodes))
	for v := range outer {
		defined[v] = true
	}
	var errs []error
	fail := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf("ir: graph %q: "+format, append([]any{g.Name}, args...)...))
		}
	}
	define := func(v *Value, what string) {
		if v == nil {
			fail("%s defines a nil value", what)
			return
		}
		if defined[v] {
			fail("%s: value %v defined twice", what, v)
		}
		if v.Graph != g {
			fail("%s: value %v belongs to another graph", what, v)
		}
		defined[v] = true
		if v.Shape != nil {
			for _, d := range v.Shape {
				if d.Size < -1 {
					fail("%s: value %v has bad dim %d", what, v, d.Size)
				}
			}
		}
		if typed && (!v.DType.Valid() || v.Shape == nil) {
			fail("%s: value %v has no inferred dtype/shape", what, v)
		}
	}
	for _, v := range g.Inputs {
		define(v, "input")
		if v != nil && v.Producer != nil {
			fail("input %v has a producer", v)
		}
	}
	for _, v := range g.Consts {
		define(v, "const")
		if v == nil {
			continue
		}
		if v.Const == nil {
			fail("const %v has no tensor", v)
			continue
		}
		if err := v.Const.Check(); err != nil {
			fail("const %v: %v", v, err)
		}
		if v.DType != v.Const.DType || !v.Shape.Equal(ShapeOf(v.Const.Shape)) {
			fail("const %v declared as %v[%v] but holds %v", v, v.DType, v.Shape, v.Const)
		}
	}
	for i, n := range g.Nodes {
		what := fmt.Sprintf("node %d %v", i, n)
		if n.Op == "" {
			fail("%s has no op", what)
		}
		for j, in := range n.Inputs {
			if in != nil && !defined[in] {
				fail("%s: input %d (%v) is used before it is defined", what, j, in)
			}
		}
		for _, sg := range n.Subgraphs() {
			if sg.Parent != g {
				fail("%s: subgraph %q has the wrong parent", what, sg.Name)
			}
			if err := verify(sg, defined, typed); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
			}
		}
		for _, o := range n.Outputs {
			define(o, what)
			if o != nil && o.Producer != n {
				fail("%s: output %v names another producer", what, o)
			}
		}
	}
	for i, o := range g.Outputs {
		if o == nil || !defined[o] {
			fail("output %d (%v) is not defined", i, o)
		}
	}
	return errors.Join(errs...)
}
