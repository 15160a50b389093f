// Package passes owns weft's graph-to-graph compilation pipeline: the pass
// manager (Pipeline, Run, Context, Report) and the passes themselves, one file
// per pass: shape and dtype inference (infer*.go), identity elimination
// (identity.go), dead-code elimination (dce.go), the lowering of core ops
// that have a simpler equivalent (lower.go), constant folding with the
// evaluator in Options.Eval (fold.go), algebraic simplification
// (simplify.go), common-subexpression elimination (cse.go), recognition of
// LayerNorm/RMSNorm/GELU/SiLU/attention exports (patterns*.go), folding of
// per-channel affine ops into Conv (convbn.go), fusion into FusedMatMul,
// FusedConv and Fused elementwise chains (fuse*.go), horizontal fusion of
// MatMuls that share their input (hfuse.go) and weight quantization
// (quantize.go). Shared analyses and rewriting helpers are in analysis.go.
//
// The pipeline is one flat, ordered list of named passes, in the style of the
// Go compiler's SSA backend: each -O level runs the passes whose Level it
// reaches plus every Required pass, in list order. Ordering constraints
// between passes are checked by the tests. A pass reports what it changed
// (Change); Run collects those into a Report, can verify the graph between
// passes (Options.Verify) and print it after a named pass (Options.PrintAfter).
// Passes that need an analysis (use lists, ...) ask the Context for it; the
// Context drops every cached analysis after a pass that changed the graph.
//
// Other packages may call single passes directly: InferShapes (also the
// basis of every later pass), DCE, EliminateIdentity and Lower. InferredOps
// lists the ops shape inference knows; the outputs of any other op keep the
// type the model declared, or stay unknown.
//
// Shape inference never guesses: an output it cannot infer keeps whatever the
// model declared (or stays unknown), and a declared shape that contradicts
// the inferred one is an error naming the node.
//
// passes works on ir alone: it must not know devices, backends, plans or
// file formats (frontends), and imports only ir and the standard library.
package passes
