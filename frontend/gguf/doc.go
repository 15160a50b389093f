// Package gguf reads and writes GGUF files, the single-file model format of
// ggml and llama.cpp: a header, typed key-value metadata, a table of tensor
// descriptors, and the tensor data, each tensor aligned to the file's
// alignment (general.alignment, default 32).
//
// Reading. Open maps a file read-only (a plain read where mmap is not
// available) and Parse reads bytes already in memory; both accept format
// versions 2 and 3 in little-endian byte order. Every count, length and
// offset is checked against the size of the input before anything is
// allocated, tensor data ranges must be aligned, lie inside the data
// section and not overlap, so a corrupt file gives an error naming the
// problem, never a panic. File.Tensor returns an ir.Tensor whose Data is a
// slice of the mapping (zero-copy): it stays valid until Close.
//
// Shapes. GGUF (like ggml) lists a tensor's dimensions innermost first:
// ne[0] is the number of elements in a row. weft's shapes are row-major,
// outermost first, so TensorInfo.Shape is the GGUF list reversed: a GGUF
// tensor with dims [4096, 32000] is weft shape [32000, 4096]. The writer
// reverses them back.
//
// Types. ggml tensor types map to ir.DType: F32, F16, BF16, F64, I8, I16,
// I32, I64 and the block formats Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K,
// Q6_K (whose bytes are ggml's blocks unchanged). Other ggml types whose
// block layout is known (Q2_K, Q3_K, the IQ formats, ...) are parsed, sized
// and listed, with TensorInfo.Type = ir.Invalid, so that inspecting such a
// file works; File.Tensor on one of them is an ir.ErrUnsupported error.
// A type id this package does not know at all makes Parse fail.
//
// Writing. Writer produces version 3 files, deterministically: the
// metadata and tensors in the order they were added, tensor data packed in
// that order at the alignment.
//
// gguf imports ir only. It knows nothing of model architectures, graphs
// or tokenizers: those are built from File by their own packages.
package gguf
