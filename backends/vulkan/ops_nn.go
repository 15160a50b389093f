package vulkan

import (
	"fmt"
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

// This file plans the neural-network ops: LayerNormalization and
// RMSNormalization, reductions over trailing axes
// (ReduceMean, ReduceSum, GlobalAveragePool), 1-D and 2-D pooling and
// convolution, and weft's Attention.

// planReduce reduces a contiguous run of trailing axes: rows × cols.
func planReduce(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 1, 2); err != nil {
		return nil, err
	}
	shape := n.Inputs[0].Shape.Ints()
	r := len(shape)
	first := r // the first reduced axis
	mode := uint32(1)
	switch n.Op {
	case "GlobalAveragePool":
		if r < 3 {
			return nil, fmt.Errorf("vulkan: %v: input rank %d < 3", n, r)
		}
		first = 2
	default:
		if n.Op == "ReduceSum" {
			mode = 0
		}
		axes, ok, err := constInts(n, 1)
		if err != nil {
			return nil, err
		}
		if !ok && n.Has("axes") { // the attribute form of older opsets
			axes, ok = n.AttrInts("axes", nil), true
		}
		if !ok || len(axes) == 0 {
			if n.AttrInt("noop_with_empty_axes", 0) != 0 {
				return nil, unsupported(n, "noop_with_empty_axes with no axes")
			}
			first = 0
			break
		}
		norm := make([]int64, len(axes))
		for i, a := range axes {
			ax, err := normAxis(n, a, r, false)
			if err != nil {
				return nil, err
			}
			norm[i] = int64(ax)
		}
		slices.Sort(norm)
		for i, a := range norm {
			if a != int64(r-len(norm)+i) {
				return nil, unsupported(n, "axes %v are not the trailing axes", axes)
			}
		}
		first = r - len(norm)
	}
	rows, cols := rowsCols(shape, first)
	if n.Outputs[0].Shape.NumElements() != int64(rows) {
		return nil, fmt.Errorf("vulkan: %v: output %v does not hold %d rows", n, n.Outputs[0].Shape, rows)
	}
	g, err := groups1D(n, rows, lim)
	if err != nil {
		return nil, err
	}
	return []dispatch{{shader: "reduce", args: []*ir.Value{n.Inputs[0], n.Outputs[0]}, push: []uint32{uint32(rows), uint32(cols), mode}, groups: g}}, nil
}

// window is the geometry of one spatial axis of a pool or a convolution.
type window struct {
	in, k, stride, dil, padB, padE, out int64
}

// windows resolves kernel, strides, dilations, pads and auto_pad of n over
// the spatial dims in and checks the output sizes against out (the node's
// inferred output), with the ONNX formulas the CPU reference uses.
func windows(n *ir.Node, in, kernel, out []int64, ceilMode bool) ([]window, error) {
	r := len(in)
	strides, dils, pads := n.AttrInts("strides", nil), n.AttrInts("dilations", nil), n.AttrInts("pads", nil)
	if strides != nil && len(strides) != r || dils != nil && len(dils) != r || pads != nil && len(pads) != 2*r || len(kernel) != r {
		return nil, fmt.Errorf("vulkan: %v: kernel, strides, dilations or pads do not match %d spatial dims", n, r)
	}
	autoPad := n.AttrString("auto_pad", "NOTSET")
	ws := make([]window, r)
	for d := range ws {
		w := window{in: in[d], k: kernel[d], stride: 1, dil: 1}
		if strides != nil {
			w.stride = strides[d]
		}
		if dils != nil {
			w.dil = dils[d]
		}
		if w.k <= 0 || w.stride <= 0 || w.dil <= 0 {
			return nil, fmt.Errorf("vulkan: %v: kernel %d, stride %d, dilation %d must be positive", n, w.k, w.stride, w.dil)
		}
		span := (w.k-1)*w.dil + 1
		switch autoPad {
		case "NOTSET", "":
			if pads != nil {
				w.padB, w.padE = pads[d], pads[d+r]
			}
			if w.padB < 0 || w.padE < 0 {
				return nil, fmt.Errorf("vulkan: %v: negative pads %v", n, pads)
			}
			num := w.in + w.padB + w.padE - span
			if num < 0 {
				return nil, fmt.Errorf("vulkan: %v: window larger than the padded input", n)
			}
			w.out = num/w.stride + 1
			if ceilMode {
				w.out = (num+w.stride-1)/w.stride + 1
				if (w.out-1)*w.stride >= w.in+w.padB {
					w.out--
				}
			}
		case "VALID":
			if w.in < span {
				return nil, fmt.Errorf("vulkan: %v: window larger than the input", n)
			}
			w.out = (w.in-span)/w.stride + 1
		case "SAME_UPPER", "SAME_LOWER":
			w.out = (w.in + w.stride - 1) / w.stride
			total := max(0, (w.out-1)*w.stride+span-w.in)
			w.padB, w.padE = total/2, total-total/2
			if autoPad == "SAME_LOWER" {
				w.padB, w.padE = w.padE, w.padB
			}
		default:
			return nil, fmt.Errorf("vulkan: %v: unknown auto_pad %q", n, autoPad)
		}
		if w.out != out[d] {
			return nil, fmt.Errorf("vulkan: %v: axis %d: the geometry gives %d outputs, the node has %d", n, d, w.out, out[d])
		}
		ws[d] = w
	}
	if r == 1 { // 1-D: a 2-D window of height 1
		ws = []window{{in: 1, k: 1, stride: 1, dil: 1, out: 1}, ws[0]}
	}
	return ws, nil
}

