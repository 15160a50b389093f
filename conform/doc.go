// Package conform runs ONNX backend-test directories against weft: the
// conformance runner behind `weft conform`.
//
// A test is a directory holding model.onnx and test_data_set_N/ directories
// of serialized TensorProtos (input_K.pb, output_K.pb), the layout of the
// ONNX backend test suite. For each test the runner opens the model with
// weft.Open, binds input_K to the K-th model input, runs it and compares
// output_K with the K-th model output (see Compare for the tolerances).
//
// Every test ends as PASS, FAIL or SKIP. SKIP is reserved for errors that
// wrap ir.ErrUnsupported — weft's honest "not supported" — so that a SKIP
// never hides a wrong answer; any other error, a mismatch, a panic or a
// timeout is a FAIL. A panic is caught only on the goroutine that runs the
// test; one raised on a goroutine that weft itself starts still ends the
// process. A timed-out test cannot be stopped: its goroutine runs on in the
// background while the runner moves on.
//
// The ONNX test data stores bfloat16 tensors as their uint16 bit patterns
// (NumPy has no bfloat16); the runner reinterprets such data as bfloat16
// wherever the model's side is bfloat16.
//
// The package owns discovery, comparison, the worker pool and the report
// formats (text lines, JSON, Markdown, baseline checks). It knows weft only
// through the public API (weft.Open, Model.Run) and frontend/onnx's test-data
// reader; it knows nothing of passes, schedulers or backends.
package conform
