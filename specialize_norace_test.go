//go:build !race

package weft

const raceEnabled = false
