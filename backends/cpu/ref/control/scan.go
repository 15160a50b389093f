package control

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Scan", scanKernel) }

// scanSpec is one Scan in its opset 9+ form: which inputs are scanned
// along which axis and direction, and where each scan output is stacked.
type scanSpec struct {
	body    *ir.Graph
	nState  int
	inAxes  []int64 // per scan input, possibly negative
	inRev   []bool
	outAxes []int64 // per scan output, possibly negative (rank of the stacked output)
	outRev  []bool
}

// scanKernel implements ONNX Scan. Opset 9+: inputs are N state variables
// followed by num_scan_inputs scanned tensors; the body maps (state...,
// slice...) to (state..., scan_output...). Models of opset 8 use the older
// batched form (a leading sequence_lens input and a batch axis), which is
// run batch entry by batch entry on top of the same core.
func scanKernel(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("missing body attribute")
	}
	m := int(n.AttrInt("num_scan_inputs", -1))
	if m < 1 {
		return nil, fmt.Errorf("num_scan_inputs is %d, want >= 1", m)
	}
	if n.AttrInt("batched", 0) == 1 {
		return scan8(ctx, n, body, m, in)
	}
	nState := len(in) - m
	if nState < 0 {
		return nil, fmt.Errorf("num_scan_inputs %d exceeds the %d inputs", m, len(in))
	}
	nScanOut := len(n.Outputs) - nState
	if nScanOut < 0 {
		return nil, fmt.Errorf("%d state inputs but only %d outputs", nState, len(n.Outputs))
	}
	for i, t := range in {
		if t == nil {
			return nil, fmt.Errorf("input %d is absent", i)
		}
	}
	sp := &scanSpec{body: body, nState: nState}
	var err error
	if sp.inAxes, err = intsOfLen(n, "scan_input_axes", m); err != nil {
		return nil, err
	}
	if sp.outAxes, err = intsOfLen(n, "scan_output_axes", nScanOut); err != nil {
		return nil, err
	}
	if sp.inRev, err = dirsOfLen(n, "scan_input_directions", m); err != nil {
		return nil, err
	}
	if sp.outRev, err = dirsOfLen(n, "scan_output_directions", nScanOut); err != nil {
		return nil, err
	}
	return sp.run(ctx, in[:nState], in[nState:], nScanOut)
}

// run executes the scan and returns the final states followed by the
// stacked scan outputs, all freshly allocated.
func (sp *scanSpec) run(ctx *ref.Context, states, scans []*ir.Tensor, nScanOut int) ([]*ir.Tensor, error) {
	body := sp.body
	if len(body.Inputs) != len(states)+len(scans) {
		return nil, fmt.Errorf("body takes %d inputs, want %d (%d state, %d scan)", len(body.Inputs), len(states)+len(scans), len(states), len(scans))
	}
	if len(body.Outputs) != len(states)+nScanOut {
		return nil, fmt.Errorf("body has %d outputs, want %d (%d state, %d scan)", len(body.Outputs), len(states)+nScanOut, len(states), nScanOut)
	}
	axes := make([]int, len(scans))
	seqLen := int64(-1)
	for j, x := range scans {
		ax, err := ref.NormAxis(sp.inAxes[j], len(x.Shape))
		if err != nil {
			return nil, fmt.Errorf("scan input %d: %w", j, err)
		}
		axes[j] = ax
		if seqLen >= 0 && x.Shape[ax] != seqLen {
			return nil, fmt.Errorf("scan input %d has sequence length %d, scan input 0 has %d", j, x.Shape[ax], seqLen)
		}
		seqLen = x.Shape[ax]
	}

	cur := append([]*ir.Tensor{}, states...)
	outs := make([][]*ir.Tensor, nScanOut)
	for t := int64(0); t < seqLen; t++ {
		if ctx.Ctx != nil {
			if err := ctx.Ctx.Err(); err != nil {
				return nil, err
			}
		}
		args := append([]*ir.Tensor{}, cur...)
		for j, x := range scans {
			p := t
			if sp.inRev[j] {
				p = seqLen - 1 - t
			}
			args = append(args, sliceAt(x, axes[j], p))
		}
		res, err := ref.RunGraph(ctx.Ctx, body, ctx.Env, args)
		if err != nil {
			return nil, fmt.Errorf("iteration %d: %w", t, err)
		}
		cur = res[:len(states)]
		for k := range outs {
			outs[k] = append(outs[k], res[len(states)+k])
		}
	}

	result := cloneAll(cur)
	for k, s := range outs {
		v := body.Outputs[len(states)+k]
		rank := len(v.Shape) // used only when no iteration ran
		if len(s) > 0 {
			rank = len(s[0].Shape)
		}
		ax, err := ref.NormAxis(sp.outAxes[k], rank+1)
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", k, err)
		}
		var st *ir.Tensor
		if len(s) == 0 {
			st, err = emptyStack(v, ax)
		} else {
			st, err = stack(s, ax, sp.outRev[k])
		}
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", k, err)
		}
		result = append(result, st)
	}
	return result, nil
}

