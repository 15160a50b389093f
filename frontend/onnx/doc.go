// Package onnx imports ONNX models into weft's ir.
//
// It owns the decoding of ONNX protobuf files (ModelProto, GraphProto,
// NodeProto, TensorProto, ...) straight from the wire format with protowire,
// the mapping of model files and external data (weights stay zero-copy
// slices of the mappings), and an opset-versioned table of op importers, one
// file per op family (ops_*.go). Each importer emits the core op of the same
// name in canonical form (see ir/ops.go): attributes that newer opsets turned
// into inputs become constant inputs, and older semantics that the newest
// version cannot express are recorded in attributes (legacy_axis on
// Softmax/LogSoftmax/Hardmax before opset 13).
//
// The default-domain opset may be 7..21; an older model is imported node by
// node where each operator's version equals its opset-7 version, or where
// legacy.go restates the old version exactly (legacy broadcasting, PRelu-6,
// BatchNormalization-6 in test mode, ...).
//
// Anything weft does not handle (unknown ops, non-default domains, string,
// complex, sparse, sequence, map and optional values, opsets above 21)
// fails with an error wrapping ir.ErrUnsupported; malformed input fails with
// an error naming the file, graph, node, op and opset, never a panic.
//
// It also writes ir graphs back out as ONNX models (Write, WriteFile,
// Marshal in write*.go) at a chosen default-domain opset (13..21), restating
// the canonical forms where the target opset needs it; weft's own ops and
// forms ONNX cannot express are refused as unsupported.
//
// The package must not know about backends, passes, scheduling or the
// runtime: it imports ir and the standard library (plus protowire and
// x/sys/unix for mmap) only.
package onnx
