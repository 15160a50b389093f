// Package plan owns the device plan: which device runs which partition of an
// optimized ir.Graph, in what order, and what buffers the values need. It
// also owns the on-disk .wplan form (file*.go; versioned, little-endian,
// 64-byte aligned, per-section checksums, weights memory-mapped and used in
// place): Write, Open, Decode. docs/plan-format.md specifies the format.
//
// plan must not know about particular backends, frontends or passes.
package plan
