// Package control holds the reference kernels for ONNX control flow: If,
// Loop and Scan. Each runs its subgraphs with ref.RunGraph in a child of the
// running Env, so bodies see outer-scope values.
//
// Tensors a body returns may be the very objects it was given (an Identity
// body returns its input, or an outer-scope value): the kernels never
// mutate them and copy wherever they stack or hand them on as outputs.
//
// This package must not know about the scheduler, the runtime or any
// frontend; it knows only ir and the ref evaluator.
package control
