// Package kvcache holds the reference kernels of the KV-cache ops of
// decoder graphs (see ir/ops.go): KVCacheUpdate, which writes new keys or
// values into an f32, f16 or Q8_0 cache in place, and KVAttention, which
// attends over such a cache up to each query's position; and QGather, the
// token-embedding lookup of a table kept in its stored (block-quantized,
// f16, bf16) format. They are the
// oracle for the CPU backend's fast kernels and for frontend/llama's
// graphs.
//
// Scores and the softmax are computed in float64 from the cache's stored
// values (f16 and Q8_0 decoded exactly to float32 first). Bad positions,
// shapes and dtypes are plain errors; cache dtypes other than f32, f16 and
// Q8_0 are reported with ref.Unsupported.
//
// The package registers its kernels with ref.Register in init(). It knows
// ir, ir/quant and ref only; it must not know about the scheduler, the
// runtime, a frontend or any other backend.
package kvcache