// scan8 runs the opset 8 form: inputs (sequence_lens?, state..., scan...)
// all carry a leading batch axis, scan inputs are scanned along axis 1, and
// the "directions" attribute gives each scan input's direction. Each batch
// entry is an independent opset 9 scan; the results are restacked.
func scan8(ctx *ref.Context, n *ir.Node, body *ir.Graph, m int, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) < 1+m {
		return nil, fmt.Errorf("opset 8 Scan: got %d inputs, want sequence_lens plus at least %d", len(in), m)
	}
	seqLens, rest := in[0], in[1:]
	nState := len(rest) - m
	nScanOut := len(n.Outputs) - nState
	if nScanOut < 0 {
		return nil, fmt.Errorf("%d state inputs but only %d outputs", nState, len(n.Outputs))
	}
	for i, t := range rest {
		if t == nil {
			return nil, fmt.Errorf("input %d is absent", i+1)
		}
		if len(t.Shape) < 1 || (i >= nState && len(t.Shape) < 2) {
			return nil, fmt.Errorf("input %d has shape %v, too small for the batched form", i+1, t.Shape)
		}
		if t.Shape[0] != rest[0].Shape[0] {
			return nil, fmt.Errorf("input %d has batch %d, input 1 has %d", i+1, t.Shape[0], rest[0].Shape[0])
		}
	}
	batch := rest[0].Shape[0]
	if seqLens != nil {
		maxLen := rest[nState].Shape[1]
		for i := 0; i < seqLens.Len(); i++ {
			if seqLens.Int64(i) != maxLen {
				return nil, ref.Unsupported("opset 8 Scan with sequence_lens shorter than the scan inputs")
			}
		}
	}
	inRev, err := dirsOfLen(n, "directions", m)
	if err != nil {
		return nil, err
	}
	sp := &scanSpec{body: body, nState: nState, inAxes: make([]int64, m), inRev: inRev,
		outAxes: make([]int64, nScanOut), outRev: make([]bool, nScanOut)}
	perBatch := make([][]*ir.Tensor, len(n.Outputs))
	for b := int64(0); b < batch; b++ {
		args := make([]*ir.Tensor, len(rest))
		for i, t := range rest {
			args[i] = sliceAt(t, 0, b)
		}
		res, err := sp.run(ctx, args[:nState], args[nState:], nScanOut)
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", b, err)
		}
		for k, t := range res {
			perBatch[k] = append(perBatch[k], t)
		}
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for k, ts := range perBatch {
		if len(ts) == 0 {
			return nil, ref.Unsupported("opset 8 Scan with batch size 0")
		}
		if out[k], err = stack(ts, 0, false); err != nil {
			return nil, fmt.Errorf("output %d: %w", k, err)
		}
	}
	return out, nil
}

// intsOfLen reads an ints attribute that must have length n (default all zeros).
func intsOfLen(n *ir.Node, name string, want int) ([]int64, error) {
	v := n.AttrInts(name, nil)
	if v == nil {
		return make([]int64, want), nil
	}
	if len(v) != want {
		return nil, fmt.Errorf("%s has %d entries, want %d", name, len(v), want)
	}
	return v, nil
}

// dirsOfLen reads a directions attribute (0 forward, 1 reverse).
func dirsOfLen(n *ir.Node, name string, want int) ([]bool, error) {
	v, err := intsOfLen(n, name, want)
	if err != nil {
		return nil, err
	}
	rev := make([]bool, want)
	for i, d := range v {
		switch d {
		case 0:
		case 1:
			rev[i] = true
		default:
			return nil, fmt.Errorf("%s[%d] is %d, want 0 or 1", name, i, d)
		}
	}
	return rev, nil
}
