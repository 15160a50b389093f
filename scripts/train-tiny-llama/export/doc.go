// Command export writes the tiny llama model that train.py trained as a
// GGUF file, with weft's own GGUF writer (frontend/gguf).
//
// It reads DIR/model.json (the hyperparameters and the tokenizer: tokens,
// scores, token types) and DIR/weights/NAME.npy (one float32 array per
// tensor, named and shaped as in GGUF: matrices [out, in] outer-first) and
// writes llama.cpp's metadata keys for architecture "llama" and its
// tokenizer.ggml.* keys for a SentencePiece-style vocabulary.
//
//	go run ./scripts/train-tiny-llama/export -in /tmp/tinyllama -o examples/tinyllama/tinyllama.gguf
package main
