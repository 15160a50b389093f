//go:build unix

package gemm

import "syscall"

// cpuSeconds returns the user+system CPU time of the process so far; the
// benchmarks report work per CPU-second next to work per wall-second,
// which shows the kernels' speed even when other jobs share the machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
