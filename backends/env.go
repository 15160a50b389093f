package backends

import "github.com/weftrt/weft/ir"

// Env maps values to their tensors during one execution. Lookups fall back
// to the parent Env, so a subgraph (If branch, Loop body) sees the values of
// its enclosing graphs and a run sees the session's constants. An Env is not
// safe for concurrent writes; each Run uses its own.
type Env struct {
	parent *Env
	vals   map[*ir.Value]*ir.Tensor
}

// NewEnv returns an empty Env whose lookups fall back to parent (may be nil).
func NewEnv(parent *Env) *Env {
	return &Env{parent: parent, vals: map[*ir.Value]*ir.Tensor{}}
}

// Get returns the tensor bound to v here or in a parent, or nil.
func (e *Env) Get(v *ir.Value) *ir.Tensor {
	for ; e != nil; e = e.parent {
		if t, ok := e.vals[v]; ok {
			return t
		}
	}
	return nil
}

// Set binds v to t in this Env.
func (e *Env) Set(v *ir.Value, t *ir.Tensor) { e.vals[v] = t }

// Delete unbinds v in this Env (to release an intermediate early).
func (e *Env) Delete(v *ir.Value) { delete(e.vals, v) }
