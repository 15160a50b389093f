package vulkan

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// This file turns a node into shader dispatches. It knows the ops, their
// attributes and their shapes, and nothing of Vulkan objects: the same
// planning answers Supports (an error: not supported) and drives Compile.

// shaderInfo describes a shader of shaders/: its storage-buffer bindings
// (in binding order) and its push-constant words.
type shaderInfo struct {
	bindings int
	push     int // 32-bit words
}

var shaderTable = map[string]shaderInfo{
	"unary":     {2, 4},
	"binary":    {3, 20},
	"transpose": {2, 13},
	"softmax":   {2, 2},
	"norm":      {4, 5},
	"matmul":    {4, 25},
	// matmul.comp's f16 variants (see the shader): B stored as f16; all
	// f16 with f32 sums; all f16 with f16 tile products.
	"matmul_wf16": {4, 25},
	"matmul_f16":  {4, 25},
	"matmul_f16a": {4, 25},
	"strided":     {2, 21},
	"reduce":      {2, 3},
	"pool":        {2, 17},
	"conv":        {5, 21},
	"attention":   {5, 14},
	"gather":      {3, 4},
	"qmatmul":     {3, 4},
	// qmatmul.comp with f16 weights read through 16-bit storage.
	"qmatmul_f16": {3, 4},
	"rope":        {5, 6},
}

// Workgroup sizes, as the shaders declare them.
const (
	elemGroup = 256 // unary, binary, transpose
	tile      = 16  // matmul
	elemRank  = 6   // binary, transpose: the rank shapes are aligned to
	batchRank = 4   // matmul: batch dims
)

// Activation codes, as act.glsl numbers them.
const (
	actNone uint32 = iota
	actRelu
	actSigmoid
	actTanh
	actGelu
	actGeluTanh
	actSiLU
	actExp
	actLeakyRelu
	actClip
	actNeg
	actAbs
	actSqrt
	actReciprocal
	actLog
	actErf
	actHardSigmoid
)

// dispatch is one shader invocation: the values bound to its storage
// buffers (in binding order), its push constants and its workgroup counts.
type dispatch struct {
	shader string
	args   []*ir.Value
	push   []uint32
	groups [3]uint32
	// index, when set, is an integer tensor the shader indexes with: the
	// executable checks its values against [-bound, bound) on the host
	// before the dispatch, so that no read is out of bounds.
	index *ir.Value
	bound int64
	// nonNeg narrows the check to [0, bound) (RotaryEmbedding positions).
	nonNeg bool
	// halfArgs has bit i set when args[i] is an f32 constant that the
	// shader reads as f16: the executable uploads it converted (rounded to
	// nearest even), a copy of its own (the F16Weights opt-in).
	halfArgs uint32
}

// limits are the device limits planning must respect.
type limits struct {
	maxGroups       [3]uint32
	maxStorageRange uint64
}

// unsupported returns an error wrapping ir.ErrUnsupported in this
// backend's words: "vulkan: Op: why: unsupported".
func unsupported(n *ir.Node, format string, args ...any) error {
	return fmt.Errorf("vulkan: %s: %s: %w", n.Op, fmt.Sprintf(format, args...), ir.ErrUnsupported)
}

// checkTypes accepts a node whose data values (dataValues: the tensors its
// shaders read and write) are all f32 tensors of static, non-empty shape
// that fit one storage-buffer binding.
func checkTypes(n *ir.Node, q Quirks, lim limits) error {
	vals, err := dataValues(n)
	if err != nil {
		return err
	}
	for _, v := range vals {
		if v == nil {
			continue
		}
		switch v.DType {
		case ir.Float32:
		case ir.Float16:
			if !q.F16Storage {
				return unsupported(n, "f16 storage not enabled (no storageBuffer16BitAccess, or WEFT_VULKAN_FP16=0 or WEFT_VULKAN_FP16_STORAGE=0)")
			}
			if n.Op != "MatMul" && n.Op != "FusedMatMul" {
				return unsupported(n, "f16 data (the f16 kernels are MatMul and FusedMatMul)")
			}
			for _, w := range vals {
				if w != nil && w.DType != ir.Float16 {
					return unsupported(n, "mixed dtypes %v and %v", v.DType, w.DType)
				}
			}
		default:
			return unsupported(n, "dtype %v (only f32 kernels so far)", v.DType)
		}
		if !v.Shape.Static() {
			return unsupported(n, "value %v has a dynamic shape", v)
		}
		ne := v.Shape.NumElements()
		if ne == 0 {
			return unsupported(n, "value %v is empty", v)
		}
		if ne > math.MaxUint32 || uint64(v.DType.Bytes(ne)) > lim.maxStorageRange {
			return unsupported(n, "value %v is larger than one storage buffer binding (%d bytes)", v, lim.maxStorageRange)
		}
	}
	return nil
}

