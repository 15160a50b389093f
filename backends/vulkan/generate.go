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
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/strided.spv shaders/strided.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/reduce.spv shaders/reduce.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/pool.spv shaders/pool.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/conv.spv shaders/conv.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/attention.spv shaders/attention.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/gather.spv shaders/gather.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/qmatmul.spv shaders/qmatmul.comp
//go:generate glslc -O --target-env=vulkan1.0 -fshader-stage=compute -o shaders/rope.spv shaders/rope.comp
//go:generate glslc -O --target-env=vulkan1.1 -fshader-stage=compute -DW_F16 -o shaders/matmul_wf16.spv shaders/matmul.comp
//go:generate glslc -O --target-env=vulkan1.1 -fshader-stage=compute -DALL_F16 -o shaders/matmul_f16.spv shaders/matmul.comp
//go:generate glslc -O --target-env=vulkan1.1 -fshader-stage=compute -DALL_F16 -DARITH_F16 -o shaders/matmul_f16a.spv shaders/matmul.comp
//go:generate glslc -O --target-env=vulkan1.1 -fshader-stage=compute -DW_F16 -o shaders/qmatmul_f16.spv shaders/qmatmul.comp
