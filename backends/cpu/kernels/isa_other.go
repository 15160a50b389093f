//go:build (!amd64 && !arm64) || noasm

package kernels

func detectISA() ISA { return Generic }

var hasVNNI = false
