// Package weft is the public front door of the weft graph compiler and
// runtime: load a model file, optimize it, schedule it onto the available
// devices and run it.
//
//	m, err := weft.Open("model.onnx", weft.DefaultOptions())
//	if err != nil { ... }
//	defer m.Close()
//	outs, err := m.Run(ctx, map[string]*ir.Tensor{"x": x})
//
// The stages are separate packages (frontend/onnx → passes → scheduler →
// runtime, with backends as plugins); this package only wires them together.
// It enables the CPU backend by importing it.
package weft
