// Package onnxtest writes minimal ONNX files — a ModelProto with a few
// nodes, and serialized TensorProtos in the layout of the ONNX backend
// tests — so that tests of the CLI and the conformance runner need no
// Python and no checked-in binaries. It is a test helper, not an ONNX
// exporter: it encodes only what its types can say.
package onnxtest
