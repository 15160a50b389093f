// Package reduce holds weft's reference kernels for reductions (Reduce*,
// ArgMax, ArgMin), the softmax family (Softmax, LogSoftmax, Hardmax),
// normalizations (BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, MeanVarianceNormalization, LRN),
// losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), Einsum and
// Det.
//
// Each kernel follows the ONNX semantics of the operator's newest version up
// to opset 21 in weft's canonical form (see ir/ops.go): the axes of Reduce*
// are an optional i64 input, never an attribute. Floating-point dtypes are
// computed in float64 and rounded once to the output dtype; integer
// reductions accumulate in int64 with wrap-around (uint64 compared as
// unsigned where order matters).
//
// The kernels register themselves with ref.Register in init(). This package
// owns nothing but those kernels and their small shared helpers; it must not
// know about the scheduler, the runtime, any frontend or other kernel
// families.
package reduce
