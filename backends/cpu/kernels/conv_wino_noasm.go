//go:build !amd64 || noasm

package kernels

func winoFastArch() bool { return false }

func winoIn23Arch([]float32, int, []float32, []float32, []float32, []float32, int, int) bool {
	return false
}

func winoOut23Arch([]float32, []float32, []float32, []float32, []float32, int, int, int, float32, bool) bool {
	return false
}

func winoIn43Arch([]float32, int, *[4][]float32, int, int) bool { return false }

func winoOut43Arch(*[4][]float32, *[4][]float32, []float32, int, int, int, float32, bool) bool {
	return false
}
