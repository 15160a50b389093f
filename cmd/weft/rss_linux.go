//go:build linux

package main

import "syscall"

// peakRSS returns the process's peak resident set size in bytes
// (getrusage ru_maxrss, which Linux reports in KiB).
func peakRSS() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Maxrss) * 1024, true
}
