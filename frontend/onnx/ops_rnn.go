package onnx

// Recurrent layers import 1:1; their optional trailing outputs (Y_h, Y_c)
// are dropped when unnamed.

func init() {
	registerSame(1, "RNN", "GRU", "LSTM")
}
