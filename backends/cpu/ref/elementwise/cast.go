package elementwise

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("Cast", castKernel)
	ref.Register("CastLike", castLikeKernel)
	ref.Register("Identity", identityKernel)
	ref.Register("Dropout", dropoutKernel)
}

// castKernel converts input 0 to the dtype named by the ONNX DataType
// number in the `to` attribute (see cast). String, complex, float8 and
// 4-bit targets are unsupported; `saturate` only concerns float8.
func castKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := needOutputs(n, 1); err != nil {
		return nil, err
	}
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	if !n.Has("to") {
		return nil, fmt.Errorf("Cast has no `to` attribute")
	}
	to := n.AttrInt("to", 0)
	dt, ok := DTypeFromONNX(to)
	if !ok {
		return nil, ref.Unsupported("Cast to ONNX data type %d", to)
	}
	out, err := cast(in[0], dt)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{out}, nil
}

// castLikeKernel converts input 0 to the dtype of input 1.
func castLikeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := needOutputs(n, 1); err != nil {
		return nil, err
	}
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	out, err := cast(in[0], in[1].DType)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{out}, nil
}

// cast converts x to dtype dt:
//   - float to float: rounded once to nearest even (f64 to f16 directly);
//   - integer to float: rounded once to nearest even;
//   - float to integer: truncated toward zero; out of range see floatToIntBits;
//   - integer to integer: two's-complement wrap-around to the width;
//   - anything to bool: x != 0 (NaN is true); bool to anything: 0 or 1.
func cast(x *ir.Tensor, dt ir.DType) (*ir.Tensor, error) {
	if err := checkDType("Cast input", x.DType, anyType); err != nil {
		return nil, err
	}
	if err := checkDType("Cast target", dt, anyType); err != nil {
		return nil, err
	}
	if x.DType == dt {
		return x.Clone(), nil
	}
	out := ir.NewTensor(dt, x.Shape)
	for k := range x.Len() {
		switch src := x.DType; {
		case src.IsFloat():
			setFromFloat(out, k, x.Float64(k))
		case src.IsUnsigned():
			setFromInt(out, k, int64(x.Uint64(k)), true)
		default: // signed or bool
			setFromInt(out, k, x.Int64(k), false)
		}
	}
	return out, nil
}

// identityKernel copies its input bit for bit (any dtype).
func identityKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := needOutputs(n, 1); err != nil {
		return nil, err
	}
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	if err := checkDType("input 0", in[0].DType, anyType); err != nil {
		return nil, err
	}
	return []*ir.Tensor{in[0].Clone()}, nil
}

// dropoutKernel is Dropout in inference mode: (data, ratio?, training_mode?)
// -> (output, mask?). Without training_mode, or with it false, or with a
// ratio of 0, the output is a copy of data and the mask all true. Training
// mode with a nonzero ratio draws random numbers: unsupported.
func dropoutKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(n.Outputs) < 1 || len(n.Outputs) > 2 {
		return nil, fmt.Errorf("node has %d outputs, want 1 or 2", len(n.Outputs))
	}
	if len(in) > 3 {
		return nil, fmt.Errorf("got %d inputs, want 1 to 3", len(in))
	}
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if err := checkDType("input 0", x.DType, floats); err != nil {
		return nil, err
	}
	ratio := 0.5
	if len(in) > 1 && in[1] != nil {
		if err := checkDType("ratio (input 1)", in[1].DType, floats); err != nil {
			return nil, err
		}
		if in[1].Len() != 1 {
			return nil, fmt.Errorf("ratio (input 1) has shape %v, want a scalar", in[1].Shape)
		}
		ratio = in[1].Float64(0)
	}
	if len(in) > 2 && in[2] != nil {
		t := in[2]
		if err := checkDType("training_mode (input 2)", t.DType, bools); err != nil {
			return nil, err
		}
		if t.Len() != 1 {
			return nil, fmt.Errorf("training_mode (input 2) has shape %v, want a scalar", t.Shape)
		}
		if t.Bool(0) && ratio != 0 {
			return nil, ref.Unsupported("Dropout in training mode is nondeterministic (ratio %g)", ratio)
		}
	}
	outs := []*ir.Tensor{x.Clone()}
	if len(n.Outputs) == 2 {
		mask := ir.NewTensor(ir.Bool, x.Shape)
		for k := range mask.Data {
			mask.Data[k] = 1
		}
		outs = append(outs, mask)
	}
	return outs, nil
}
