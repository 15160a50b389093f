// Package vision holds the reference kernels for ONNX image ops: Resize,
// GridSample, RoiAlign and NonMaxSuppression.
//
// Interpolation is separable and computed in float64, one axis at a time,
// exactly as the operator definitions describe it. This package must not
// know about the scheduler, the runtime or any frontend.
package vision
