package vulkan

// The SPIR-V in shaders/*.spv is generated from shaders/*.comp by glslc
// (Debian package glslc) and committed, so that building needs no shader
// compiler. Run `go generate ./backends/vulkan/` after editing a shader.

//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/binary.spv shaders/binary.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/unary.spv shaders/unary.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/transpose.spv shaders/transpose.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/softmax.spv shaders/softmax.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/norm.spv shaders/norm.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/matmul.spv shaders/matmul.comp
