// Package bench holds weft's benchmark harness: Go benchmarks that measure
// the public API (weft.New, Model.Run, Model.RunInto) on the example models
// and on one-MatMul graphs. It uses the public API only. The comparison with
// other runtimes (`make bench`: run.sh, ort/, numpy/, report/, cmd/benchreport)
// lives in this directory too; see README.md.
package bench
