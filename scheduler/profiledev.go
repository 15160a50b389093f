package scheduler

import (
	"fmt"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// DefaultGPUOps is the op set a stand-in GPU device (NewProfileDevice with
// a gpu entry that lists no ops) claims: what a compute-shader backend is
// expected to cover first — dense linear algebra, convolutions and pooling,
// normalizations, attention, elementwise math and the layout ops that move
// whole tensors. Control flow, shape arithmetic, integer and string ops,
// scatter/gather-style indexing and sequence ops are left to the CPU.
var DefaultGPUOps = []string{
	"MatMul", "Gemm", "FusedMatMul", "QMatMul",
	"Conv", "FusedConv", "ConvTranspose",
	"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
	"BatchNormalization", "LayerNormalization", "RMSNormalization", "InstanceNormalization", "GroupNormalization",
	"Softmax", "LogSoftmax", "Attention", "Fused",
	"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs", "Neg", "Reciprocal", "Erf", "Tanh",
	"Sigmoid", "Relu", "LeakyRelu", "Gelu", "SiLU", "HardSigmoid", "HardSwish", "Clip", "Max", "Min", "Where",
	"ReduceMean", "ReduceSum", "ReduceMax",
	"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Identity",
}

// ProfileDevice is a stand-in for a device described by a profile entry
// but absent from this machine (a phone GPU seen from a laptop): it answers
// Supports from an op list and reports the entry's kind and host
// visibility, so that a plan for that machine can be made and inspected.
// It cannot run anything: Alloc and Compile fail.
type ProfileDevice struct {
	prof DeviceProfile
	ops  map[string]bool
}

// NewProfileDevice makes a stand-in for entry dp supporting ops (plus
// Transfer); nil ops means dp.Ops, or DefaultGPUOps for a gpu entry.
func NewProfileDevice(dp DeviceProfile, ops []string) *ProfileDevice {
	if ops == nil {
		ops = dp.Ops
	}
	if ops == nil && dp.Kind == "gpu" {
		ops = DefaultGPUOps
	}
	d := &ProfileDevice{prof: dp, ops: map[string]bool{OpTransfer: true}}
	for _, op := range ops {
		d.ops[op] = true
	}
	return d
}

// Name is the entry's name.
func (d *ProfileDevice) Name() string { return d.prof.Name }

// Kind is the entry's kind.
func (d *ProfileDevice) Kind() backends.Kind {
	if d.prof.Kind == "gpu" {
		return backends.GPU
	}
	return backends.CPU
}

// HostVisible is the entry's host_visible.
func (d *ProfileDevice) HostVisible() bool { return d.prof.HostVisible }

// Supports accepts the ops of the list (subgraph nodes included).
func (d *ProfileDevice) Supports(n *ir.Node) error {
	if !d.ops[n.Op] {
		return fmt.Errorf("%w: %s (profile stand-in) lists no %s", ir.ErrUnsupported, d.prof.Name, n.Op)
	}
	for _, sg := range n.Subgraphs() {
		for _, sn := range sg.Nodes {
			if err := d.Supports(sn); err != nil {
				return fmt.Errorf("subgraph %q: node %v: %w", sg.Name, sn, err)
			}
		}
	}
	return nil
}

// Alloc fails: a stand-in has no memory.
func (d *ProfileDevice) Alloc(int) (backends.Buffer, error) {
	return nil, fmt.Errorf("%s is a profile stand-in, not a device on this machine", d.prof.Name)
}

// Compile fails: a stand-in cannot run a plan.
func (d *ProfileDevice) Compile(*plan.Partition) (backends.Executable, error) {
	return nil, fmt.Errorf("%s is a profile stand-in, not a device on this machine: plans made for it can be inspected, not run", d.prof.Name)
}
