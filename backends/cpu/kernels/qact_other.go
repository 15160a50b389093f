//go:build !amd64 || noasm

package kernels

// quantActsRow quantizes one row of K = 32·len(d) floats (see
// QuantizeActs) with the scalar loop.
func quantActsRow(x []float32, qs []int8, d []float32, nsum []int32) {
	quantActsGeneric(x, qs, d, nsum)
}
