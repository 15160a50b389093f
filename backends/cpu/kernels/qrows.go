package kernels

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// QRows is the decode GEMV's row kernel bound to one quantized activation
// row: Run computes weight rows exactly as QMatMul does at x.M == 1 (the
// same kernel, so bit for bit the same sums), without QMatMul's per-call
// setup. A QMatMulGroup task calls it for its rows: a decode step has
// hundreds of tasks, and the setup, run against caches the weight stream
// has just swept, cost a few percent of the step.
type QRows struct {
	rows  qGroupRows
	q4p   q4pKernel // the packed Q4_0 or Q8_0 one-row kernel instead (InitPacked)
	plain qDotRows  // or the plain family's rows kernel, on qs and d
	ng    int       // records per row (blocks per row for q4p and plain)
	rb    int       // bytes per weight row
	lay   []byte
	qs    []int8
	d     []float32
	pf    Prefetch
}

// Init binds r to x for weights of dtype dt and reports whether the row
// kernel applies (one activation row, a dtype and ISA that have it, K a
// whole number of groups); when it does not, callers use QMatMul. Init
// builds x's layout like QMatMul's first call: call it after QuantizeActs
// and before sharing x.
func (r *QRows) Init(dt ir.DType, x *QuantizedActs) bool {
	*r = QRows{}
	if x.M != 1 || (dt != ir.Q4_0 && dt != ir.Q8_0) {
		return false
	}
	rb, err := qRowBytes(dt, x.K)
	if err != nil {
		return false
	}
	isa := CurrentISA()
	rows, l := rowsKFunc(dt, isa, x)
	if rows == nil {
		if plain := plainRowsFunc(dt, isa, x.K); plain != nil {
			*r = QRows{plain: plain, ng: x.K / qBlock, rb: rb, qs: x.qs[:x.K], d: x.d[:x.K/qBlock]}
			return true
		}
		return false
	}
	*r = QRows{rows: rows, ng: x.K / qBlock / l.blocks(), rb: rb, lay: x.qGroups(l)}
	return true
}

// SetPrefetch sets how Run's kernel prefetches the weights (the packed
// Q4_0 kernel honours it; the others keep PrefetchKeep). It changes no
// result.
func (r *QRows) SetPrefetch(pf Prefetch) { r.pf = pf }

// Run sets y[i] = weight row i · the activations for the nr rows of w.
func (r *QRows) Run(w []byte, nr int, y []float32) error {
	if r.rows == nil && r.q4p == nil && r.plain == nil {
		return fmt.Errorf("kernels: QRows: not initialized")
	}
	if nr < 0 || len(w) < nr*r.rb || len(y) < nr {
		return fmt.Errorf("kernels: QRows: %d rows of %d bytes from %d bytes into %d floats", nr, r.rb, len(w), len(y))
	}
	switch {
	case nr == 0:
	case r.q4p != nil:
		r.q4p(nr, r.ng, w, r.rb, r.lay, len(r.lay), y, nr, r.pf)
	case r.plain != nil:
		r.plain(nr, r.ng, w, r.rb, r.qs, r.d, y)
	default:
		r.rows(nr, r.ng, w, r.rb, r.lay, y, r.pf)
	}
	return nil
}