// spatial splits a [N, C, spatial...] shape, accepting 1 or 2 spatial dims.
func spatial(n *ir.Node, shape []int64) (nb, c int64, sp []int64, err error) {
	if len(shape) != 3 && len(shape) != 4 {
		return 0, 0, nil, unsupported(n, "rank %d (only 1-D and 2-D spatial dims)", len(shape))
	}
	return shape[0], shape[1], shape[2:], nil
}

func u32s(vs ...int64) []uint32 {
	out := make([]uint32, len(vs))
	for i, v := range vs {
		out[i] = uint32(v)
	}
	return out
}

func planPool(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 1, 1); err != nil {
		return nil, err
	}
	nb, c, in, err := spatial(n, n.Inputs[0].Shape.Ints())
	if err != nil {
		return nil, err
	}
	out := n.Outputs[0].Shape.Ints()
	if len(out) != len(in)+2 || out[0] != nb || out[1] != c {
		return nil, fmt.Errorf("vulkan: %v: output %v does not match input %v", n, n.Outputs[0].Shape, n.Inputs[0].Shape)
	}
	ws, err := windows(n, in, n.AttrInts("kernel_shape", nil), out[2:], n.AttrInt("ceil_mode", 0) != 0)
	if err != nil {
		return nil, err
	}
	mode, includePad := uint32(0), uint32(0)
	if n.Op == "AveragePool" {
		mode = 1
		if n.AttrInt("count_include_pad", 0) != 0 {
			includePad = 1
		}
	}
	total := uint64(nb * c * ws[0].out * ws[1].out)
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	h, w := ws[0], ws[1]
	push := u32s(int64(total), h.in, w.in, h.out, w.out, h.k, w.k, h.stride, w.stride, h.dil, w.dil, h.padB, w.padB, h.padE, w.padE)
	push = append(push, mode, includePad)
	return []dispatch{{shader: "pool", args: []*ir.Value{n.Inputs[0], n.Outputs[0]}, push: push, groups: g}}, nil
}

// planConv covers Conv and FusedConv (bias, residual Z, activation) over
// 1 or 2 spatial dims.
func planConv(n *ir.Node, lim limits) ([]dispatch, error) {
	fused := n.Op == "FusedConv"
	maxIn := 3
	if fused {
		maxIn = 4
	}
	if err := needIO(n, 2, maxIn); err != nil {
		return nil, err
	}
	nb, c, in, err := spatial(n, n.Inputs[0].Shape.Ints())
	if err != nil {
		return nil, err
	}
	wt := n.Inputs[1].Shape.Ints()
	out := n.Outputs[0].Shape.Ints()
	groups := n.AttrInt("group", 1)
	if len(wt) != len(in)+2 || len(out) != len(in)+2 || groups <= 0 {
		return nil, fmt.Errorf("vulkan: %v: shapes X %v, W %v, Y %v, group %d do not fit", n, n.Inputs[0].Shape, n.Inputs[1].Shape, n.Outputs[0].Shape, groups)
	}
	m := wt[0]
	if c%groups != 0 || m%groups != 0 || wt[1] != c/groups || out[0] != nb || out[1] != m {
		return nil, fmt.Errorf("vulkan: %v: X %v and W %v do not fit group %d", n, n.Inputs[0].Shape, n.Inputs[1].Shape, groups)
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		kernel = wt[2:]
	}
	if !slices.Equal(kernel, wt[2:]) {
		return nil, fmt.Errorf("vulkan: %v: kernel_shape %v, W %v", n, kernel, n.Inputs[1].Shape)
	}
	ws, err := windows(n, in, kernel, out[2:], false)
	if err != nil {
		return nil, err
	}
	hasBias, hasZ := uint32(0), uint32(0)
	bias, z := n.Inputs[0], n.Inputs[0]
	if b := n.In(2); b != nil {
		if b.Shape.NumElements() != m || len(b.Shape) != 1 {
			return nil, fmt.Errorf("vulkan: %v: bias %v, want [%d]", n, b.Shape, m)
		}
		hasBias, bias = 1, b
	}
	code, alpha, beta := actNone, float32(0), float32(0)
	if fused {
		if code, alpha, beta, err = activationOf(n, n.AttrString("activation", "")); err != nil {
			return nil, err
		}
		if zv := n.In(3); zv != nil {
			if !zv.Shape.Equal(n.Outputs[0].Shape) {
				return nil, unsupported(n, "residual Z %v is not the output's shape %v", zv.Shape, n.Outputs[0].Shape)
			}
			hasZ, z = 1, zv
		}
	}
	h, w := ws[0], ws[1]
	total := uint64(nb * m * h.out * w.out)
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	push := u32s(int64(total), c, h.in, w.in, m, h.out, w.out, h.k, w.k, h.stride, w.stride, h.dil, w.dil, h.padB, w.padB, groups)
	push = append(push, hasBias, hasZ, code, math.Float32bits(alpha), math.Float32bits(beta))
	args := []*ir.Value{n.Inputs[0], n.Inputs[1], bias, z, n.Outputs[0]}
	return []dispatch{{shader: "conv", args: args, push: push, groups: g}}, nil
}

