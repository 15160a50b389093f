//go:build race

package kernels

// raceEnabled is set under the race detector, whose sync.Pool drops items
// on purpose (so allocation counts are meaningless there).
const raceEnabled = true
