// Command mlp builds a small two-layer perceptron with ir.Builder, compiles
// it with weft and runs it, printing the class probabilities and how long
// each step took.
//
//	go run ./examples/mlp [-O 2] [-n 100]
package main
