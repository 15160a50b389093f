package signal

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("DFT", dftKernel)
	ref.Register("STFT", stftKernel)
}

// transform computes the DFT of the complex sequence (re, im), zero-padded
// or truncated to length size, and returns its first bins values:
//
//	X[k] = Σ_m x[m]·e^(∓2πi·k·m/size)   (scaled by 1/size when inverse)
//
// The exponent's sign is + for the inverse. The angle is reduced modulo
// 2π in integers first, so large k·m lose no precision.
func transform(re, im []float64, size, bins int, inverse bool) (outRe, outIm []float64) {
	sign := -1.0
	if inverse {
		sign = 1
	}
	outRe, outIm = make([]float64, bins), make([]float64, bins)
	m := min(len(re), size)
	for k := 0; k < bins; k++ {
		var sr, si float64
		for j := 0; j < m; j++ {
			a := sign * 2 * math.Pi * float64((k*j)%size) / float64(size)
			c, s := math.Cos(a), math.Sin(a)
			sr += re[j]*c - im[j]*s
			si += re[j]*s + im[j]*c
		}
		if inverse {
			sr /= float64(size)
			si /= float64(size)
		}
		outRe[k], outIm[k] = sr, si
	}
	return outRe, outIm
}

// scalarInt reads a single-element integer tensor.
func scalarInt(t *ir.Tensor, name string) (int64, error) {
	if !t.DType.IsInt() || t.Len() != 1 {
		return 0, fmt.Errorf("%s is %v, want a single integer", name, t)
	}
	return t.Int64(0), nil
}

// dftKernel implements DFT: the input is [..., n, ..., 1 or 2] (real, or
// complex as (re, im) pairs in the last axis); the transform runs along
// axis and the output is [..., bins, ..., 2]. The axis comes from the
// opset 17 attribute when the node has one, else from the opset 20 third
// input, else it defaults to 1 (opset < 20) or -2 (opset 20 and models of
// unknown opset, the newest form).
func dftKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("DFT of dtype %v", x.DType)
	}
	r := len(x.Shape)
	if r < 2 || (x.Shape[r-1] != 1 && x.Shape[r-1] != 2) {
		return nil, fmt.Errorf("input has shape %v, want [..., n, 1 or 2]", x.Shape)
	}
	var axis int64
	switch {
	case n.Has("axis"):
		axis = n.AttrInt("axis", 1)
	case len(in) > 2 && in[2] != nil:
		v, err := scalarInt(in[2], "axis")
		if err != nil {
			return nil, err
		}
		axis = v
	default: // the importer turns DFT-17's attribute (default 1) into this input
		axis = -2
	}
	ax, err := ref.NormAxis(axis, r)
	if err != nil {
		return nil, err
	}
	if ax == r-1 {
		return nil, fmt.Errorf("axis %d is the real/imaginary axis", axis)
	}
	length := int(x.Shape[ax])
	size := length
	if len(in) > 1 && in[1] != nil {
		v, err := scalarInt(in[1], "dft_length")
		if err != nil {
			return nil, err
		}
		if v < 1 {
			return nil, fmt.Errorf("dft_length is %d, want >= 1", v)
		}
		size = int(v)
	}
	inverse := n.AttrInt("inverse", 0) != 0
	onesided := n.AttrInt("onesided", 0) != 0
	complexIn := x.Shape[r-1] == 2
	bins := size
	if onesided {
		if inverse {
			return nil, ref.Unsupported("DFT with both inverse and onesided")
		}
		if complexIn {
			return nil, fmt.Errorf("onesided DFT needs a real input, got shape %v", x.Shape)
		}
		bins = size/2 + 1
	}

	outShape := append([]int64{}, x.Shape...)
	outShape[ax] = int64(bins)
	outShape[r-1] = 2
	out := ir.NewTensor(x.DType, outShape)
	outer := int(ir.NumElements(x.Shape[:ax]))
	inner := int(ir.NumElements(x.Shape[ax+1 : r-1]))
	c := int(x.Shape[r-1])
	re, im := make([]float64, length), make([]float64, length)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			for m := 0; m < length; m++ {
				base := ((o*length+m)*inner + i) * c
				re[m] = x.Float64(base)
				im[m] = 0
				if complexIn {
					im[m] = x.Float64(base + 1)
				}
			}
			yr, yi := transform(re, im, size, bins, inverse)
			for k := 0; k < bins; k++ {
				base := ((o*bins+k)*inner + i) * 2
				out.SetFloat64(base, yr[k])
				out.SetFloat64(base+1, yi[k])
			}
		}
	}
	return []*ir.Tensor{out}, nil
}

