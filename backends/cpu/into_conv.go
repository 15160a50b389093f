package cpu

import (
	"math"
	"slices"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildConv, "Conv")
	registerInto(buildPool, "MaxPool", "AveragePool")
	registerInto(buildGlobalPool, "GlobalAveragePool", "GlobalMaxPool")
}

// axis2 is the geometry of one spatial axis of a window op.
type axis2 struct {
	in, k, stride, dil, padB, padE, out int
}

// geomFor is geom2 for a node whose output y is [N, ch, out...] for an
// input x [N, C, in...]: false also when y's shape is not that.
func geomFor(n *ir.Node, x, y []int64, ch int64, kernel []int64, ceil bool) ([2]axis2, bool) {
	g, ok := geom2(n, x[2:], kernel, ceil)
	if !ok {
		return g, false
	}
	want := []int64{x[0], ch}
	for d := 2 - (len(x) - 2); d < 2; d++ {
		want = append(want, int64(g[d].out))
	}
	return g, slices.Equal(want, y)
}

// geom2 resolves strides, dilations, pads and auto_pad for a 1-D or 2-D
// window op, with the reference's rules (see ref/nn/geom.go); ok=false for
// anything it does not handle. 1-D ops get a unit leading axis.
func geom2(n *ir.Node, spatial, kernel []int64, ceil bool) ([2]axis2, bool) {
	var g [2]axis2
	r := len(spatial)
	if r < 1 || r > 2 || len(kernel) != r {
		return g, false
	}
	strides, dils, pads := n.AttrInts("strides", nil), n.AttrInts("dilations", nil), n.AttrInts("pads", nil)
	if strides != nil && len(strides) != r || dils != nil && len(dils) != r || pads != nil && len(pads) != 2*r {
		return g, false
	}
	autoPad := n.AttrString("auto_pad", "NOTSET")
	g[0] = axis2{in: 1, k: 1, stride: 1, dil: 1, out: 1}
	for d := 0; d < r; d++ {
		a := axis2{in: int(spatial[d]), k: int(kernel[d]), stride: 1, dil: 1}
		if strides != nil {
			a.stride = int(strides[d])
		}
		if dils != nil {
			a.dil = int(dils[d])
		}
		if a.k <= 0 || a.stride <= 0 || a.dil <= 0 {
			return g, false
		}
		span := (a.k-1)*a.dil + 1
		switch autoPad {
		case "NOTSET", "":
			if pads != nil {
				a.padB, a.padE = int(pads[d]), int(pads[d+r])
			}
			num := a.in + a.padB + a.padE - span
			if a.padB < 0 || a.padE < 0 || num < 0 {
				return g, false
			}
			a.out = num/a.stride + 1
			if ceil {
				a.out = (num+a.stride-1)/a.stride + 1
				if (a.out-1)*a.stride >= a.in+a.padB {
					a.out--
				}
			}
		case "VALID":
			num := a.in - span
			if num < 0 {
				return g, false
			}
			a.out = num/a.stride + 1
		case "SAME_UPPER", "SAME_LOWER":
			a.out = (a.in + a.stride - 1) / a.stride
			total := max(0, (a.out-1)*a.stride+span-a.in)
			small := total / 2
			if autoPad == "SAME_UPPER" {
				a.padB, a.padE = small, total-small
			} else {
				a.padB, a.padE = total-small, small
			}
		default:
			return g, false
		}
		g[2-r+d] = a
	}
	return g, true
}

// validRange returns the output positions [lo, hi) whose tap k reads an
// in-bounds input position along a.
func (a axis2) validRange(k int) (int, int) {
	lo, hi := a.out, 0
	for o := 0; o < a.out; o++ {
		if p := o*a.stride - a.padB + k*a.dil; p >= 0 && p < a.in {
			lo, hi = min(lo, o), o+1
		}
	}
	if lo >= hi {
		return 0, 0
	}
	return lo, hi
}

// everyWindowReads reports whether every output position's window holds
// at least one input position along a.
func (a axis2) everyWindowReads() bool {
	for o := 0; o < a.out; o++ {
		ok := false
		for k := 0; k < a.k && !ok; k++ {
			p := o*a.stride - a.padB + k*a.dil
			ok = p >= 0 && p < a.in
		}
		if !ok {
			return false
		}
	}
	return true
}

