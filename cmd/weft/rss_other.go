//go:build !linux && !darwin

package main

// peakRSS reports that this OS's peak RSS is not measured here.
func peakRSS() (int64, bool) { return 0, false }
