//go:build !noasm

package kernels

import "golang.org/x/sys/cpu"

func detectISA() ISA {
	x := cpu.X86
	if !x.HasAVX2 || !x.HasFMA || !x.HasF16C {
		return Generic
	}
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ {
		return AVX512
	}
	return AVX2
}

// hasVNNI reports AVX512-VNNI (VPDPBUSD on EVEX-encoded registers).
var hasVNNI = cpu.X86.HasAVX512VNNI
