//go:build !amd64 || noasm

package cpu

// Without assembly RotaryEmbedding rotates in plain Go.

func ropeHalf(x1, x2, c, s, y1, y2 []float32) { ropeHalfGo(x1, x2, c, s, y1, y2) }

func ropePairs(x, c, s, y []float32) { ropePairsGo(x, c, s, y) }
