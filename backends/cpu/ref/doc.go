// Package ref holds weft's reference kernels: plain, obviously correct Go
// implementations of every core op for every dtype the ONNX tests use. They
// are the oracle that every fast kernel and GPU backend is tested against,
// and the evaluator behind constant folding and subgraph execution.
//
// This package owns the kernel registry, the graph evaluator (Eval,
// RunGraph) and the helpers kernels share (broadcasting, strides, axes).
// The kernels themselves live in subpackages by op family (elementwise,
// layout, nn, reduce, control, recurrent, signal, vision; fused for weft's
// fused ops, qmatmul, rope and transfer), each registering its ops in
// init(); backends/cpu imports them all.
//
// Kernels favour clarity over speed: element access goes through
// ir.Tensor's Float64/Int64 accessors unless a typed path is just as plain.
// ref must not know about the scheduler, the runtime or any frontend.
package ref
