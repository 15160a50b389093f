// Package fused holds the reference kernels of weft's own fused ops (see
// ir/ops.go): FusedMatMul, FusedConv, RMSNormalization, SiLU, Attention and
// Fused. Each kernel is, by definition, exactly the computation of the ops
// it replaces, so it is the oracle for the fused fast kernels and for the
// fusion passes (a fused graph must compute what the unfused one did).
//
// Conventions. Float dtypes (f32, f64, f16, bf16) are computed in float64
// and rounded once, on store, to the output dtype: a fused kernel does not
// round its intermediates the way the chain of separate ops does, so it
// equals that chain evaluated in float64 and rounded at the end.
// FusedMatMul and FusedConv call the registered MatMul and Conv kernels
// (on float64 copies of their inputs) rather than restating them, so there
// is one matmul and one convolution oracle; Attention is written out
// directly, with a typed float32 path for reading its inputs, because it
// runs on transformer-sized graphs. Fused runs its body subgraph with
// ref.RunGraph: that is its meaning.
//
// Unknown activation names, and non-float dtypes, are reported with
// ref.Unsupported; inconsistent shapes, ranks and dtypes are plain errors.
//
// The package registers its kernels with ref.Register in init(). It knows
// ir and ref only: the kernels of other families are reached through the
// registry (so backends/cpu, which imports every family, makes them
// available), never imported; it must not know about the scheduler, the
// runtime, a frontend or any other backend.
package fused