// buildConv handles float32 1-D and 2-D Conv (groups, strides, dilations,
// pads, auto_pad, optional bias) as a direct convolution: for each weight
// tap, a scaled row of the input is added to a row of the output.
func buildConv(s *nodeSpec) intoKernel {
	x, w, b, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if len(s.in) < 2 || len(s.in) > 3 || len(s.out) != 1 || !x.ok || !w.ok || !allF32(x, w, b, y) {
		return nil
	}
	r := len(x.shape) - 2
	if r < 1 || r > 2 || len(w.shape) != r+2 {
		return nil
	}
	group := int(s.n.AttrInt("group", 1))
	N, C, M := int(x.shape[0]), int(x.shape[1]), int(w.shape[0])
	if group <= 0 || C%group != 0 || M%group != 0 || int(w.shape[1]) != C/group {
		return nil
	}
	kernel := w.shape[2:]
	if ks := s.n.AttrInts("kernel_shape", nil); ks != nil && !slices.Equal(ks, kernel) {
		return nil
	}
	if b.ok && !slices.Equal(b.shape, []int64{int64(M)}) {
		return nil
	}
	g, ok := geomFor(s.n, x.shape, y.shape, int64(M), kernel, false)
	if !ok {
		return nil
	}
	gh, gw := g[0], g[1]
	H, W, OH, OW := gh.in, gw.in, gh.out, gw.out
	kH, kW := gh.k, gw.k
	Cg, Mg := C/group, M/group
	// Per tap: the output rows and columns that read inside the input.
	hLo, hHi, wLo, wHi := make([]int, kH), make([]int, kH), make([]int, kW), make([]int, kW)
	for k := range kH {
		hLo[k], hHi[k] = gh.validRange(k)
	}
	for k := range kW {
		wLo[k], wHi[k] = gw.validRange(k)
	}
	hasBias := b.ok
	ohw, kk := OH*OW, Cg*kH*kW
	pointwise := kH == 1 && kW == 1 && gh.stride == 1 && gw.stride == 1 && gh.padB == 0 && gw.padB == 0 && OH == H && OW == W
	if pointwise || kk*ohw*4 <= maxIm2col {
		if !pointwise {
			s.scratch = kk * ohw * 4
		}
		return func(in, out []*ir.Tensor, scratch []byte) error {
			xv, wv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
			var col []float32
			if !pointwise {
				col = f32View(scratch, kk*ohw)
			}
			for n := 0; n < N; n++ {
				for g := 0; g < group; g++ {
					xg := xv[(n*C+g*Cg)*H*W : (n*C+(g+1)*Cg)*H*W]
					if pointwise {
						col = xg // X[c, :] is already the [Cg, H·W] matrix
					} else {
						im2col(col, xg, Cg, gh, gw, hLo, hHi, wLo, wHi)
					}
					for m := g * Mg; m < (g+1)*Mg; m++ {
						row := yv[(n*M+m)*ohw : (n*M+m+1)*ohw]
						gemvRow(row, wv[m*kk:(m+1)*kk], col, ohw)
						if hasBias {
							b0 := in[2].Float32s()[m]
							for i := range row {
								row[i] += b0
							}
						}
					}
				}
			}
			return nil
		}
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, wv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		var bv []float32
		if hasBias {
			bv = in[2].Float32s()
		}
		for n := 0; n < N; n++ {
			for m := 0; m < M; m++ {
				plane := yv[(n*M+m)*OH*OW : (n*M+m+1)*OH*OW]
				var b0 float32
				if hasBias {
					b0 = bv[m]
				}
				for i := range plane {
					plane[i] = b0
				}
				g := m / Mg
				for c := 0; c < Cg; c++ {
					xp := xv[(n*C+g*Cg+c)*H*W : (n*C+g*Cg+c+1)*H*W]
					wp := wv[(m*Cg+c)*kH*kW : (m*Cg+c+1)*kH*kW]
					for kh := 0; kh < kH; kh++ {
						for kw := 0; kw < kW; kw++ {
							wt := wp[kh*kW+kw]
							lo, hi := wLo[kw], wHi[kw]
							if lo >= hi {
								continue
							}
							for oh := hLo[kh]; oh < hHi[kh]; oh++ {
								ih := oh*gh.stride - gh.padB + kh*gh.dil
								yr := plane[oh*OW+lo : oh*OW+hi]
								base := ih*W - gw.padB + kw*gw.dil
								if gw.stride == 1 {
									xr := xp[base+lo : base+hi]
									for j, v := range xr {
										yr[j] += wt * v
									}
								} else {
									for j := range yr {
										yr[j] += wt * xp[base+(lo+j)*gw.stride]
									}
								}
							}
						}
					}
				}
			}
		}
		return nil
	}
}

// maxIm2col bounds the scratch of the im2col path; larger convolutions run
// the direct loop. A variable so that tests reach both paths.
var maxIm2col = 64 << 20