// planNode returns the dispatches that compute n.
func planNode(n *ir.Node, q Quirks, lim limits) ([]dispatch, error) {
	if err := checkTypes(n, q, lim); err != nil {
		return nil, err
	}
	if n.Op == "Fused" {
		return planFused(n, q, lim)
	}
	if len(n.Subgraphs()) > 0 {
		return nil, unsupported(n, "subgraphs")
	}
	switch n.Op {
	case "Add", "Sub", "Mul", "Div", "Max", "Min":
		return planBinary(n, lim)
	case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", ir.OpTransfer:
		return planCopy(n, lim)
	case "Concat":
		return planConcat(n, lim)
	case "Slice":
		return planSlice(n, lim)
	case "Gather":
		return planGather(n, lim)
	case "ReduceMean", "ReduceSum", "GlobalAveragePool":
		return planReduce(n, lim)
	case "MaxPool", "AveragePool":
		return planPool(n, lim)
	case "Conv", "FusedConv":
		return planConv(n, lim)
	case "Attention":
		return planAttention(n, lim)
	case "Relu", "Sigmoid", "Tanh", "Gelu", "SiLU", "Exp", "Neg", "Abs", "Sqrt", "Reciprocal", "Log", "Erf", "LeakyRelu", "HardSigmoid":
		return planUnary(n, lim)
	case "Softmax":
		return planSoftmax(n, lim)
	case "LayerNormalization", "RMSNormalization":
		return planNorm(n, lim)
	case "Transpose":
		return planTranspose(n, lim)
	case "MatMul", "FusedMatMul":
		return planMatMul(n, q, lim)
	case "QMatMul":
		return planQMatMul(n, q, lim)
	case "RotaryEmbedding":
		return planRope(n, lim)
	}
	return nil, unsupported(n, "no shader for this op")
}

// needIO checks the number of inputs (present ones first) and outputs.
func needIO(n *ir.Node, minIn, maxIn int) error {
	present := 0
	for _, v := range n.Inputs {
		if v != nil {
			present++
		}
	}
	if len(n.Inputs) > maxIn || n.In(0) == nil || present < minIn {
		return unsupported(n, "%d inputs, want %d to %d", len(n.Inputs), minIn, maxIn)
	}
	for i := 0; i < minIn; i++ {
		if n.In(i) == nil {
			return unsupported(n, "input %d is absent", i)
		}
	}
	if len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return unsupported(n, "%d outputs, want 1", len(n.Outputs))
	}
	return nil
}

// groups1D lays out count workgroups as (x, y) within the device limits;
// common.glsl's linear_id/linear_group undo it.
func groups1D(n *ir.Node, count uint64, lim limits) ([3]uint32, error) {
	if count == 0 {
		count = 1
	}
	x := min(count, uint64(lim.maxGroups[0]))
	y := (count + x - 1) / x
	if y > uint64(lim.maxGroups[1]) {
		return [3]uint32{}, unsupported(n, "%d workgroups exceed the device's dispatch limits", count)
	}
	return [3]uint32{uint32(x), uint32(y), 1}, nil
}

