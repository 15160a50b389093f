// Package bench holds weft's benchmark harness: Go benchmarks that measure
// the public API (weft.New, Model.Run) on the example models. It uses the
// public API only; comparisons with other runtimes will live here too.
package bench
