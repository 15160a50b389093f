// Package scheduler turns an optimized ir.Graph into a plan.Plan: it asks
// each device (through the backends API only) whether it supports each node,
// places nodes greedily, records the cause of every placement, merges runs of
// same-device nodes into partitions and lists the buffers the plan needs.
//
// Placement today: a user pin wins; otherwise the node stays on the device
// that produced its inputs when that device supports it; otherwise the first
// supporting device in preference order. The cost model, device profiles and
// transfer insertion described in ARCHITECTURE.md build on this skeleton;
// its first piece is cost.go: per-node FLOPs and bytes estimates
// (NodeCost, GraphCost), which `weft compile --report` prints today.
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
