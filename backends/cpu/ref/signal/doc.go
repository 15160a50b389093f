// Package signal holds the reference kernels for ONNX signal processing:
// DFT, STFT, the BlackmanWindow, HannWindow and HammingWindow generators and
// MelWeightMatrix.
//
// Transforms are computed directly from their definition (an O(n²) sum per
// output bin, in float64): slow, but obviously right, which is what an
// oracle is for. This package must not know about the scheduler, the
// runtime or any frontend.
package signal
