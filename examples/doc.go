// Package examples holds runnable programs that use weft through its public
// API only (package weft, ir.Builder and ir.Tensor): examples/mlp builds a
// small model by hand, compiles it and runs it; examples/plugin is a backend
// written as one package (examples/plugin/toyaccel) and a program using it
// (see docs/backends.md); examples/tinyllama holds the small LLM that
// `make demo` generates text with (trained by scripts/train-tiny-llama) and
// tests that check it token for token against PyTorch.
package examples
