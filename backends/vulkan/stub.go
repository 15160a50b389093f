//go:build !cgo

package vulkan

import "github.com/weftrt/weft/backends"

// probe: without cgo there is no way to call the Vulkan loader.
func probe(func(string) string) ([]backends.Device, string) {
	return nil, "vulkan: built without cgo"
}
