//go:build !amd64 || noasm

package kernels

func maxRowsArch(dst, a, b []float32) bool { return false }

func maxPoolRowArch(dst, v []float32, offs []int, stride, maxOff int) bool { return false }
