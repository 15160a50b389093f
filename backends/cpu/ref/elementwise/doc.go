// Package elementwise holds the reference kernels of the elementwise core
// ops: unary math (Abs, Exp, Sqrt, Erf, trigonometry, ...), activations
// (Relu, Sigmoid, Gelu, Elu, PRelu, Clip, ...), broadcasting binary and
// variadic arithmetic (Add, Div, Pow, Mod, Max, Sum, Mean, ...), bitwise and
// logical ops, comparisons, Where, Cast/CastLike, Identity and inference-mode
// Dropout.
//
// Every op follows the ONNX operator of the same name at its newest version
// up to opset 21, with numpy multidirectional broadcasting for binary and
// variadic ops. The kernels are built from two generic helpers (one for
// unary maps, one for broadcasting folds over two or more inputs) and tables
// mapping each op to its scalar functions, one line per op.
//
// Arithmetic conventions: float dtypes are computed in float64 and rounded
// once, to nearest even, to the output dtype (f16 and bf16 included);
// integer dtypes are computed in int64 (uint64 for unsigned dtypes) and wrap
// around to their width; integer division or remainder by zero is an error.
//
// The package also owns the ONNX DataType number <-> ir.DType mapping
// (DTypeFromONNX, ONNXFromDType) that Cast needs. It must not know about
// frontends, the scheduler or the runtime: it imports ir and ref only.
package elementwise
