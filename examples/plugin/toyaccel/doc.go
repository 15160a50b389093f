// Package toyaccel is a complete weft backend in one package, the worked
// example of docs/backends.md: a "toy" accelerator (device "toy:0") that
// runs Relu, Add and Mul on float32 tensors in plain Go. It registers itself
// in init(), so a program enables it by importing it:
//
//	import _ "github.com/weftrt/weft/examples/plugin/toyaccel"
//
// It shows the parts every backend has — Supports answering with reasons,
// host-visible buffers, Compile returning an Executable, spans reported to a
// tracer — and leaves out the optional ones (PlanCompiler, stateful
// executables, Transfer), which docs/backends.md describes.
//
// toyaccel knows only the plugin API (package backends) and the IR; it must
// not know the scheduler, the runtime or any other backend.
package toyaccel