// stftKernel implements STFT: signal [batch, length, 1 or 2], frame_step,
// window? [frame_length], frame_length?. Frame f covers samples
// f*frame_step ... f*frame_step+frame_length-1, multiplied by the window
// (ones when absent); the output is [batch, frames, bins, 2] with
// frames = (length-frame_length)/frame_step + 1 and bins = frame_length/2+1
// when onesided (the default), frame_length otherwise.
func stftKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	get := func(i int) *ir.Tensor {
		if i < len(in) {
			return in[i]
		}
		return nil
	}
	x, window := in[0], get(2)
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("STFT of dtype %v", x.DType)
	}
	if len(x.Shape) != 3 || (x.Shape[2] != 1 && x.Shape[2] != 2) {
		return nil, fmt.Errorf("signal has shape %v, want [batch, length, 1 or 2]", x.Shape)
	}
	step, err := scalarInt(in[1], "frame_step")
	if err != nil {
		return nil, err
	}
	if step < 1 {
		return nil, fmt.Errorf("frame_step is %d, want >= 1", step)
	}
	frameLen := int64(-1)
	if window != nil {
		if len(window.Shape) != 1 || !window.DType.IsFloat() {
			return nil, fmt.Errorf("window is %v, want a 1-D float tensor", window)
		}
		frameLen = window.Shape[0]
	}
	if fl := get(3); fl != nil {
		v, err := scalarInt(fl, "frame_length")
		if err != nil {
			return nil, err
		}
		if frameLen >= 0 && v != frameLen {
			return nil, fmt.Errorf("frame_length %d differs from the window length %d", v, frameLen)
		}
		frameLen = v
	}
	if frameLen < 1 {
		return nil, fmt.Errorf("STFT needs a window or a positive frame_length")
	}
	batch, length, c := int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2])
	if int64(length) < frameLen {
		return nil, fmt.Errorf("signal length %d is shorter than frame_length %d", length, frameLen)
	}
	fl := int(frameLen)
	frames := (length-fl)/int(step) + 1
	bins := fl
	if n.AttrInt("onesided", 1) != 0 {
		if c == 2 {
			return nil, fmt.Errorf("onesided STFT needs a real signal, got shape %v", x.Shape)
		}
		bins = fl/2 + 1
	}
	out := ir.NewTensor(x.DType, []int64{int64(batch), int64(frames), int64(bins), 2})
	re, im := make([]float64, fl), make([]float64, fl)
	for b := 0; b < batch; b++ {
		for f := 0; f < frames; f++ {
			for m := 0; m < fl; m++ {
				w := 1.0
				if window != nil {
					w = window.Float64(m)
				}
				base := (b*length + f*int(step) + m) * c
				re[m], im[m] = w*x.Float64(base), 0
				if c == 2 {
					im[m] = w * x.Float64(base+1)
				}
			}
			yr, yi := transform(re, im, fl, bins, false)
			for k := 0; k < bins; k++ {
				base := ((b*frames+f)*bins + k) * 2
				out.SetFloat64(base, yr[k])
				out.SetFloat64(base+1, yi[k])
			}
		}
	}
	return []*ir.Tensor{out}, nil
}
