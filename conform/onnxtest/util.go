package onnxtest

import (
	"math"
	"sort"
)

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
