package reduce

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("BatchNormalization", batchNorm)
	ref.Register("InstanceNormalization", instanceNorm)
	ref.Register("LayerNormalization", layerNorm)
	ref.Register("GroupNormalization", groupNorm)
	ref.Register("MeanVarianceNormalization", meanVarianceNorm)
	ref.Register("LRN", lrn)
}

// channelInput checks that x is a float tensor of shape [N, C, D1, ...] and
// returns N, C and the product of the spatial dims.
func channelInput(op string, x *ir.Tensor) (batch, channels, spatial int, err error) {
	if err := needFloat(op, x); err != nil {
		return 0, 0, 0, err
	}
	if len(x.Shape) < 2 {
		return 0, 0, 0, fmt.Errorf("input has shape %v, want [N, C, ...]", x.Shape)
	}
	return int(x.Shape[0]), int(x.Shape[1]), product(x.Shape[2:]), nil
}

// batchNorm is BatchNormalization in inference form:
// Y = (X - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c].
func batchNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if n.AttrInt("training_mode", 0) != 0 {
		return nil, ref.Unsupported("BatchNormalization with training_mode=1")
	}
	if len(n.Outputs) != 1 {
		return nil, ref.Unsupported("BatchNormalization with %d outputs (running statistics are training-only)", len(n.Outputs))
	}
	if err := ref.Need(in, 0, 1, 2, 3, 4); err != nil {
		return nil, err
	}
	x := in[0]
	batch, channels, spatial, err := channelInput(n.Op, x)
	if err != nil {
		return nil, err
	}
	names := []string{"", "scale", "B", "input_mean", "input_var"}
	for i := 1; i <= 4; i++ {
		if err := needFloat(n.Op, in[i]); err != nil {
			return nil, err
		}
		if err := checkLen(names[i], in[i], channels); err != nil {
			return nil, err
		}
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	scale, bias, mean, variance := floatsOf(in[1]), floatsOf(in[2]), floatsOf(in[3]), floatsOf(in[4])
	out := ir.NewTensor(x.DType, x.Shape)
	for b := 0; b < batch; b++ {
		for c := 0; c < channels; c++ {
			inv := 1 / math.Sqrt(variance[c]+eps)
			for s := 0; s < spatial; s++ {
				i := (b*channels+c)*spatial + s
				out.SetFloat64(i, (x.Float64(i)-mean[c])*inv*scale[c]+bias[c])
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// moments returns the mean and the (population) variance of vals.
func moments(vals []float64) (mean, variance float64) {
	if len(vals) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(vals))
}

// instanceNorm normalizes each (n, c) plane of X over its spatial dims:
// Y = scale[c] * (X - mean) / sqrt(var + epsilon) + B[c].
func instanceNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	x := in[0]
	batch, channels, spatial, err := channelInput(n.Op, x)
	if err != nil {
		return nil, err
	}
	if err := checkLen("scale", in[1], channels); err != nil {
		return nil, err
	}
	if err := checkLen("B", in[2], channels); err != nil {
		return nil, err
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	scale, bias := floatsOf(in[1]), floatsOf(in[2])
	xs := floatsOf(x)
	out := ir.NewTensor(x.DType, x.Shape)
	for b := 0; b < batch; b++ {
		for c := 0; c < channels; c++ {
			base := (b*channels + c) * spatial
			mean, variance := moments(xs[base : base+spatial])
			inv := 1 / math.Sqrt(variance+eps)
			for s := 0; s < spatial; s++ {
				out.SetFloat64(base+s, scale[c]*(xs[base+s]-mean)*inv+bias[c])
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// broadcastTo returns, for a parameter p that broadcasts unidirectionally
// (numpy rules, right-aligned) to shape, the linear index into p of every
// element of shape.
func broadcastTo(name string, p *ir.Tensor, shape []int64) ([]int, error) {
	if len(p.Shape) > len(shape) {
		return nil, fmt.Errorf("%s of shape %v does not broadcast to %v", name, p.Shape, shape)
	}
	off := len(shape) - len(p.Shape)
	for i, d := range p.Shape {
		if d != 1 && d != shape[off+i] {
			return nil, fmt.Errorf("%s of shape %v does not broadcast to %v", name, p.Shape, shape)
		}
	}
	idx := make([]int, product(shape))
	it := ref.NewIndexer(shape, ref.BroadcastStrides(p.Shape, shape))
	for i := range idx {
		idx[i] = int(it.Offsets[0])
		it.Next()
	}
	return idx, nil
}

// layerNorm normalizes X over its dims [axis, rank): with D = X - Mean and
// InvStdDev = 1/sqrt(mean(D²) + epsilon), Y = D * InvStdDev * Scale + B.
// The optional outputs Mean and InvStdDev have X's shape with the normalized
// dims set to 1; their dtype is the one the node declares, else stash_type's.
func layerNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	if len(n.Outputs) > 3 {
		return nil, fmt.Errorf("LayerNormalization has %d outputs, want at most 3", len(n.Outputs))
	}
	rank := len(x.Shape)
	axis, err := ref.NormAxis(n.AttrInt("axis", -1), rank)
	if err != nil {
		return nil, err
	}
	statDT, ok := onnxFloatType(n.AttrInt("stash_type", 1))
	if !ok {
		return nil, ref.Unsupported("LayerNormalization stash_type %d", n.AttrInt("stash_type", 1))
	}
	scaleIdx, err := broadcastTo("Scale", in[1], x.Shape)
	if err != nil {
		return nil, err
	}
	var biasIdx []int
	if len(in) > 2 && in[2] != nil {
		if biasIdx, err = broadcastTo("B", in[2], x.Shape); err != nil {
			return nil, err
		}
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	rows, cols := product(x.Shape[:axis]), product(x.Shape[axis:])
	xs := floatsOf(x)
	out := ir.NewTensor(x.DType, x.Shape)
	means, invs := make([]float64, rows), make([]float64, rows)
	for r := 0; r < rows; r++ {
		mean, variance := moments(xs[r*cols : (r+1)*cols])
		inv := 1 / math.Sqrt(variance+eps)
		means[r], invs[r] = mean, inv
		for c := 0; c < cols; c++ {
			i := r*cols + c
			y := (xs[i] - mean) * inv * in[1].Float64(scaleIdx[i])
			if biasIdx != nil {
				y += in[2].Float64(biasIdx[i])
			}
			out.SetFloat64(i, y)
		}
	}
	statShape := append([]int64{}, x.Shape...)
	for d := axis; d < rank; d++ {
		statShape[d] = 1
	}
	outs := []*ir.Tensor{out}
	for k, vals := range [][]float64{means, invs} {
		if len(n.Outputs) <= k+1 {
			break
		}
		dt := statDT
		if d := n.Outputs[k+1].DType; d.IsFloat() {
			dt = d
		}
		outs = append(outs, fromFloats(dt, statShape, vals))
	}
	return outs, nil
}

// groupNorm splits the C channels of X [N, C, ...] into num_groups groups,
// normalizes each (n, group) over its channels and spatial dims, then
// applies scale and bias per channel (opset 21: length C) or per group
// (opset 18: length num_groups).
func groupNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	x := in[0]
	batch, channels, spatial, err := channelInput(n.Op, x)
	if err != nil {
		return nil, err
	}
	if !n.Has("num_groups") {
		return nil, fmt.Errorf("GroupNormalization without num_groups")
	}
	groups := int(n.AttrInt("num_groups", 0))
	if groups <= 0 || channels%groups != 0 {
		return nil, fmt.Errorf("num_groups %d does not divide the %d channels", groups, channels)
	}
	perGroup := channels / groups
	// paramIndex maps a channel to its scale/bias element.
	var paramIndex func(c int) int
	switch in[1].Len() {
	case channels:
		paramIndex = func(c int) int { return c }
	case groups:
		paramIndex = func(c int) int { return c / perGroup }
	default:
		return nil, fmt.Errorf("scale has %d elements, want %d (channels) or %d (groups)", in[1].Len(), channels, groups)
	}
	if in[2].Len() != in[1].Len() {
		return nil, fmt.Errorf("bias has %d elements, scale %d", in[2].Len(), in[1].Len())
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	scale, bias := floatsOf(in[1]), floatsOf(in[2])
	xs := floatsOf(x)
	out := ir.NewTensor(x.DType, x.Shape)
	span := perGroup * spatial
	for b := 0; b < batch; b++ {
		for g := 0; g < groups; g++ {
			base := (b*groups + g) * span
			mean, variance := moments(xs[base : base+span])
			inv := 1 / math.Sqrt(variance+eps)
			for j := 0; j < span; j++ {
				p := paramIndex(g*perGroup + j/spatial)
				out.SetFloat64(base+j, (xs[base+j]-mean)*inv*scale[p]+bias[p])
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// mvnEpsilon is the constant of the ONNX MeanVarianceNormalization function
// body, added to the standard deviation (not the variance).
const mvnEpsilon = 1e-9

// meanVarianceNorm computes (X - mean) / (sqrt(var) + 1e-9) with mean and
// variance taken over the axes attribute (default [0, 2, 3]).
func meanVarianceNorm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := needFloat(n.Op, x); err != nil {
		return nil, err
	}
	axes, err := ref.NormAxes(n.AttrInts("axes", []int64{0, 2, 3}), len(x.Shape))
	if err != nil {
		return nil, err
	}
	reduced := make([]bool, len(x.Shape))
	for _, a := range axes {
		reduced[a] = true
	}
	r := planReduction(x.Shape, reduced, true)
	xs := floatsOf(x)
	mean, variance := make([]float64, r.nOut), make([]float64, r.nOut)
	for i, o := range r.group {
		mean[o] += xs[i]
	}
	for o := range mean {
		mean[o] /= float64(r.count)
	}
	for i, o := range r.group {
		d := xs[i] - mean[o]
		variance[o] += d * d
	}
	out := ir.NewTensor(x.DType, x.Shape)
	for i, o := range r.group {
		std := math.Sqrt(variance[o] / float64(r.count))
		out.SetFloat64(i, (xs[i]-mean[o])/(std+mvnEpsilon))
	}
	return []*ir.Tensor{out}, nil
}

// lrn is local response normalization across channels:
// Y[n,c,...] = X[n,c,...] / (bias + alpha/size * sum(X[n,i,...]²))^beta,
// i running over [c - floor((size-1)/2), c + ceil((size-1)/2)] ∩ [0, C).
func lrn(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	batch, channels, spatial, err := channelInput(n.Op, x)
	if err != nil {
		return nil, err
	}
	size := n.AttrInt("size", 0)
	if size <= 0 {
		return nil, fmt.Errorf("LRN size %d, want a positive size", size)
	}
	alpha := float64(n.AttrFloat("alpha", 1e-4))
	beta := float64(n.AttrFloat("beta", 0.75))
	bias := float64(n.AttrFloat("bias", 1))
	before, after := int((size-1)/2), int(size/2) // floor and ceil of (size-1)/2
	xs := floatsOf(x)
	out := ir.NewTensor(x.DType, x.Shape)
	for b := 0; b < batch; b++ {
		for c := 0; c < channels; c++ {
			for s := 0; s < spatial; s++ {
				sq := 0.0
				for k := max(0, c-before); k <= min(channels-1, c+after); k++ {
					v := xs[(b*channels+k)*spatial+s]
					sq += v * v
				}
				i := (b*channels+c)*spatial + s
				out.SetFloat64(i, xs[i]/math.Pow(bias+alpha/float64(size)*sq, beta))
			}
		}
	}
	return []*ir.Tensor{out}, nil
}
