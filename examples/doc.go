// Package examples holds runnable programs that use weft through its public
// API only (package weft, ir.Builder and ir.Tensor): examples/mlp builds a
// small model by hand, compiles it and runs it; examples/plugin is a backend
// written as one package (examples/plugin/toyaccel) and a program using it
// (see docs/backends.md).
package examples
