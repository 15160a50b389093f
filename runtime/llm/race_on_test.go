//go:build race

package llm_test

// raceEnabled reports a -race build, whose tests shrink their heaviest
// tables (the race detector makes them ten times slower).
const raceEnabled = true
