package onnx

// Equivalent exposes the structural graph comparison of write_test.go to
// the external tests of this directory.
var Equivalent = equivalent
