// Package model builds the example MLP: x[batch,16] → MatMul+Add → Relu →
// MatMul+Add → Softmax → probs[batch,10], with fixed-seed weights. It is
// shared by examples/mlp and `weft run --example mlp` (the `make demo` job),
// so the two always run the same model.
package model
