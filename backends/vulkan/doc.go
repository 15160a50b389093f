// Package vulkan is weft's Vulkan compute backend. It registers itself as
// "vulkan" in init(); a program enables it by importing it (cmd/weft does:
// `--target vulkan` places every node this backend supports on it; weft.go
// does not). Devices are named "vulkan:N" after their index in
// vkEnumeratePhysicalDevices.
//
// What it owns:
//
//   - The binding (vk.h, vk_cgo.go): a thin cgo layer over the Vulkan C API.
//     The loader libvulkan.so.1 is opened at run time with dlopen and every
//     entry point is loaded through vkGetInstanceProcAddr, so binaries need
//     no Vulkan at link time and run where there is none. Building with cgo
//     needs the headers (Debian: libvulkan-dev). Without cgo, stub.go
//     compiles instead and the backend has no devices.
//   - Devices (device.go): instance, physical devices (properties, limits,
//     features through vkGetPhysicalDeviceFeatures2; 16-bit storage and
//     shaderFloat16 enabled at device creation when the quirk flags allow
//     them), one compute queue, storage buffers in one memory type for
//     device data and one host-visible coherent type for staging,
//     Capabilities (storage vs arithmetic precision), Close.
//   - The pipeline cache (cache.go, cachefile.go): one VkPipelineCache per
//     device, saved beside a compiled plan as FILE.wplan.vkcache and loaded
//     on open (backends.CacheFiler), validated against the device's vendor,
//     device, driver version and pipelineCacheUUID, ignored with a note
//     when it does not match.
//   - Quirks and kill switches (quirks.go, the only place that looks at
//     vendor, device and driver; see the list of WEFT_VULKAN_* variables
//     there).
//   - Op planning (ops.go, ops_layout.go, ops_nn.go): node → shader
//     dispatches (push constants, workgroup counts). It answers Supports, so a node runs here only if
//     planning succeeds; anything else is declined with an error wrapping
//     ir.ErrUnsupported that says why, and stays on another device.
//   - Execution (exec.go, state.go): Compile and CompilePlanned upload the
//     partition's constants once and place every other value: at its
//     plan.Buffer offset inside the memory plan's arena for this device
//     (one VkBuffer per arena and run state, allocated by the runtime
//     through Alloc), or in a per-state scratch buffer (graph outputs,
//     inputs from other devices, Fused-body intermediates). Each run state
//     (NewState, one per concurrent run) records one command buffer for
//     the partition once — input copies from a staging buffer, every
//     dispatch followed by a barrier, output copies back — and each run
//     replays it, allocating nothing: host tensors in from the Env, outputs
//     into the caller's bound tensor or fresh ones. Close (executables and
//     states, io.Closer) frees device memory and command pools
//     deterministically; runtime.Session.Close calls it.
//   - The shaders (shaders/*.comp, GLSL compute), compiled to SPIR-V by
//     glslc through `go generate` (generate.go) and embedded.
//
// Kernels: f32 data (f16 for MatMul where the device stores f16, and
// QMatMul's block-quantized and half weights), static shapes; anything
// else is declined. The precision policy is in quirks.go.
//
//   - Linear algebra: MatMul (16×16 tiles, ONNX batching and broadcasting,
//     1-D operands), FusedMatMul (bias with numpy broadcasting, every
//     activation of the op contract), in f32, in f16 storage with f32 or
//     f16 tile arithmetic (f16 graphs), or with f16-stored weights (the
//     WEFT_VULKAN_FP16_WEIGHTS=1 opt-in); QMatMul with Q8_0, Q4_0, F16 or
//     BF16 weights (the raw bytes uploaded as they are and widened in the
//     shader, which reads them as uint words, or F16 as float16_t through
//     16-bit storage; f16 scales through unpackHalf2x16; Int8 weights
//     with per-row Scales and other block formats declined).
//   - RotaryEmbedding (interleaved 0 and 1, partial rotary_embedding_dim)
//     on 4-D X with i64 position ids, checked on the host to lie in
//     [0, max_pos) like Gather's indices (ops_llm.go).
//   - Elementwise: Add, Sub, Mul, Div, Max, Min (numpy broadcasting up to
//     rank 6), Relu, Sigmoid, Tanh, Gelu (exact and tanh), SiLU, Exp, Neg,
//     Abs, Sqrt, Reciprocal, Log, Erf, LeakyRelu, HardSigmoid; Fused (the
//     body's nodes become one dispatch each, intermediates in the arena,
//     body constants uploaded with the partition's).
//   - Normalization and reductions: Softmax (last axis, and the legacy
//     2-D form), LayerNormalization and RMSNormalization (any axis; scale
//     and bias with one value per normalized element; not LayerNorm's Mean
//     and InvStdDev outputs), ReduceMean and ReduceSum over trailing axes
//     (constant axes), GlobalAveragePool.
//   - Convolution and pooling, 1-D and 2-D: Conv and FusedConv (groups,
//     strides, dilations, pads, auto_pad; bias, residual, activation),
//     MaxPool (without the Indices output) and AveragePool (ceil_mode,
//     count_include_pad), one invocation per output element.
//   - Attention (weft's op): grouped-query heads, is_causal, scale, an
//     additive float mask broadcast to [B, H, Sq, Skv]; an online softmax
//     per query row (value head size ≤ 256; boolean masks declined).
//   - Layout: Transpose (rank ≤ 6), Reshape, Flatten, Squeeze, Unsqueeze,
//     Identity and Transfer (whole-buffer copies), Concat, Slice (constant
//     starts, ends, axes and steps, negative steps included), all on one
//     strided-copy shader; Gather along axis 0 (embedding lookups) with
//     int64 or int32 indices, which the executable checks on the host
//     before the dispatch (constant indices at compile time), so that an
//     out-of-range index is an error, never a wrong read.
//
// Each is tested against the CPU reference kernels on small, odd shapes
// (ops_test.go, ops_more_test.go, ops_llm_test.go), quantized llama and
// qwen2 graphs against the reference evaluator (llama_test.go; the CPU
// backend's fast QMatMul quantizes activations, the shader does not),
// whole models with a mix of CPU and Vulkan partitions against the CPU
// alone (mixed_test.go; with the device seen as not host-visible too, so
// that Transfer nodes are exercised), and the ONNX node tests through
// conform (conform/vulkan_test.go). The f16 paths are checked against
// float64 references with error bounds derived from each shader's
// arithmetic (f16_test.go); plan arenas, allocation counts and Close in
// pool_test.go and session_test.go; the pipeline cache file in
// cache_test.go.
//
// What it must not know: the scheduler, the runtime, other backends, any
// frontend or pass. It sees the graph only through the partitions and
// nodes handed to it, and the rest of weft sees it only through the
// backends API.
package vulkan
