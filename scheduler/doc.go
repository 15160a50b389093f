// Package scheduler turns an optimized ir.Graph into a plan.Plan: it asks
// each device (through the backends API only) whether it supports each node,
// places nodes greedily, records the cause of every placement, merges runs of
// same-device nodes into partitions and lists the buffers the plan needs.
//
// Placement (place.go) walks the nodes in order. A strict pin (Options.Pins)
// or the last matching user rule (Options.Rules, --place) decides first; a
// rule whose device cannot run the node falls back with a warning cause.
// Otherwise the cost model (costmodel.go; numbers from a device profile,
// profile.go, bundled in scheduler/profiles or measured by `weft calibrate`)
// prices the node on every device that supports it, transfers of its inputs
// included: the node stays on the device holding its inputs unless that is
// more than KeepFactor times the cheapest, else goes to the cheapest; a
// weight-heavy node (MatMul/Gemm/FusedMatMul/QMatMul with constant weights,
// Conv/FusedConv) goes to a GPU only when its batch reaches BatchThreshold.
// Every decision records a cause code and text (Placement, Report).
//
// Transfers (transfer.go): where a value crosses between devices whose
// buffers are not compatible (not both host-visible), a Transfer node
// (OpTransfer) copies it, so partitions read only their own device's
// values; graph outputs come back to the host. The report (report.go) sums
// nodes, FLOPs, bytes and time per device, transfers, and an estimated
// timeline; devices are assumed to run one after another.
//
// Cost (cost.go) gives per-node FLOPs and bytes estimates (NodeCost,
// GraphCost), which `weft compile --report` also prints.
//
// The last step is the memory plan (memplan.go): every intermediate with a
// static size gets an offset in one 64-byte aligned arena per device, from
// its lifetime over the scheduled order; elementwise ops may overwrite an
// input that dies at them; several greedy best-fit orders compete and the
// smallest arena wins; plan.Verify checks the result. Graph outputs are not
// planned (the caller owns them), nor are values of dynamic size.
//
// scheduler must not know any backend's internals, frontends or passes.
package scheduler
