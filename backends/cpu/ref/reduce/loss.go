package reduce

import (
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("NegativeLogLikelihoodLoss", nllLoss)
	ref.Register("SoftmaxCrossEntropyLoss", softmaxCrossEntropyLoss)
}

// nllLoss is NegativeLogLikelihoodLoss(input [N, C, d1, ...], target
// [N, d1, ...], weight [C]?): loss = -input[n, target, d...] * weight[target],
// 0 where target == ignore_index, reduced by none, sum or mean (the sum
// divided by the sum of the weights applied).
func nllLoss(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	var weight *ir.Tensor
	if len(in) > 2 {
		weight = in[2]
	}
	loss, err := nll(n, floatsOf(x), x.Shape, in[1], weight, x.DType)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{loss}, nil
}

// softmaxCrossEntropyLoss is SoftmaxCrossEntropyLoss(scores [N, C, d1, ...],
// labels [N, d1, ...], weights [C]?): the NegativeLogLikelihoodLoss of
// log_prob = LogSoftmax(scores) along dim 1, with log_prob as the optional
// second output.
func softmaxCrossEntropyLoss(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("scores have shape %v, want [N, C, ...]", x.Shape)
	}
	if len(n.Outputs) > 2 {
		return nil, fmt.Errorf("SoftmaxCrossEntropyLoss has %d outputs, want at most 2", len(n.Outputs))
	}
	logp := floatsOf(x)
	outer, size, inner := splitAt(x.Shape, 1)
	row := make([]float64, size)
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			base := o*size*inner + k
			for j := range row {
				row[j] = logp[base+j*inner]
			}
			softmaxRow(kindLogSoftmax, row)
			for j, v := range row {
				logp[base+j*inner] = v
			}
		}
	}
	var weight *ir.Tensor
	if len(in) > 2 {
		weight = in[2]
	}
	loss, err := nll(n, logp, x.Shape, in[1], weight, x.DType)
	if err != nil {
		return nil, err
	}
	outs := []*ir.Tensor{loss}
	if len(n.Outputs) == 2 {
		outs = append(outs, fromFloats(x.DType, x.Shape, logp))
	}
	return outs, nil
}

// nll computes the negative log-likelihood loss of the log-probabilities
// logp (shape [N, C, d1, ...]) for the class indices in target, following
// the node's reduction and ignore_index attributes. The result has dtype dt.
func nll(n *ir.Node, logp []float64, shape []int64, target, weight *ir.Tensor, dt ir.DType) (*ir.Tensor, error) {
	if len(shape) < 2 {
		return nil, fmt.Errorf("input has shape %v, want [N, C, ...]", shape)
	}
	if target.DType != ir.Int64 && target.DType != ir.Int32 {
		return nil, fmt.Errorf("target is %v, want i32 or i64", target.DType)
	}
	want := append([]int64{shape[0]}, shape[2:]...)
	if !slices.Equal(target.Shape, want) {
		return nil, fmt.Errorf("target has shape %v, want %v for input %v", target.Shape, want, shape)
	}
	classes := int(shape[1])
	var w []float64
	if weight != nil {
		if err := checkLen("weight", weight, classes); err != nil {
			return nil, err
		}
		w = floatsOf(weight)
	}
	ignore, hasIgnore := int64(0), n.Has("ignore_index")
	if hasIgnore {
		ignore = n.AttrInt("ignore_index", 0)
	}

	outer, _, inner := splitAt(shape, 1)
	losses := make([]float64, outer*inner)
	sum, weightSum := 0.0, 0.0
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			t := target.Int64(o*inner + k)
			if hasIgnore && t == ignore {
				continue // loss 0, weight 0
			}
			if t < 0 || t >= int64(classes) {
				return nil, fmt.Errorf("target %d out of range [0, %d)", t, classes)
			}
			wt := 1.0
			if w != nil {
				wt = w[t]
			}
			l := -logp[(o*classes+int(t))*inner+k] * wt
			losses[o*inner+k] = l
			sum += l
			weightSum += wt
		}
	}
	switch r := n.AttrString("reduction", "mean"); r {
	case "none":
		return fromFloats(dt, target.Shape, losses), nil
	case "sum":
		return fromFloats(dt, []int64{}, []float64{sum}), nil
	case "mean":
		// All targets ignored (zero total weight) gives 0/0 = NaN.
		return fromFloats(dt, []int64{}, []float64{sum / weightSum}), nil
	default:
		return nil, fmt.Errorf("unknown reduction %q", r)
	}
}
