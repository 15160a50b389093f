package passes

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weftrt/weft/ir"
)

// Matrix products, convolutions and pooling.

func init() {
	register(matmulOp, "MatMul", "MatMulInteger", "QLinearMatMul")
	register(gemmOp, "Gemm")
	register(einsumOp, "Einsum")
	register(convOp, "Conv", "ConvInteger", "QLinearConv", "DeformConv")
	register(convTransposeOp, "ConvTranspose")
	register(poolOp, "MaxPool", "AveragePool", "LpPool")
	register(globalPoolOp, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	register(maxUnpoolOp, "MaxUnpool")
	register(roiOp, "MaxRoiPool", "RoiAlign")
}

// matmulShape is numpy matmul: 1-D operands are promoted and the promoted
// dim dropped again; batch dims broadcast.
func matmulShape(a, b ir.Shape) (ir.Shape, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("MatMul of a scalar")
	}
	ap, bp := a, b
	if len(a) == 1 {
		ap = ir.Shape{dim(1), a[0]}
	}
	if len(b) == 1 {
		bp = ir.Shape{b[0], dim(1)}
	}
	if _, err := unifyDim(ap[len(ap)-1], bp[len(bp)-2]); err != nil {
		return nil, fmt.Errorf("MatMul of [%v] and [%v]: inner %w", a, b, err)
	}
	batch, err := broadcastShapes(ap[:len(ap)-2], bp[:len(bp)-2])
	if err != nil {
		return nil, fmt.Errorf("MatMul batch dims: %w", err)
	}
	out := batch
	if len(a) > 1 {
		out = append(out, ap[len(ap)-2])
	}
	if len(b) > 1 {
		out = append(out, bp[len(bp)-1])
	}
	return out, nil
}

func matmulOp(_ *state, n *ir.Node) ([]typ, error) {
	a, b, dt := in(n, 0), in(n, 1), in(n, 0).dt
	switch n.Op {
	case "MatMulInteger":
		dt = ir.Int32
	case "QLinearMatMul":
		b, dt = in(n, 3), in(n, 7).dt
	}
	sh, err := matmulShape(a.sh, b.sh)
	return []typ{{dt, sh}}, err
}

func gemmOp(_ *state, n *ir.Node) ([]typ, error) {
	a, b := in(n, 0), in(n, 1)
	if a.sh == nil || b.sh == nil {
		return []typ{{a.dt, unknownShape(2)}}, nil
	}
	if len(a.sh) != 2 || len(b.sh) != 2 {
		return nil, fmt.Errorf("Gemm operands of rank %d and %d, want 2", len(a.sh), len(b.sh))
	}
	m, ka := a.sh[0], a.sh[1]
	if n.AttrInt("transA", 0) != 0 {
		m, ka = ka, m
	}
	kb, nn := b.sh[0], b.sh[1]
	if n.AttrInt("transB", 0) != 0 {
		kb, nn = nn, kb
	}
	if _, err := unifyDim(ka, kb); err != nil {
		return nil, fmt.Errorf("Gemm inner %w", err)
	}
	out := ir.Shape{m, nn}
	if c := in(n, 2); c.sh != nil {
		// C broadcasts to [M, N] (one direction only).
		if bc, err := broadcastShapes(out, c.sh); err != nil || len(bc) != 2 {
			return nil, fmt.Errorf("Gemm C of shape [%v] does not broadcast to [%v]", c.sh, out)
		}
	}
	return []typ{{a.dt, out}}, nil
}

