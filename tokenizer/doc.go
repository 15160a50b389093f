// Package tokenizer turns text into token ids and back for the tokenizers
// GGUF models carry in their metadata: SentencePiece-style BPE ("llama":
// score-ordered merges over characters, ▁ for spaces, <0xXX> byte
// fallback), byte-level BPE ("gpt2": GPT-2's byte-to-character map, ranked
// merges, and the per-model pre-tokenizer named by tokenizer.ggml.pre) and
// WordPiece ("bert"). It also renders chat conversations with the template
// family the metadata names (ChatML, Llama 2, Llama 3).
//
// The behaviour follows llama.cpp's tokenizers, which the GGUF test vectors
// in ../shared/tokenizer-tests were produced with.
//
// The package owns the Vocab description (plain data built from GGUF
// metadata keys) and a minimal GGUF metadata reader (LoadGGUFVocab) so that
// vocabulary-only files can be used directly. It must not know about graphs,
// tensors or devices, and imports the standard library only; frontend/gguf
// and runtime/llm build on it, never the other way round.
package tokenizer
