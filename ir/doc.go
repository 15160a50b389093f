// Package ir is weft's device-free intermediate representation: a static,
// topologically ordered DAG of Nodes that consume and produce Values.
//
// It owns Graph, Node, Value, DType, Shape, Tensor (host constants and
// runtime data) and attributes, plus a Builder for writing models by hand,
// a Verifier and a readable text form:
//
//	%5 = matmul %3, %w : f32[1,128,768]
//
// Conventions: tensors are row-major and little-endian; a nil Shape means the
// rank is unknown, an empty non-nil Shape is a scalar; a Dim with Size < 0 is
// unknown, optionally named by a symbol (batch, seq) that is bound at compile
// time. Core op semantics are listed in ops.go.
//
// ir must not know about devices, backends, file formats or passes: it imports
// the standard library only.
package ir
