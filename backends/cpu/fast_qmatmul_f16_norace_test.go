//go:build !race

package cpu

const raceOn = false
