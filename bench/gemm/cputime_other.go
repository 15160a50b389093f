//go:build !unix

package gemm

func cpuSeconds() float64 { return 0 }
