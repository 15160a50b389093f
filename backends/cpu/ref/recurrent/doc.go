// Package recurrent holds the reference kernels for ONNX recurrent layers:
// RNN, GRU and LSTM, in all directions, with the activation lists, clip,
// sequence_lens and both layouts the operators define.
//
// Every gate equation is computed in float64 and rounded to the output
// dtype once, when stored. This package must not know about the scheduler,
// the runtime or any frontend.
package recurrent
