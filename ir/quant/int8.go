package quant

import "math"

// QuantizeRowInt8 encodes x symmetrically into dst (len(dst) == len(x)):
// scale = max|x|/127 and q = round(x/scale) (half away from zero), so the
// largest element maps to ±127 and -128 is never used. An all-zero row has
// scale 0 and all-zero codes.
func QuantizeRowInt8(dst []int8, x []float32) (scale float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	scale = amax / 127
	for j, v := range x {
		if scale == 0 {
			dst[j] = 0
			continue
		}
		q := math.Round(float64(v / scale))
		dst[j] = int8(max(-127, min(127, q)))
	}
	return scale
}

// DequantizeRowInt8 decodes q with the row's scale into dst: w = s·q,
// rounded to float32 (exactly the weights QMatMul multiplies by).
func DequantizeRowInt8(dst []float32, q []int8, scale float32) {
	for j, v := range q {
		dst[j] = float32(v) * scale
	}
}