func einsumOp(_ *state, n *ir.Node) ([]typ, error) {
	dt := in(n, 0).dt
	eq := strings.ReplaceAll(n.AttrString("equation", ""), " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(n.Inputs) {
		return nil, fmt.Errorf("Einsum equation %q has %d terms for %d inputs", eq, len(terms), len(n.Inputs))
	}
	letters := map[rune]ir.Dim{}
	count := map[rune]int{}
	var ell ir.Shape = ir.Shape{}
	for i, t := range terms {
		hasEll := strings.Contains(t, "...")
		ls := []rune(strings.Replace(t, "...", "", 1))
		for _, l := range ls {
			count[l]++
		}
		sh := in(n, i).sh
		if sh == nil {
			if hasEll {
				ell = nil
			}
			for _, l := range ls {
				if _, ok := letters[l]; !ok {
					letters[l] = unk
				}
			}
			continue
		}
		ne := len(sh) - len(ls)
		if ne < 0 || (!hasEll && ne != 0) {
			return nil, fmt.Errorf("Einsum term %q for input of rank %d", t, len(sh))
		}
		pre := strings.Index(t, "...")
		var es ir.Shape = ir.Shape{}
		for j, l := range ls {
			k := j
			if hasEll && j >= pre {
				k = j + ne
			}
			d := sh[k]
			if old, ok := letters[l]; ok {
				switch {
				case old.Known() && d.Known() && old.Size != d.Size && old.Size != 1 && d.Size != 1:
					return nil, fmt.Errorf("Einsum label %c has sizes %d and %d", l, old.Size, d.Size)
				case old.Known() && old.Size != 1:
				case d.Known() || !old.Known():
					if d.Known() || d.Sym != "" {
						letters[l] = d
					}
				}
			} else {
				letters[l] = d
			}
		}
		if hasEll {
			es = sh[pre : pre+ne]
			if ell != nil {
				var err error
				if ell, err = broadcastShapes(ell, es); err != nil {
					return nil, fmt.Errorf("Einsum ellipsis: %w", err)
				}
			}
		}
	}
	var out ir.Shape = ir.Shape{}
	if explicit {
		if strings.Contains(rhs, "...") {
			if ell == nil {
				return []typ{{dt, nil}}, nil
			}
			pre, post, _ := strings.Cut(rhs, "...")
			for _, l := range pre + post {
				if _, ok := letters[l]; !ok {
					return nil, fmt.Errorf("Einsum output label %c is not an input label", l)
				}
			}
			for _, l := range pre {
				out = append(out, letters[l])
			}
			out = append(out, ell...)
			for _, l := range post {
				out = append(out, letters[l])
			}
		} else {
			for _, l := range rhs {
				d, ok := letters[l]
				if !ok {
					return nil, fmt.Errorf("Einsum output label %c is not an input label", l)
				}
				out = append(out, d)
			}
		}
		return []typ{{dt, out}}, nil
	}
	if ell == nil {
		return []typ{{dt, nil}}, nil
	}
	out = append(out, ell...)
	var once []rune
	for l, c := range count {
		if c == 1 {
			once = append(once, l)
		}
	}
	sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
	for _, l := range once {
		out = append(out, letters[l])
	}
	return []typ{{dt, out}}, nil
}

// windowAttrs reads strides, dilations and pads for k spatial axes.
func windowAttrs(n *ir.Node, k int) (strides, dil, pads []int64, err error) {
	ones := slices.Repeat([]int64{1}, k)
	strides = n.AttrInts("strides", ones)
	dil = n.AttrInts("dilations", ones)
	pads = n.AttrInts("pads", make([]int64, 2*k))
	if len(strides) != k || len(dil) != k || len(pads) != 2*k {
		return nil, nil, nil, fmt.Errorf("strides %v, dilations %v, pads %v for %d spatial axes", strides, dil, pads, k)
	}
	for i := 0; i < k; i++ {
		if strides[i] <= 0 || dil[i] <= 0 {
			return nil, nil, nil, fmt.Errorf("strides %v, dilations %v must be positive", strides, dil)
		}
	}
	if err := nonNeg("pads", pads...); err != nil {
		return nil, nil, nil, err
	}
	return strides, dil, pads, nil
}