// im2col writes the [Cg·kH·kW, OH·OW] patch matrix of one group's input
// planes x ([Cg, H, W]) into col: row (c, kh, kw) holds, for each output
// position, the input it multiplies by W[m, c, kh, kw] (0 in the padding).
func im2col(col, x []float32, Cg int, gh, gw axis2, hLo, hHi, wLo, wHi []int) {
	H, W, OH, OW := gh.in, gw.in, gh.out, gw.out
	r := 0
	for c := 0; c < Cg; c++ {
		xp := x[c*H*W : (c+1)*H*W]
		for kh := 0; kh < gh.k; kh++ {
			for kw := 0; kw < gw.k; kw++ {
				dst := col[r*OH*OW : (r+1)*OH*OW]
				r++
				lo, hi := wLo[kw], wHi[kw]
				for oh := 0; oh < OH; oh++ {
					d := dst[oh*OW : (oh+1)*OW]
					if oh < hLo[kh] || oh >= hHi[kh] || lo >= hi {
						clear(d)
						continue
					}
					clear(d[:lo])
					clear(d[hi:])
					ih := oh*gh.stride - gh.padB + kh*gh.dil
					base := ih*W - gw.padB + kw*gw.dil
					if gw.stride == 1 {
						copy(d[lo:hi], xp[base+lo:base+hi])
						continue
					}
					for ow := lo; ow < hi; ow++ {
						d[ow] = xp[base+ow*gw.stride]
					}
				}
			}
		}
	}
}

// f32View views the first n float32s of 64-byte aligned scratch memory.
func f32View(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b[:n*4]))), n)
}

// buildPool handles float32 1-D and 2-D MaxPool (Y only, storage order
// irrelevant) and AveragePool (count_include_pad counts the window
// positions inside the padded input, as the reference does).
func buildPool(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) {
		return nil
	}
	r := len(x.shape) - 2
	kernel := s.n.AttrInts("kernel_shape", nil)
	if r < 1 || r > 2 || len(kernel) != r {
		return nil
	}
	isMax := s.n.Op == "MaxPool"
	g, ok := geomFor(s.n, x.shape, y.shape, x.shape[1], kernel, s.n.AttrInt("ceil_mode", 0) != 0)
	if !ok {
		return nil
	}
	if !isMax && s.n.AttrInts("dilations", nil) != nil && (g[0].dil != 1 || g[1].dil != 1) {
		return nil
	}
	includePad := s.n.AttrInt("count_include_pad", 0) != 0
	NC := int(x.shape[0] * x.shape[1])
	gh, gw := g[0], g[1]
	if !gh.everyWindowReads() || !gw.everyWindowReads() {
		return nil // the reference reports the empty window
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, yv := in[0].Float32s(), out[0].Float32s()
		for p := 0; p < NC; p++ {
			xp := xv[p*gh.in*gw.in : (p+1)*gh.in*gw.in]
			yp := yv[p*gh.out*gw.out : (p+1)*gh.out*gw.out]
			for oh := 0; oh < gh.out; oh++ {
				for ow := 0; ow < gw.out; ow++ {
					best, sum, cnt, padCnt := math.Inf(-1), 0.0, 0, 0
					for kh := 0; kh < gh.k; kh++ {
						ih := oh*gh.stride - gh.padB + kh*gh.dil
						inPadH := ih >= -gh.padB && ih < gh.in+gh.padE
						for kw := 0; kw < gw.k; kw++ {
							iw := ow*gw.stride - gw.padB + kw*gw.dil
							if inPadH && iw >= -gw.padB && iw < gw.in+gw.padE {
								padCnt++
							}
							if ih < 0 || ih >= gh.in || iw < 0 || iw >= gw.in {
								continue
							}
							v := float64(xp[ih*gw.in+iw])
							if v > best || math.IsNaN(v) && !math.IsNaN(best) {
								best = v
							}
							sum += v
							cnt++
						}
					}
					switch {
					case isMax:
						yp[oh*gw.out+ow] = float32(best)
					case includePad:
						yp[oh*gw.out+ow] = float32(sum / float64(padCnt))
					default:
						yp[oh*gw.out+ow] = float32(sum / float64(cnt))
					}
				}
			}
		}
		return nil
	}
}

// buildGlobalPool handles float32 GlobalAveragePool and GlobalMaxPool.
func buildGlobalPool(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) || len(x.shape) < 3 {
		return nil
	}
	want := []int64{x.shape[0], x.shape[1]}
	for range x.shape[2:] {
		want = append(want, 1)
	}
	if !slices.Equal(want, y.shape) {
		return nil
	}
	NC, S := int(x.shape[0]*x.shape[1]), numel(x.shape[2:])
	if S == 0 {
		return nil
	}
	isMax := s.n.Op == "GlobalMaxPool"
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, yv := in[0].Float32s(), out[0].Float32s()
		for p := 0; p < NC; p++ {
			row := xv[p*S : (p+1)*S]
			if isMax {
				best := math.Inf(-1)
				for _, v := range row {
					if f := float64(v); f > best || math.IsNaN(f) && !math.IsNaN(best) {
						best = f
					}
				}
				yv[p] = float32(best)
				continue
			}
			sum := 0.0
			for _, v := range row {
				sum += float64(v)
			}
			yv[p] = float32(sum / float64(S))
		}
		return nil
	}
}