// contiguousStrides returns the row-major element strides of shape.
func contiguousStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// broadcastStrides returns the strides with which an operand of shape in
// is read at each index of out (right-aligned, 0 where it broadcasts).
func broadcastStrides(n *ir.Node, in, out []int64) ([]int64, error) {
	if len(in) > len(out) {
		return nil, fmt.Errorf("vulkan: %v: operand shape %v has more dims than the result %v", n, in, out)
	}
	cs := contiguousStrides(in)
	s := make([]int64, len(out))
	off := len(out) - len(in)
	for i, d := range in {
		switch {
		case d == out[off+i]:
			s[off+i] = cs[i]
		case d == 1:
		default:
			return nil, fmt.Errorf("vulkan: %v: shape %v does not broadcast to %v", n, in, out)
		}
	}
	return s, nil
}

// alignRight pads v on the left with pad to length r.
func alignRight(v []int64, r int, pad int64) []uint32 {
	out := make([]uint32, r)
	for i := range out {
		out[i] = uint32(pad)
	}
	for i, x := range v {
		out[r-len(v)+i] = uint32(x)
	}
	return out
}

func planBinary(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 2, 2); err != nil {
		return nil, err
	}
	out := n.Outputs[0].Shape.Ints()
	if len(out) > elemRank {
		return nil, unsupported(n, "rank %d > %d", len(out), elemRank)
	}
	sa, err := broadcastStrides(n, n.Inputs[0].Shape.Ints(), out)
	if err != nil {
		return nil, err
	}
	sb, err := broadcastStrides(n, n.Inputs[1].Shape.Ints(), out)
	if err != nil {
		return nil, err
	}
	total := uint64(ir.NumElements(out))
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	op := map[string]uint32{"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5}[n.Op]
	push := []uint32{uint32(total), op}
	push = append(push, alignRight(out, elemRank, 1)...)
	push = append(push, alignRight(sa, elemRank, 0)...)
	push = append(push, alignRight(sb, elemRank, 0)...)
	return []dispatch{{shader: "binary", args: []*ir.Value{n.Inputs[0], n.Inputs[1], n.Outputs[0]}, push: push, groups: g}}, nil
}

// activationOf returns the activation code and parameters of a unary op or
// of FusedMatMul's activation attribute.
func activationOf(n *ir.Node, name string) (code uint32, alpha, beta float32, err error) {
	switch name {
	case "":
		return actNone, 0, 0, nil
	case "Relu":
		return actRelu, 0, 0, nil
	case "Sigmoid":
		return actSigmoid, 0, 0, nil
	case "Tanh":
		return actTanh, 0, 0, nil
	case "Gelu":
		return actGelu, 0, 0, nil
	case "GeluTanh":
		return actGeluTanh, 0, 0, nil
	case "SiLU":
		return actSiLU, 0, 0, nil
	case "Exp":
		return actExp, 0, 0, nil
	case "Neg":
		return actNeg, 0, 0, nil
	case "Abs":
		return actAbs, 0, 0, nil
	case "Sqrt":
		return actSqrt, 0, 0, nil
	case "Reciprocal":
		return actReciprocal, 0, 0, nil
	case "Log":
		return actLog, 0, 0, nil
	case "Erf":
		return actErf, 0, 0, nil
	case "HardSigmoid":
		return actHardSigmoid, 0, 0, nil
	case "LeakyRelu":
		return actLeakyRelu, n.AttrFloat("activation_alpha", 0.01), 0, nil
	case "Clip":
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		if n.Has("activation_alpha") {
			lo = n.AttrFloat("activation_alpha", 0)
		}
		if n.Has("activation_beta") {
			hi = n.AttrFloat("activation_beta", 0)
		}
		return actClip, lo, hi, nil
	}
	return 0, 0, 0, unsupported(n, "activation %q", name)
}

func planUnary(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 1, 1); err != nil {
		return nil, err
	}
	name := n.Op
	if n.Op == "Gelu" {
		switch a := n.AttrString("approximate", "none"); a {
		case "none":
		case "tanh":
			name = "GeluTanh"
		default:
			return nil, unsupported(n, "approximate=%q", a)
		}
	}
	code, alpha, beta, err := activationOf(n, name)
	if err != nil {
		return nil, err
	}
	switch n.Op { // the ops' own attributes (activationOf reads FusedMatMul's)
	case "LeakyRelu":
		alpha = n.AttrFloat("alpha", 0.01)
	case "HardSigmoid":
		alpha, beta = n.AttrFloat("alpha", 0.2), n.AttrFloat("beta", 0.5)
	}
	total := uint64(n.Outputs[0].Shape.NumElements())
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	push := []uint32{uint32(total), code, math.Float32bits(alpha), math.Float32bits(beta)}
	return []dispatch{{shader: "unary", args: []*ir.Value{n.Inputs[0], n.Outputs[0]}, push: push, groups: g}}, nil
}

