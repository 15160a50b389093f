// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0
// and 3.0): the tensor exchange format of `weft run`.
//
// Only C-order, little-endian arrays of the dtypes weft has are accepted:
// <f2 <f4 <f8, |i1 <i2 <i4 <i8, |u1 <u2 <u4 <u8 and |b1. Fortran-order and
// big-endian files, string and structured dtypes are refused with an error
// that says so. bfloat16 has no NumPy dtype: Write stores it as <f4 (exact)
// and Read never produces it.
//
// The package knows ir.Tensor and nothing else of weft; it never panics on
// bad input (FuzzRead checks that).
package npy
