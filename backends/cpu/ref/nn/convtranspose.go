package nn

import (
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("ConvTranspose", convTranspose)
}

// floorDiv2 is floor(v / 2) (Go's / truncates toward zero).
func floorDiv2(v int) int {
	if v < 0 {
		return -((-v + 1) / 2)
	}
	return v / 2
}

// transposeGeom resolves ConvTranspose's per-axis geometry. With
// output_shape (or auto_pad SAME_*, where output = input·stride) the pads
// come from total = stride·(in-1) + output_padding + span - out, split as
// the spec says: SAME_UPPER puts floor(total/2) first, anything else puts
// total - floor(total/2) first. Without it, out = stride·(in-1) +
// output_padding + span - padB - padE. A negative pad (output_shape larger
// than the full result) widens the output with zeros at that end.
func transposeGeom(n *ir.Node, in, kernel []int64) ([]axisGeom, error) {
	r := len(in)
	for _, name := range []string{"strides", "dilations", "output_padding"} {
		if err := checkAttrLen(n, name, r); err != nil {
			return nil, err
		}
	}
	if err := checkAttrLen(n, "pads", 2*r); err != nil {
		return nil, err
	}
	outAttr := n.AttrInts("output_shape", nil)
	if outAttr != nil {
		switch len(outAttr) {
		case r:
		case r + 2:
			outAttr = outAttr[2:]
		default:
			return nil, fmt.Errorf("output_shape %v has %d entries, want %d", outAttr, len(outAttr), r)
		}
	}
	strides := n.AttrInts("strides", nil)
	dils := n.AttrInts("dilations", nil)
	outPad := n.AttrInts("output_padding", nil)
	pads := n.AttrInts("pads", nil)
	autoPad := n.AttrString("auto_pad", "NOTSET")
	g := make([]axisGeom, r)
	for d := range g {
		a := axisGeom{In: int(in[d]), K: int(kernel[d]), Stride: 1, Dil: 1}
		if strides != nil {
			a.Stride = int(strides[d])
		}
		if dils != nil {
			a.Dil = int(dils[d])
		}
		op := 0
		if outPad != nil {
			op = int(outPad[d])
		}
		if a.K <= 0 || a.Stride <= 0 || a.Dil <= 0 || op < 0 {
			return nil, fmt.Errorf("axis %d: kernel %d, stride %d, dilation %d must be positive, output_padding %d not negative", d, a.K, a.Stride, a.Dil, op)
		}
		full := a.Stride*(a.In-1) + op + a.span()
		want := -1
		switch {
		case outAttr != nil:
			want = int(outAttr[d])
		case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			want = a.In * a.Stride
		case autoPad == "VALID":
		case autoPad == "NOTSET" || autoPad == "":
			if pads != nil {
				a.PadB, a.PadE = int(pads[d]), int(pads[d+r])
			}
			if a.PadB < 0 || a.PadE < 0 {
				return nil, fmt.Errorf("negative pads %v", pads)
			}
		default:
			return nil, fmt.Errorf("unknown auto_pad %q", autoPad)
		}
		if want >= 0 {
			total := full - want
			if autoPad == "SAME_UPPER" {
				a.PadB, a.PadE = floorDiv2(total), total-floorDiv2(total)
			} else {
				a.PadB, a.PadE = total-floorDiv2(total), floorDiv2(total)
			}
		}
		a.Out = full - a.PadB - a.PadE
		if a.Out <= 0 {
			return nil, fmt.Errorf("axis %d: output size %d is not positive", d, a.Out)
		}
		g[d] = a
	}
	return g, nil
}