// rowsCols splits shape at axis into contiguous rows × cols.
func rowsCols(shape []int64, axis int) (rows, cols uint64) {
	return uint64(ir.NumElements(shape[:axis])), uint64(ir.NumElements(shape[axis:]))
}

// normAxis resolves a possibly negative axis for rank r (r allowed when
// allowRank, as legacy Softmax does).
func normAxis(n *ir.Node, a int64, r int, allowRank bool) (int, error) {
	if a < 0 {
		a += int64(r)
	}
	hi := int64(r) - 1
	if allowRank {
		hi = int64(r)
	}
	if a < 0 || a > hi {
		return 0, fmt.Errorf("vulkan: %v: axis %d out of range for rank %d", n, a, r)
	}
	return int(a), nil
}

func planSoftmax(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 1, 1); err != nil {
		return nil, err
	}
	shape := n.Inputs[0].Shape.Ints()
	var axis int
	var err error
	if n.AttrInt("legacy_axis", 0) != 0 {
		// Opset < 13: the input is a 2-D matrix split at axis.
		axis, err = normAxis(n, n.AttrInt("axis", 1), len(shape), true)
	} else {
		if axis, err = normAxis(n, n.AttrInt("axis", -1), len(shape), false); err == nil && axis != len(shape)-1 {
			return nil, unsupported(n, "axis %d is not the last axis", axis)
		}
	}
	if err != nil {
		return nil, err
	}
	rows, cols := rowsCols(shape, axis)
	g, err := groups1D(n, rows, lim)
	if err != nil {
		return nil, err
	}
	return []dispatch{{shader: "softmax", args: []*ir.Value{n.Inputs[0], n.Outputs[0]}, push: []uint32{uint32(rows), uint32(cols)}, groups: g}}, nil
}

func planTranspose(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 1, 1); err != nil {
		return nil, err
	}
	in := n.Inputs[0].Shape.Ints()
	r := len(in)
	if r > elemRank {
		return nil, unsupported(n, "rank %d > %d", r, elemRank)
	}
	perm := n.AttrInts("perm", nil)
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return nil, fmt.Errorf("vulkan: %v: perm %v for rank %d", n, perm, r)
	}
	seen := make([]bool, r)
	cs := contiguousStrides(in)
	out, sx := make([]int64, r), make([]int64, r)
	for i, p := range perm {
		if p < 0 {
			p += int64(r)
		}
		if p < 0 || p >= int64(r) || seen[p] {
			return nil, fmt.Errorf("vulkan: %v: perm %v is not a permutation", n, perm)
		}
		seen[p] = true
		out[i], sx[i] = in[p], cs[p]
	}
	total := uint64(ir.NumElements(out))
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	push := []uint32{uint32(total)}
	push = append(push, alignRight(out, elemRank, 1)...)
	push = append(push, alignRight(sx, elemRank, 0)...)
	return []dispatch{{shader: "transpose", args: []*ir.Value{n.Inputs[0], n.Outputs[0]}, push: push, groups: g}}, nil
}

