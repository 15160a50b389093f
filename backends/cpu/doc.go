// Package cpu is weft's CPU backend. It registers itself as "cpu" in init()
// and, for now, executes partitions with the reference kernels of package
// ref (imported here by op family). Fast kernels (SIMD, quantized matmul,
// worker pool) will be tested against those reference kernels.
//
// cpu must not import the scheduler, the runtime, other backends or any
// frontend.
package cpu
