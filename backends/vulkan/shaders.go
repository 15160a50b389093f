package vulkan

import "embed"

// spirv holds the compiled shaders (see generate.go).
//
//go:embed shaders/*.spv
var spirv embed.FS