// planMatMul covers MatMul (ONNX semantics: 1-D operands promoted, batch
// dims broadcast) and FusedMatMul (plus a broadcast Bias and an activation).
//
// The shader follows the precision policy of quirks.go: f16 data runs the
// f16 variants (f16 tile products where F16Arith holds), and f32 data with
// a constant B reads B as f16 under the F16Weights opt-in.
func planMatMul(n *ir.Node, q Quirks, lim limits) ([]dispatch, error) {
	fused := n.Op == "FusedMatMul"
	maxIn := 2
	if fused {
		maxIn = 3
	}
	if err := needIO(n, 2, maxIn); err != nil {
		return nil, err
	}
	a, b := n.Inputs[0].Shape.Ints(), n.Inputs[1].Shape.Ints()
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("vulkan: %v: scalar operand", n)
	}
	vecA, vecB := len(a) == 1, len(b) == 1
	if vecA {
		a = []int64{1, a[0]}
	}
	if vecB {
		b = []int64{b[0], 1}
	}
	M, K, K2, N := a[len(a)-2], a[len(a)-1], b[len(b)-2], b[len(b)-1]
	if K != K2 {
		return nil, fmt.Errorf("vulkan: %v: inner dims %d and %d differ (%v · %v)", n, K, K2, n.Inputs[0].Shape, n.Inputs[1].Shape)
	}
	ab, bb := a[:len(a)-2], b[:len(b)-2]
	r := max(len(ab), len(bb))
	if r > batchRank {
		return nil, unsupported(n, "%d batch dims > %d", r, batchRank)
	}
	batch := make([]int64, r)
	for i := range batch {
		da, db := int64(1), int64(1)
		if j := i - (r - len(ab)); j >= 0 {
			da = ab[j]
		}
		if j := i - (r - len(bb)); j >= 0 {
			db = bb[j]
		}
		switch {
		case da == db || db == 1:
			batch[i] = da
		case da == 1:
			batch[i] = db
		default:
			return nil, fmt.Errorf("vulkan: %v: batch dims %v and %v do not broadcast", n, ab, bb)
		}
	}
	sa, err := broadcastStrides(n, ab, batch)
	if err != nil {
		return nil, err
	}
	sb, err := broadcastStrides(n, bb, batch)
	if err != nil {
		return nil, err
	}
	for i := range sa {
		sa[i] *= M * K
		sb[i] *= K * N
	}
	Z := uint64(ir.NumElements(batch))
	gx, gy := uint64((N+tile-1)/tile), uint64((M+tile-1)/tile)
	if gx > uint64(lim.maxGroups[0]) || gy > uint64(lim.maxGroups[1]) || Z > uint64(lim.maxGroups[2]) {
		return nil, unsupported(n, "%d×%d×%d workgroups exceed the device's dispatch limits", gx, gy, Z)
	}

	code, alpha, beta := actNone, float32(0), float32(0)
	hasBias, sc, scm, scn := uint32(0), make([]int64, r), int64(0), int64(0)
	bias := n.Inputs[0]
	if fused {
		if code, alpha, beta, err = activationOf(n, n.AttrString("activation", "")); err != nil {
			return nil, err
		}
		if bv := n.In(2); bv != nil {
			if vecA || vecB {
				return nil, unsupported(n, "a Bias with a 1-D operand")
			}
			full := append(append([]int64{}, batch...), M, N)
			s, err := broadcastStrides(n, bv.Shape.Ints(), full)
			if err != nil {
				return nil, err
			}
			hasBias, bias, sc, scm, scn = 1, bv, s[:r], s[r], s[r+1]
		}
	}
	push := []uint32{uint32(M), uint32(N), uint32(K), code}
	push = append(push, alignRight(batch, batchRank, 1)...)
	push = append(push, alignRight(sa, batchRank, 0)...)
	push = append(push, alignRight(sb, batchRank, 0)...)
	push = append(push, alignRight(sc, batchRank, 0)...)
	push = append(push, uint32(scm), uint32(scn), hasBias, math.Float32bits(alpha), math.Float32bits(beta))
	args := []*ir.Value{n.Inputs[0], n.Inputs[1], bias, n.Outputs[0]}
	dp := dispatch{shader: "matmul", args: args, push: push, groups: [3]uint32{uint32(gx), uint32(gy), uint32(Z)}}
	switch {
	case n.Outputs[0].DType == ir.Float16 && q.F16Arith:
		dp.shader = "matmul_f16a"
	case n.Outputs[0].DType == ir.Float16:
		dp.shader = "matmul_f16"
	case q.F16Weights && n.Inputs[1].IsConst() && n.Inputs[1].DType == ir.Float32:
		dp.shader, dp.halfArgs = "matmul_wf16", 1<<1
	}
	return []dispatch{dp}, nil
}
