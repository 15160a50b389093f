//go:build race

package weft

// raceEnabled: the race detector allocates, so allocation counts are
// only reported, not compared.
const raceEnabled = true