// spatialOut computes the output spatial dims of a convolution or pooling
// window (kernel entries < 0 are unknown).
func spatialOut(n *ir.Node, in ir.Shape, kernel []int64, ceilMode bool) (ir.Shape, error) {
	k := len(in)
	if len(kernel) != k {
		return nil, fmt.Errorf("kernel_shape %v for %d spatial axes", kernel, k)
	}
	strides, dil, pads, err := windowAttrs(n, k)
	if err != nil {
		return nil, err
	}
	autoPad := n.AttrString("auto_pad", "NOTSET")
	out := make(ir.Shape, k)
	for i, d := range in {
		s := strides[i]
		if !d.Known() || kernel[i] < 0 {
			out[i] = unk
			if autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" {
				if s == 1 {
					out[i] = d
				}
			}
			continue
		}
		ek := (kernel[i]-1)*dil[i] + 1
		var o int64
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			o = ceilDiv(d.Size, s)
		case "VALID":
			o = floorDiv(d.Size-ek, s) + 1
		case "NOTSET", "":
			total := d.Size + pads[i] + pads[i+k] - ek
			if ceilMode {
				o = ceilDiv(total, s) + 1
				// A window may not start in the right padding.
				if (o-1)*s >= d.Size+pads[i] {
					o--
				}
			} else {
				o = floorDiv(total, s) + 1
			}
		default:
			return nil, fmt.Errorf("unknown auto_pad %q", autoPad)
		}
		if o <= 0 {
			return nil, fmt.Errorf("window of %d (dilated) does not fit axis %d of size %d", ek, i, d.Size)
		}
		out[i] = dim(o)
	}
	return out, nil
}

// kernelOf returns the kernel_shape attribute or the weight's spatial dims.
func kernelOf(n *ir.Node, w ir.Shape, k int) []int64 {
	if ks := n.AttrInts("kernel_shape", nil); ks != nil {
		return ks
	}
	if w == nil || len(w) != k+2 {
		return slices.Repeat([]int64{-1}, k)
	}
	return w[2:].Ints()
}

func convOp(_ *state, n *ir.Node) ([]typ, error) {
	x, w, dt := in(n, 0), in(n, 1), in(n, 0).dt
	switch n.Op {
	case "ConvInteger":
		dt = ir.Int32
	case "QLinearConv":
		w, dt = in(n, 3), in(n, 7).dt
	}
	if x.sh == nil {
		return []typ{{dt, nil}}, nil
	}
	k := len(x.sh) - 2
	if k < 1 {
		return nil, fmt.Errorf("%s input has rank %d, want >= 3", n.Op, len(x.sh))
	}
	if w.sh != nil && len(w.sh) != k+2 {
		return nil, fmt.Errorf("%s weight has rank %d, want %d", n.Op, len(w.sh), k+2)
	}
	sp, err := spatialOut(n, x.sh[2:], kernelOf(n, w.sh, k), false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Op, err)
	}
	m := unk
	if w.sh != nil {
		m = w.sh[0]
		g := n.AttrInt("group", 1)
		if c, cw := x.sh[1], w.sh[1]; c.Known() && cw.Known() && c.Size != cw.Size*g {
			return nil, fmt.Errorf("%s: input has %d channels, weight expects %d x group %d", n.Op, c.Size, cw.Size, g)
		}
	}
	return []typ{{dt, cat(ir.Shape{x.sh[0], m}, sp)}}, nil
}

func convTransposeOp(_ *state, n *ir.Node) ([]typ, error) {
	x, w := in(n, 0), in(n, 1)
	if x.sh == nil {
		return []typ{x}, nil
	}
	k := len(x.sh) - 2
	if k < 1 {
		return nil, fmt.Errorf("ConvTranspose input has rank %d, want >= 3", len(x.sh))
	}
	if w.sh != nil && len(w.sh) != k+2 {
		return nil, fmt.Errorf("ConvTranspose weight has rank %d, want %d", len(w.sh), k+2)
	}
	m := unk
	if w.sh != nil {
		m = dimMul(w.sh[1], dim(n.AttrInt("group", 1)))
	}
	out := ir.Shape{x.sh[0], m}
	if os := n.AttrInts("output_shape", nil); os != nil {
		if len(os) == k+2 {
			os = os[2:]
		}
		if len(os) != k {
			return nil, fmt.Errorf("ConvTranspose output_shape %v for %d spatial axes", os, k)
		}
		if err := nonNeg("ConvTranspose output_shape", os...); err != nil {
			return nil, err
		}
		return []typ{x.withShape(append(out, ir.S(os...)...))}, nil
	}
	kernel := kernelOf(n, w.sh, k)
	strides, dil, pads, err := windowAttrs(n, k)
	if err != nil {
		return nil, fmt.Errorf("ConvTranspose: %w", err)
	}
	opad := n.AttrInts("output_padding", make([]int64, k))
	if len(opad) != k || len(kernel) != k {
		return nil, fmt.Errorf("ConvTranspose output_padding %v, kernel %v for %d axes", opad, kernel, k)
	}
	autoPad := n.AttrString("auto_pad", "NOTSET")
	for i, d := range x.sh[2:] {
		switch {
		case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			out = append(out, dimMul(d, dim(strides[i])))
		case !d.Known() || kernel[i] < 0:
			out = append(out, unk)
		default:
			p := pads[i] + pads[i+k]
			if autoPad == "VALID" {
				p = 0
			}
			o := strides[i]*(d.Size-1) + opad[i] + (kernel[i]-1)*dil[i] + 1 - p
			if o <= 0 {
				return nil, fmt.Errorf("ConvTranspose output axis %d would have size %d", i, o)
			}
			out = append(out, dim(o))
		}
	}
	return []typ{x.withShape(out)}, nil
}

func poolOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x, {ir.Int64, nil}}, nil
	}
	k := len(x.sh) - 2
	if k < 1 {
		return nil, fmt.Errorf("%s input has rank %d, want >= 3", n.Op, len(x.sh))
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		return nil, fmt.Errorf("%s without kernel_shape", n.Op)
	}
	sp, err := spatialOut(n, x.sh[2:], kernel, n.AttrInt("ceil_mode", 0) != 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Op, err)
	}
	sh := cat(x.sh[:2], sp)
	return []typ{x.withShape(sh), {ir.Int64, sh}}, nil
}

func globalPoolOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	if len(x.sh) < 2 {
		return nil, fmt.Errorf("%s input has rank %d, want >= 2", n.Op, len(x.sh))
	}
	sh := x.sh.Clone()
	for i := 2; i < len(sh); i++ {
		sh[i] = dim(1)
	}
	return []typ{x.withShape(sh)}, nil
}

func maxUnpoolOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if v := n.In(2); v != nil {
		if d, ok := s.dimValues(v); ok {
			return []typ{x.withShape(ir.Shape(d))}, nil
		}
		return []typ{x.withShape(unknownShape(shapeLen(v)))}, nil
	}
	if x.sh == nil {
		return []typ{x}, nil
	}
	k := len(x.sh) - 2
	if k < 1 {
		return nil, fmt.Errorf("MaxUnpool input has rank %d, want >= 3", len(x.sh))
	}
	kernel := n.AttrInts("kernel_shape", nil)
	strides, _, pads, err := windowAttrs(n, k)
	if err != nil || len(kernel) != k {
		return nil, fmt.Errorf("MaxUnpool: kernel_shape %v for %d axes (%v)", kernel, k, err)
	}
	out := x.sh[:2].Clone()
	for i, d := range x.sh[2:] {
		if !d.Known() {
			out = append(out, unk)
			continue
		}
		o := (d.Size-1)*strides[i] + kernel[i] - pads[i] - pads[i+k]
		if o < 0 {
			return nil, fmt.Errorf("MaxUnpool output axis %d would have size %d", i, o)
		}
		out = append(out, dim(o))
	}
	return []typ{x.withShape(out)}, nil
}

func roiOp(_ *state, n *ir.Node) ([]typ, error) {
	x, rois := in(n, 0), in(n, 1)
	r, c := unk, unk
	if rois.sh != nil && len(rois.sh) == 2 {
		r = rois.sh[0]
	}
	if x.sh != nil && len(x.sh) == 4 {
		c = x.sh[1]
	}
	if n.Op == "MaxRoiPool" {
		ps := n.AttrInts("pooled_shape", nil)
		if len(ps) != 2 || nonNeg("pooled_shape", ps...) != nil {
			return []typ{x.withShape(unknownShape(4))}, nil
		}
		return []typ{x.withShape(ir.Shape{r, c, dim(ps[0]), dim(ps[1])})}, nil
	}
	h, w := n.AttrInt("output_height", 1), n.AttrInt("output_width", 1)
	if err := nonNeg("RoiAlign output size", h, w); err != nil {
		return nil, err
	}
	return []typ{x.withShape(ir.Shape{r, c, dim(h), dim(w)})}, nil
}
