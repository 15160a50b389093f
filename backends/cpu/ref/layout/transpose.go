package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that permute axes: Transpose and the block rearrangements
// DepthToSpace and SpaceToDepth (a reshape, a transpose and a reshape).
func init() {
	ref.Register("Transpose", transposeKernel)
	ref.Register("DepthToSpace", depthToSpaceKernel)
	ref.Register("SpaceToDepth", spaceToDepthKernel)
}

// transpose returns x with its axes permuted: out.Shape[i] = x.Shape[perm[i]].
// perm must be a valid permutation of x's axes.
func transpose(x *ir.Tensor, perm []int) *ir.Tensor {
	r := len(x.Shape)
	outShape := make([]int64, r)
	inStrides := ref.Strides(x.Shape)
	st := make([]int64, r) // input stride for each output axis
	for i, p := range perm {
		outShape[i] = x.Shape[p]
		st[i] = inStrides[p]
	}
	out := ir.NewTensor(x.DType, outShape)
	n := out.Len()
	if n == 0 {
		return out
	}
	it := ref.NewIndexer(outShape, st)
	for i := 0; i < n; i++ {
		copyElem(out, i, x, int(it.Offsets[0]))
		it.Next()
	}
	return out
}

// checkPerm validates perm as a permutation of rank axes.
func checkPerm(perm []int64, rank int) ([]int, error) {
	if len(perm) != rank {
		return nil, fmt.Errorf("perm %v has %d entries for rank %d", perm, len(perm), rank)
	}
	p, err := ref.NormAxes(perm, rank)
	if err != nil {
		return nil, fmt.Errorf("perm %v: %w", perm, err)
	}
	return p, nil
}

// transposeKernel: Transpose(data) with attribute perm (default: reversed).
func transposeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	var perm []int
	if p := n.AttrInts("perm", nil); p != nil {
		var err error
		if perm, err = checkPerm(p, r); err != nil {
			return nil, err
		}
	} else {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	return []*ir.Tensor{transpose(x, perm)}, nil
}

// blockArgs reads the 4-D input and the blocksize attribute.
func blockArgs(n *ir.Node, in []*ir.Tensor) (x *ir.Tensor, b int64, err error) {
	if err := need(in, 1); err != nil {
		return nil, 0, err
	}
	x = in[0]
	if len(x.Shape) != 4 {
		return nil, 0, fmt.Errorf("input must be 4-D [N,C,H,W], got %v", x.Shape)
	}
	b = n.AttrInt("blocksize", 0)
	if b <= 0 || b > 1<<16 {
		return nil, 0, fmt.Errorf("blocksize must be in [1, 65536], got %d", b)
	}
	return x, b, nil
}

// depthToSpaceKernel: DepthToSpace, [N,C,H,W] -> [N,C/b²,H*b,W*b]. In DCR
// mode the depth is split as (b, b, C/b²), in CRD mode as (C/b², b, b).
func depthToSpaceKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	x, b, err := blockArgs(n, in)
	if err != nil {
		return nil, err
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if C%(b*b) != 0 {
		return nil, fmt.Errorf("channels %d not divisible by blocksize² %d", C, b*b)
	}
	c := C / (b * b)
	var t *ir.Tensor
	switch mode := n.AttrString("mode", "DCR"); mode {
	case "DCR":
		t = transpose(view(x, []int64{N, b, b, c, H, W}), []int{0, 3, 4, 1, 5, 2})
	case "CRD":
		t = transpose(view(x, []int64{N, c, b, b, H, W}), []int{0, 1, 4, 2, 5, 3})
	default:
		return nil, ref.Unsupported("DepthToSpace mode %q", mode)
	}
	t.Shape = []int64{N, c, H * b, W * b}
	return []*ir.Tensor{t}, nil
}

// spaceToDepthKernel: SpaceToDepth, [N,C,H,W] -> [N,C*b²,H/b,W/b], the
// inverse of DepthToSpace in DCR mode.
func spaceToDepthKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	x, b, err := blockArgs(n, in)
	if err != nil {
		return nil, err
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if H%b != 0 || W%b != 0 {
		return nil, fmt.Errorf("spatial dims %dx%d not divisible by blocksize %d", H, W, b)
	}
	t := transpose(view(x, []int64{N, C, H / b, b, W / b, b}), []int{0, 3, 5, 1, 2, 4})
	t.Shape = []int64{N, C * b * b, H / b, W / b}
	return []*ir.Tensor{t}, nil
}