// maxAttentionDv is the largest value head size attention.comp keeps in
// its per-invocation accumulator.
const maxAttentionDv = 256

func planAttention(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 3, 4); err != nil {
		return nil, err
	}
	q, k, v := n.Inputs[0].Shape.Ints(), n.Inputs[1].Shape.Ints(), n.Inputs[2].Shape.Ints()
	if len(q) != 4 || len(k) != 4 || len(v) != 4 {
		return nil, fmt.Errorf("vulkan: %v: Q, K, V must be 4-D", n)
	}
	b, h, sq, d := q[0], q[1], q[2], q[3]
	hkv, skv, dv := k[1], k[2], v[3]
	if k[0] != b || v[0] != b || k[3] != d || v[1] != hkv || v[2] != skv || hkv == 0 || h%hkv != 0 {
		return nil, fmt.Errorf("vulkan: %v: Q %v, K %v, V %v do not fit", n, n.Inputs[0].Shape, n.Inputs[1].Shape, n.Inputs[2].Shape)
	}
	if dv > maxAttentionDv {
		return nil, unsupported(n, "value head size %d > %d", dv, maxAttentionDv)
	}
	scale := float32(1 / math.Sqrt(float64(d)))
	if n.Has("scale") {
		scale = n.AttrFloat("scale", 0)
	}
	hasMask, ms, mask := uint32(0), []int64{0, 0, 0, 0}, n.Inputs[0]
	if mv := n.In(3); mv != nil {
		s, err := broadcastStrides(n, mv.Shape.Ints(), []int64{b, h, sq, skv})
		if err != nil {
			return nil, err
		}
		hasMask, ms, mask = 1, s, mv
	}
	rows := uint64(b * h * sq)
	g, err := groups1D(n, (rows+63)/64, lim)
	if err != nil {
		return nil, err
	}
	causal := uint32(0)
	if n.AttrInt("is_causal", 0) != 0 {
		causal = 1
	}
	push := u32s(int64(rows), h, hkv, sq, skv, d, dv)
	push = append(push, math.Float32bits(scale), causal, hasMask)
	push = append(push, u32s(ms...)...)
	args := []*ir.Value{n.Inputs[0], n.Inputs[1], n.Inputs[2], mask, n.Outputs[0]}
	return []dispatch{{shader: "attention", args: args, push: push, groups: g}}, nil
}

// trailing reports whether p (ignoring leading 1s) equals the dims of tail
// (ignoring leading 1s): an operand with one value per normalized element.
func trailing(p, tail []int64) bool {
	for len(p) > 0 && p[0] == 1 {
		p = p[1:]
	}
	for len(tail) > 0 && tail[0] == 1 {
		tail = tail[1:]
	}
	if len(p) != len(tail) {
		return false
	}
	for i := range p {
		if p[i] != tail[i] {
			return false
		}
	}
	return true
}

func planNorm(n *ir.Node, lim limits) ([]dispatch, error) {
	layer := n.Op == "LayerNormalization"
	maxIn := 2
	if layer {
		maxIn = 3
		if st := n.AttrInt("stash_type", 1); st != 1 {
			return nil, unsupported(n, "stash_type %d", st)
		}
	}
	if layer && len(n.Outputs) > 1 {
		return nil, unsupported(n, "the Mean and InvStdDev outputs")
	}
	if err := needIO(n, 2, maxIn); err != nil {
		return nil, err
	}
	shape := n.Inputs[0].Shape.Ints()
	axis, err := normAxis(n, n.AttrInt("axis", -1), len(shape), false)
	if err != nil {
		return nil, err
	}
	names := []string{"X", "Scale", "B"}
	for i := 1; i < len(n.Inputs); i++ {
		if v := n.Inputs[i]; v != nil && !trailing(v.Shape.Ints(), shape[axis:]) {
			return nil, unsupported(n, "%s of shape %v is not one value per normalized element %v", names[i], v.Shape, shape[axis:])
		}
	}
	rows, cols := rowsCols(shape, axis)
	g, err := groups1D(n, rows, lim)
	if err != nil {
		return nil, err
	}
	mode, hasBias, bias := uint32(1), uint32(0), n.Inputs[1]
	if layer {
		mode = 0
		if b := n.In(2); b != nil {
			hasBias, bias = 1, b
		}
	}
	push := []uint32{uint32(rows), uint32(cols), mode, hasBias, math.Float32bits(n.AttrFloat("epsilon", 1e-5))}
	return []dispatch{{shader: "norm", args: []*ir.Value{n.Inputs[0], n.Inputs[1], bias, n.Outputs[0]}, push: push, groups: g}}, nil
}
