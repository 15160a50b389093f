//go:build (!amd64 && !arm64) || noasm

package membw

import "unsafe"

// vectorName is empty: no vector reader without assembly here.
func vectorName() string { return "" }

func vectorRead(p unsafe.Pointer, n, d int) uint64 { panic("membw: no vector reader") }
