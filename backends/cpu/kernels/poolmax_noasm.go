//go:build !amd64 || noasm

package kernels

func maxPool3S2RowArch(dst, r0, r1, r2 []float32) bool { return false }

func maxPool3S2RowVector() bool { return false }
