package signal

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("HannWindow", windowKernel(0.5, 0.5, 0))
	ref.Register("HammingWindow", windowKernel(25.0/46, 21.0/46, 0))
	ref.Register("BlackmanWindow", windowKernel(0.42, 0.5, 0.08))
	ref.Register("MelWeightMatrix", melKernel)
}

// onnxDTypes maps ONNX TensorProto data type numbers to weft dtypes.
var onnxDTypes = map[int64]ir.DType{
	1: ir.Float32, 2: ir.Uint8, 3: ir.Int8, 4: ir.Uint16, 5: ir.Int16, 6: ir.Int32, 7: ir.Int64,
	9: ir.Bool, 10: ir.Float16, 11: ir.Float64, 12: ir.Uint32, 13: ir.Uint64, 16: ir.BFloat16,
}

// outputDType reads the output_datatype attribute (default 1, float32).
func outputDType(n *ir.Node) (ir.DType, error) {
	code := n.AttrInt("output_datatype", 1)
	dt, ok := onnxDTypes[code]
	if !ok {
		return ir.Invalid, ref.Unsupported("output_datatype %d", code)
	}
	return dt, nil
}

// windowKernel returns the kernel of a generalized cosine window:
//
//	w[k] = a0 - a1·cos(2πk/N) + a2·cos(4πk/N),  k = 0 ... size-1
//
// with N = size when periodic (the default) and size-1 otherwise. Integer
// output dtypes get the values truncated toward zero, as a Cast would.
func windowKernel(a0, a1, a2 float64) ref.Kernel {
	return func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		if err := ref.Need(in, 0); err != nil {
			return nil, err
		}
		size, err := scalarInt(in[0], "size")
		if err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, fmt.Errorf("size is %d, want >= 0", size)
		}
		dt, err := outputDType(n)
		if err != nil {
			return nil, err
		}
		N := float64(size)
		if n.AttrInt("periodic", 1) == 0 {
			N--
			if size == 1 {
				return nil, fmt.Errorf("a symmetric window of size 1 divides by zero")
			}
		}
		out := ir.NewTensor(dt, []int64{size})
		for k := 0; k < int(size); k++ {
			a := 2 * math.Pi * float64(k) / N
			out.SetFloat64(k, a0-a1*math.Cos(a)+a2*math.Cos(2*a))
		}
		return []*ir.Tensor{out}, nil
	}
}

// hzToMel is the HTK mel scale the operator defines.
func hzToMel(f float64) float64 { return 2595 * math.Log10(1+f/700) }

// melToHz inverts hzToMel.
func melToHz(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }

// melKernel implements MelWeightMatrix: inputs num_mel_bins, dft_length,
// sample_rate (integers), lower_edge_hertz, upper_edge_hertz (floats);
// output [dft_length/2+1, num_mel_bins] of triangular filters peaking at 1.
//
// It follows the construction the ONNX reference uses: num_mel_bins+2
// points spaced by (mel(upper)-mel(lower))/(num_mel_bins+2) from mel(lower)
// are mapped back to Hz and to spectrogram bins as
// floor((dft_length+1)·hz / sample_rate); filter i rises linearly from bin
// point i to point i+1 (inclusive) and falls to point i+2 (exclusive), a
// zero-width rise being a single 1 at the centre.
func melKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2, 3, 4); err != nil {
		return nil, err
	}
	var ints [3]int64
	for i, name := range []string{"num_mel_bins", "dft_length", "sample_rate"} {
		v, err := scalarInt(in[i], name)
		if err != nil {
			return nil, err
		}
		if v < 1 {
			return nil, fmt.Errorf("%s is %d, want >= 1", name, v)
		}
		ints[i] = v
	}
	numMel, dftLen, rate := ints[0], ints[1], ints[2]
	for i, name := range []string{"lower_edge_hertz", "upper_edge_hertz"} {
		if t := in[3+i]; !t.DType.IsFloat() || t.Len() != 1 {
			return nil, fmt.Errorf("%s is %v, want a float scalar", name, t)
		}
	}
	lower, upper := in[3].Float64(0), in[4].Float64(0)
	dt, err := outputDType(n)
	if err != nil {
		return nil, err
	}
	specBins := dftLen/2 + 1
	lowMel, highMel := hzToMel(lower), hzToMel(upper)
	step := (highMel - lowMel) / float64(numMel+2)
	points := make([]int64, numMel+2)
	for i := range points {
		hz := melToHz(float64(i)*step + lowMel)
		points[i] = int64(math.Floor(float64(dftLen+1) * hz / float64(rate)))
		if points[i] < 0 || points[i] >= specBins {
			return nil, fmt.Errorf("mel band edge %d maps to spectrogram bin %d, outside [0, %d)", i, points[i], specBins)
		}
	}
	out := ir.NewTensor(dt, []int64{specBins, numMel})
	w := make([]float64, specBins*numMel)
	for i := int64(0); i < numMel; i++ {
		lo, c, hi := points[i], points[i+1], points[i+2]
		if c == lo {
			w[c*numMel+i] = 1
		} else {
			for j := lo; j <= c; j++ {
				w[j*numMel+i] = float64(j-lo) / float64(c-lo)
			}
		}
		for j := c; j < hi; j++ {
			w[j*numMel+i] = float64(hi-j) / float64(hi-c)
		}
	}
	for k, v := range w {
		out.SetFloat64(k, v)
	}
	return []*ir.Tensor{out}, nil
}
