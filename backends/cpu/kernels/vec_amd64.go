//go:build !noasm

package kernels

//go:noescape
func vecAct512(op, n int, x *float32)

//go:noescape
func vecAct256(op, n int, x *float32)

//go:noescape
func vecExpSum512(n int, x *float32, m float32) float32

//go:noescape
func vecExpSum256(n int, x *float32, m float32) float32

//go:noescape
func vecMax512(n int, x *float32) float32

//go:noescape
func vecMax256(n int, x *float32) float32

//go:noescape
func vecSum512(n int, x *float32) float32

//go:noescape
func vecSum256(n int, x *float32) float32

//go:noescape
func vecSumSqDev512(n int, x *float32, mean float32) float32

//go:noescape
func vecSumSqDev256(n int, x *float32, mean float32) float32

//go:noescape
func vecScaleAdd512(n int, x *float32, s float32, m *float32)

//go:noescape
func vecScaleAdd256(n int, x *float32, s float32, m *float32)

//go:noescape
func vecNorm512(n int, x, y, gm, b *float32, mean, inv float32)

//go:noescape
func vecNorm256(n int, x, y, gm, b *float32, mean, inv float32)

// vecWidth returns the lanes of the assembly in use (0: none), and the
// length of x that the assembly covers (a multiple of the lanes).
func vecWidth(n int) (w, body int) {
	switch CurrentISA() {
	case AVX512:
		return 16, n &^ 15
	case AVX2:
		return 8, n &^ 7
	}
	return 0, 0
}

func actArch(op int, x []float32) int {
	w, n := vecWidth(len(x))
	switch {
	case n == 0:
	case w == 16:
		vecAct512(op, n, &x[0])
	default:
		vecAct256(op, n, &x[0])
	}
	return n
}

func expSumArch(x []float32, m float32) (int, float32) {
	w, n := vecWidth(len(x))
	switch {
	case n == 0:
		return 0, 0
	case w == 16:
		return n, vecExpSum512(n, &x[0], m)
	}
	return n, vecExpSum256(n, &x[0], m)
}

func maxArch(x []float32) (int, float32) {
	w, n := vecWidth(len(x))
	switch {
	case n == 0:
		return 0, 0
	case w == 16:
		return n, vecMax512(n, &x[0])
	}
	return n, vecMax256(n, &x[0])
}

func sumArch(x []float32) (int, float32) {
	w, n := vecWidth(len(x))
	switch {
	case n == 0:
		return 0, 0
	case w == 16:
		return n, vecSum512(n, &x[0])
	}
	return n, vecSum256(n, &x[0])
}

func sumSqDevArch(x []float32, mean float32) (int, float32) {
	w, n := vecWidth(len(x))
	switch {
	case n == 0:
		return 0, 0
	case w == 16:
		return n, vecSumSqDev512(n, &x[0], mean)
	}
	return n, vecSumSqDev256(n, &x[0], mean)
}

// scaleAddArch and normArch take slices already cut to len(x).
func scaleAddArch(x []float32, s float32, m []float32) int {
	w, n := vecWidth(len(x))
	if n == 0 {
		return 0
	}
	var mp *float32
	if m != nil {
		mp = &m[0]
	}
	if w == 16 {
		vecScaleAdd512(n, &x[0], s, mp)
	} else {
		vecScaleAdd256(n, &x[0], s, mp)
	}
	return n
}

func normArch(x, y, g, b []float32, mean, inv float32) int {
	w, n := vecWidth(len(x))
	if n == 0 {
		return 0
	}
	var bp *float32
	if b != nil {
		bp = &b[0]
	}
	if w == 16 {
		vecNorm512(n, &x[0], &y[0], &g[0], bp, mean, inv)
	} else {
		vecNorm256(n, &x[0], &y[0], &g[0], bp, mean, inv)
	}
	return n
}
