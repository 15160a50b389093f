// Package plan owns the device plan: which device runs which partition of an
// optimized ir.Graph, in what order, and what buffers the values need. Later
// it also owns the on-disk .wplan form (versioned, little-endian, 64-byte
// aligned, mmap-able).
//
// plan must not know about particular backends, frontends or passes.
package plan
