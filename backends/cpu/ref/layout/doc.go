// Package layout holds the reference kernels for data-movement and
// tensor-layout ops: reshaping (Reshape, Squeeze, Unsqueeze, Flatten,
// Transpose, DepthToSpace, SpaceToDepth), joining and cutting (Concat, Split,
// Slice, Pad, CenterCropPad, Tile, Expand, ReverseSequence), indexing
// (Gather*, Scatter*, Compress, NonZero), generators (Shape, Size,
// ConstantOfShape, Range, OneHot, EyeLike, Trilu), and the ordering ops
// TopK, Unique and CumSum.
//
// Pure data movement copies raw element bytes (DType.Size() per element), so
// those kernels are exact and dtype-generic; the few ops that compute
// (CumSum, Range, scatter reductions, comparisons in TopK and Unique) go
// through ir.Tensor's Float64/Int64/Uint64 accessors by dtype class.
// Index inputs may be any integer dtype; an out-of-range index is an error.
//
// Every kernel registers itself with ref.Register in init(). This package
// knows only ir and the ref registry: nothing of the scheduler, runtime,
// frontends or other kernel families.
package layout
