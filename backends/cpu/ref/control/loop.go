package control

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Loop", loopKernel) }

// loopKernel implements ONNX Loop: inputs (M?, cond?, v_initial...), body
// (iteration_num, cond_in, carried...) -> (cond_out, carried...,
// scan_outputs...). It runs while i < M (when M is given) and cond holds
// (when cond is given); with neither the loop could never end, so that is
// an error. The node's outputs are the final carried values followed by
// each scan output stacked along a new leading axis.
func loopKernel(ctx *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("missing body attribute")
	}
	if len(in) < 2 { // trailing absent M and cond may be left out
		in = append(append([]*ir.Tensor{}, in...), make([]*ir.Tensor, 2-len(in))...)
	}
	nCarried := len(in) - 2
	nScan := len(n.Outputs) - nCarried
	if nScan < 0 {
		return nil, fmt.Errorf("%d loop-carried inputs but only %d outputs", nCarried, len(n.Outputs))
	}
	if len(body.Inputs) != 2+nCarried {
		return nil, fmt.Errorf("body takes %d inputs, want %d (iteration_num, cond, %d carried)", len(body.Inputs), 2+nCarried, nCarried)
	}
	if len(body.Outputs) != 1+nCarried+nScan {
		return nil, fmt.Errorf("body has %d outputs, want %d (cond, %d carried, %d scan)", len(body.Outputs), 1+nCarried+nScan, nCarried, nScan)
	}
	for i := 2; i < len(in); i++ {
		if in[i] == nil {
			return nil, fmt.Errorf("loop-carried input %d is absent", i)
		}
	}

	hasM, hasCond := in[0] != nil, in[1] != nil
	var tripCount int64
	if hasM {
		m := in[0]
		if m.DType != ir.Int64 || m.Len() != 1 {
			return nil, fmt.Errorf("M is %v, want a single int64", m)
		}
		tripCount = m.Int64(0)
	}
	cond := true
	if hasCond {
		c, err := truth(in[1], "cond")
		if err != nil {
			return nil, err
		}
		cond = c
	}
	if !hasM && !hasCond {
		return nil, fmt.Errorf("loop has neither a trip count M nor a condition and would never end")
	}

	carried := append([]*ir.Tensor{}, in[2:]...)
	scans := make([][]*ir.Tensor, nScan)
	for i := int64(0); (!hasM || i < tripCount) && (!hasCond || cond); i++ {
		if ctx.Ctx != nil {
			if err := ctx.Ctx.Err(); err != nil {
				return nil, err
			}
		}
		args := make([]*ir.Tensor, 0, len(body.Inputs))
		args = append(args, ref.Scalar(ir.Int64, 0), boolScalar(cond))
		args[0].SetInt64(0, i)
		args = append(args, carried...)
		out, err := ref.RunGraph(ctx.Ctx, body, ctx.Env, args)
		if err != nil {
			return nil, fmt.Errorf("iteration %d: %w", i, err)
		}
		if hasCond {
			// Without a cond input the body's cond output is ignored.
			if cond, err = truth(out[0], "body cond output"); err != nil {
				return nil, fmt.Errorf("iteration %d: %w", i, err)
			}
		}
		carried = out[1 : 1+nCarried]
		for k := range scans {
			scans[k] = append(scans[k], out[1+nCarried+k])
		}
	}

	res := cloneAll(carried)
	for k, s := range scans {
		var t *ir.Tensor
		var err error
		if len(s) == 0 {
			t, err = emptyStack(body.Outputs[1+nCarried+k], 0)
		} else {
			t, err = stack(s, 0, false)
		}
		if err != nil {
			return nil, fmt.Errorf("scan output %d: %w", k, err)
		}
		res = append(res, t)
	}
	return res, nil
}
