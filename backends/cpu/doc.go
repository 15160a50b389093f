// Package cpu is weft's CPU backend. It registers itself as "cpu" in init()
// and executes partitions with the reference kernels of package ref
// (imported here by op family) and with "into" kernels.
//
// Planned execution (planned.go, into*.go): CompilePlanned (the
// backends.PlanCompiler interface) turns a partition into steps over dense
// value slots; each run state (NewState) owns tensors that view the device
// arena at the plan's offsets. A node whose operands have static shapes and
// whose op has an into kernel (registerInto) writes straight into those
// tensors, allocating nothing; every other node runs its reference kernel,
// and the result is copied into its planned slot. A view op (Reshape and
// the like) that the memory plan put on its input's bytes has no step. A
// step whose operands are all constants, planned values, graph inputs of
// static shape or in-place outputs is fixed: its arguments are bound once
// per state (again when the caller passes other input tensors) and a run
// calls its kernel with no per-step lookups, which matters at batch 1,
// where the metadata is cold after each weight stream. Into kernels are
// checked against the reference kernels on random shapes; they decline
// (nil) whatever they do not handle exactly. The fast kernels (SIMD,
// quantized matmul, worker pool) plug in the same way.
//
// cpu must not import the scheduler, the runtime, other backends or any
// frontend.
package cpu
