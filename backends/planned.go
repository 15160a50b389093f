package backends

import (
	"context"

	"github.com/weftrt/weft/plan"
)

// PlanCompiler is an optional Device interface for devices that execute
// into the plan's memory arena: CompilePlanned sees the whole plan (buffer
// offsets, lifetimes) while compiling one of its partitions. The runtime
// prefers it to Device.Compile when a device offers it.
type PlanCompiler interface {
	CompilePlanned(p *plan.Plan, part *plan.Partition) (Executable, error)
}

// StatefulExecutable is an optional Executable interface for executables
// that keep per-run state: tensors over the device arena, argument slices,
// scratch. The runtime makes one ExecState per concurrent run and reuses it
// for the sequential runs that follow, which is how a plan runs without
// allocating.
type StatefulExecutable interface {
	Executable
	// NewState binds new per-run state to arena, the device's arena for one
	// run (plan.Arenas; nil when the plan has none for the device).
	NewState(arena Buffer) (ExecState, error)
}

// ExecState runs a partition with the storage of one run. It is used by one
// run at a time.
//
// Graph outputs: before each run the runtime binds every graph output that a
// node produces in the Env, either to a destination tensor or to nil. A
// state writes the output into a bound destination whose dtype and shape
// match what it computes, and otherwise binds a tensor of its own (which the
// caller then owns).
type ExecState interface {
	Run(ctx context.Context, env *Env) error
}
