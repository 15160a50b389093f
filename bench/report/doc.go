// Package report turns the raw output of `make bench` (bench/run.sh) into
// a results file (bench/results/*.json) and renders results as a ratio
// table and as docs/performance.md. It owns the results format (Results,
// Schema); it knows the file layout run.sh writes and the output formats
// of the benchmarks it runs (`weft bench --json` on ONNX models and on
// GGUF language models, bench/ort/bench.mjs,
// bench/numpy/sgemm.py, `go test -bench`), and nothing of weft's
// internals: it never measures anything itself.
package report
