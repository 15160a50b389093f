// Package examples holds runnable programs that use weft through its public
// API only (package weft, ir.Builder and ir.Tensor): examples/mlp builds a
// small model by hand, compiles it and runs it.
package examples
