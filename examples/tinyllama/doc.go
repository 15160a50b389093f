// Package tinyllama holds tinyllama.gguf, a 2.4M-parameter llama model that
// weft trained itself (scripts/train-tiny-llama) on the Debian fortune
// cookie corpus and wrote with its own GGUF writer, so that `make demo` can
// generate text without downloading anything:
//
//	weft generate examples/tinyllama/tinyllama.gguf -p "The meaning of life is" -n 64
//
// The package has no code, only tests that hold the file to what the
// training script produced: its metadata and tensor table, the tokenizer's
// ids for a few lines (tokenize.json, written by the script's Python
// tokenizer) and the first 32 greedy tokens after a prompt
// (greedy.json, computed by PyTorch in float32).
package tinyllama
