//go:build race

package cpu

// raceOn: sync.Pool drops items at random under the race detector, so
// allocation counts are meaningless there.
const raceOn = true
