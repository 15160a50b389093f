package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/conform/onnxtest"
)

func TestBenchJSON(t *testing.T) {
	model := writeModel(t, addModel(onnxtest.Dim{Sym: "batch"}, onnxtest.Dim{Size: 3}))
	procs := runtime.GOMAXPROCS(0)
	code, stdout, stderr := cli(t, "bench", model, "--threads", "1", "--runs", "5", "--warmup", "1", "--dim", "batch=4", "-O1", "--json")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, procs, runtime.GOMAXPROCS(0), "GOMAXPROCS is restored")

	// The contract shared with the peer scripts: these keys, these types.
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw), stdout)
	for _, k := range []string{"model", "threads", "runs", "latency_ms_median", "latency_ms_min", "latency_ms_max", "peak_rss_bytes",
		"compile_ms", "opt_level", "weft_version"} {
		require.Contains(t, raw, k)
	}
	var r benchResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, model, r.Model)
	require.Equal(t, 1, r.Threads)
	require.Equal(t, 5, r.Runs)
	require.Equal(t, 1, r.Warmup)
	require.Equal(t, 1, r.OptLevel)
	require.Equal(t, "weft", r.Runtime)
	require.True(t, strings.HasPrefix(r.WeftVersion, "0."), r.WeftVersion)
	require.Greater(t, r.LatencyMsMin, 0.0)
	require.LessOrEqual(t, r.LatencyMsMin, r.LatencyMsMedian)
	require.LessOrEqual(t, r.LatencyMsMedian, r.LatencyMsP90)
	require.LessOrEqual(t, r.LatencyMsP90, r.LatencyMsMax)
	require.Less(t, r.LatencyMsMax, 10_000.0, "an Add of 12 floats")
	require.GreaterOrEqual(t, r.CompileMs, 0.0)
	require.Equal(t, map[string]string{"a": "f32[4,3]", "b": "f32[4,3]"}, r.Inputs)
	require.Equal(t, map[string]string{"y": "f32[4,3]"}, r.Outputs)
	if runtime.GOOS == "linux" {
		require.NotNil(t, r.PeakRSSBytes)
		// A Go process holding a compiled model: more than 1 MB, less than 64 GB.
		require.Greater(t, *r.PeakRSSBytes, int64(1<<20))
		require.Less(t, *r.PeakRSSBytes, int64(64<<30))
	}
}

func TestBenchText(t *testing.T) {
	model := writeModel(t, addModel())
	code, stdout, stderr := cli(t, "bench", model, "--runs", "2", "--threads", "2")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{model + " (-O2, 1 nodes)", "inputs:   a f32[2,3], b f32[2,3]", "outputs:  y f32[2,3]",
		"threads:  2, set via weft.Options.Threads", "over 2 runs", "peak RSS: "} {
		require.Contains(t, stdout, want)
	}
}

func TestBenchErrors(t *testing.T) {
	model := writeModel(t, addModel(onnxtest.Dim{Sym: "batch"}, onnxtest.Dim{Size: 3}))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "exactly one MODEL"},
		{[]string{"bench", model, "--runs", "0"}, "--runs 0: want at least 1"},
		{[]string{"bench", model, "--warmup", "-1"}, "--warmup -1"},
		{[]string{"bench", model, "--threads", "-2"}, "--threads -2"},
		{[]string{"bench", model}, `symbolic dimension "batch": pass --dim batch=N`},
		{[]string{"bench", model, "--dim", "batch"}, "want SYM=N"},
		{[]string{"bench", "/nonexistent/model.onnx"}, "/nonexistent/model.onnx"},
		{[]string{"bench", "model.txt"}, "unsupported"},
	} {
		code, _, stderr := cli(t, tc.args...)
		require.Equal(t, 1, code, strings.Join(tc.args, " "))
		require.Contains(t, stderr, tc.want, strings.Join(tc.args, " "))
	}
}

func TestLatencyStats(t *testing.T) {
	for _, tc := range []struct {
		in                  []float64
		median, p90, lo, hi float64
	}{
		{[]float64{5}, 5, 5, 5, 5},
		{[]float64{3, 1, 2}, 2, 3, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 4, 1, 4},
		// p90 by nearest rank: ceil(0.9*10) = 9th smallest.
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 5.5, 9, 1, 10},
	} {
		median, p90, lo, hi := latencyStats(tc.in)
		require.Equal(t, []float64{tc.median, tc.p90, tc.lo, tc.hi}, []float64{median, p90, lo, hi}, "%v", tc.in)
	}
}