// convTranspose is ONNX ConvTranspose-11 for float dtypes: every input
// element scatters x·w over the output window it maps to
// (out = in·stride - padB + k·dilation), per group, then the bias is added.
func convTranspose(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, w, b := in[0], in[1], opt(in, 2)
	if err := needFloat("ConvTranspose X", x); err != nil {
		return nil, err
	}
	if err := ref.SameDType(x.DType, w, b); err != nil {
		return nil, err
	}
	N, C, spatial, err := spatialInput("ConvTranspose", x)
	if err != nil {
		return nil, err
	}
	if len(w.Shape) != len(x.Shape) {
		return nil, fmt.Errorf("ConvTranspose weight has shape %v, want rank %d like X %v", w.Shape, len(x.Shape), x.Shape)
	}
	group := int(n.AttrInt("group", 1))
	if group < 1 || C%group != 0 {
		return nil, fmt.Errorf("ConvTranspose: %d input channels not divisible by group %d", C, group)
	}
	if int(w.Shape[0]) != C {
		return nil, fmt.Errorf("ConvTranspose: weight %v has %d input channels, X has %d", w.Shape, w.Shape[0], C)
	}
	cg, mg := C/group, int(w.Shape[1])
	M := mg * group
	kernel := w.Shape[2:]
	if ks := n.AttrInts("kernel_shape", nil); ks != nil && !slices.Equal(ks, kernel) {
		return nil, fmt.Errorf("ConvTranspose: kernel_shape %v differs from W's spatial dims %v", ks, kernel)
	}
	g, err := transposeGeom(n, spatial, kernel)
	if err != nil {
		return nil, fmt.Errorf("ConvTranspose: %w", err)
	}
	var bv []float64
	if b != nil {
		if len(b.Shape) != 1 || int(b.Shape[0]) != M {
			return nil, fmt.Errorf("ConvTranspose bias has shape %v, want [%d]", b.Shape, M)
		}
		bv = toFloats(b)
	}
	sc := buildScatter(g)
	xv, wv := toFloats(x), toFloats(w)
	outSize := int(ir.NumElements(outShape(g)))
	inSize := int(ir.NumElements(spatial))
	kSize := int(ir.NumElements(kernel))
	y := make([]float64, N*M*outSize)
	for nb := 0; nb < N; nb++ {
		for c := 0; c < C; c++ {
			gi := c / cg
			xc := xv[(nb*C+c)*inSize:]
			for j := 0; j < mg; j++ {
				m := gi*mg + j
				yc := y[(nb*M+m)*outSize:]
				wc := wv[(c*mg+j)*kSize:]
				for p := 0; p < inSize; p++ {
					xval := xc[p]
					for _, t := range sc.taps[sc.start[p]:sc.start[p+1]] {
						yc[t.x] += xval * wc[t.k]
					}
				}
			}
		}
	}
	if bv != nil {
		for i := range y {
			y[i] += bv[(i/outSize)%M]
		}
	}
	shape := append([]int64{int64(N), int64(M)}, outShape(g)...)
	return []*ir.Tensor{fromFloats(x.DType, shape, y)}, nil
}

// buildScatter lists, for every input position p, the kernel taps and the
// in-bounds output offsets they reach (tap.x is an output offset here).
func buildScatter(g []axisGeom) *windows {
	r := len(g)
	w := &windows{inSize: 1, outSize: 1, kSize: 1}
	for _, a := range g {
		w.inSize *= a.In
		w.outSize *= a.Out
		w.kSize *= a.K
	}
	p := make([]int, r)
	k := make([]int, r)
	for range w.inSize {
		w.start = append(w.start, len(w.taps))
		clear(k)
		for ki := 0; ki < w.kSize; ki++ {
			valid, off := true, 0
			for d, a := range g {
				o := p[d]*a.Stride - a.PadB + k[d]*a.Dil
				if o < 0 || o >= a.Out {
					valid = false
				}
				off = off*a.Out + o
			}
			if valid {
				w.taps = append(w.taps, tap{k: ki, x: off})
			}
			odometer(k, g, func(a axisGeom) int { return a.K })
		}
		odometer(p, g, func(a axisGeom) int { return a.In })
	}
	w.start = append(w.start, len(w.taps))
	return w
}
