#!/usr/bin/env bash
# bench/run.sh — what `make bench` runs: weft and its peers on the same work,
# in one script, on this machine. Writes bench/results/DATE-HOST.json, prints
# the ratio table and regenerates docs/performance.md from the newest results.
#
#   1. builds weft; writes the zoo models (random weights) into $BENCH_CACHE
#   2. per model and thread count: `weft bench --json`, then the ONNX Runtime
#      peer (bench/ort/bench.mjs) on the same file
#   3. sgemm: weft's kernels (bench/gemm BenchmarkSgemm) and the whole
#      weft.New path (bench BenchmarkMatMulGraph) vs numpy/OpenBLAS
#      (bench/numpy/sgemm.py) at each OpenBLAS kernel setting worth trying
#   4. quantized GEMV GB/s vs a read-bandwidth measurement (bench/gemm)
#   5. bench/cmd/benchreport: assemble the results file, print the table,
#      write docs/performance.md
#
# A step that fails is recorded as failed in the results (with its stderr)
# and the run goes on. Knobs (environment): GO, BENCH_THREADS ("1 2"),
# BENCH_RUNS (10), BENCH_WARMUP (2), BENCH_MODELS, BENCH_CACHE, BENCH_TIME
# (go -benchtime, 1s), BENCH_PYTHON (/usr/bin/python3), BENCH_KEEP_RAW=1.
set -uo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
THREADS=${BENCH_THREADS:-1 2}
RUNS=${BENCH_RUNS:-10}
WARMUP=${BENCH_WARMUP:-2}
# NAME[:zoo flags, comma-separated]
MODELS=${BENCH_MODELS:-resnet18 resnet50 bert-4l:--seq,128 gpt-6l}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weft-bench}
BENCHTIME=${BENCH_TIME:-1s}
PY=${BENCH_PYTHON:-/usr/bin/python3}
STEP_TIMEOUT=${BENCH_STEP_TIMEOUT:-600}

RAW=$(mktemp -d "${TMPDIR:-/tmp}/weft-bench.XXXXXX")
if [ -z "${BENCH_KEEP_RAW:-}" ]; then trap 'rm -rf "$RAW"' EXIT; else echo "raw results in $RAW"; fi
mkdir -p "$RAW/models" "$CACHE"
cat /proc/loadavg >"$RAW/load_start.txt" 2>/dev/null || true
note() { echo "$*" >>"$RAW/notes.txt"; }
say() { printf '\n== %s\n' "$*" >&2; }
start=$(date +%s)

say "build weft"
$GO build -o "$RAW/weft" ./cmd/weft || { echo "bench: cannot build weft" >&2; exit 1; }
{
	echo "weft_commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"
	echo "node=$(node --version 2>/dev/null)"
	echo "python=$($PY -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)"
} >>"$RAW/versions.txt"

# The ONNX Runtime peer: onnxruntime-node ships its CPU library in the npm
# package, so no download script is needed (and none is run).
ORT=ok
if ! command -v node >/dev/null; then
	ORT="node is not installed"
elif [ ! -d bench/ort/node_modules/onnxruntime-node ]; then
	say "install onnxruntime-node (bench/ort/package-lock.json)"
	(cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund) >&2 ||
		ORT="npm ci in bench/ort failed (offline?)"
fi
[ "$ORT" = ok ] || note "ONNX Runtime peer not run: $ORT"

for spec in $MODELS; do
	name=${spec%%:*}
	flags=""
	[ "$spec" != "$name" ] && flags=${spec#*:} && flags=${flags//,/ }
	file="$CACHE/$name.onnx"
	say "zoo $name $flags"
	# shellcheck disable=SC2086 # flags are words
	if ! "$RAW/weft" zoo "$name" $flags -o "$file" >&2 2>"$RAW/zoo.err"; then
		for t in $THREADS; do cp "$RAW/zoo.err" "$RAW/models/$name.t$t.weft.err"; done
		continue
	fi
	for t in $THREADS; do
		say "$name: weft, $t thread(s)"
		timeout "$STEP_TIMEOUT" "$RAW/weft" bench "$file" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --json \
			>"$RAW/models/$name.t$t.weft.json" 2>"$RAW/models/$name.t$t.weft.err" ||
			{ echo "exit status $?: $(cat "$RAW/models/$name.t$t.weft.err")" >"$RAW/models/$name.t$t.weft.err"; rm -f "$RAW/models/$name.t$t.weft.json"; }
		if [ "$ORT" = ok ]; then
			say "$name: ONNX Runtime, $t thread(s)"
			timeout "$STEP_TIMEOUT" node bench/ort/bench.mjs "$file" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" \
				>"$RAW/models/$name.t$t.ort.json" 2>"$RAW/models/$name.t$t.ort.err" ||
				{ echo "exit status $?: $(cat "$RAW/models/$name.t$t.ort.err")" >"$RAW/models/$name.t$t.ort.err"; rm -f "$RAW/models/$name.t$t.ort.json"; }
		fi
	done
done

say "sgemm, quantized GEMV and read bandwidth: weft kernels (bench/gemm)"
if [ -d bench/gemm ]; then
	timeout "$STEP_TIMEOUT" $GO test -run '^$' -bench 'Sgemm|ReadBandwidth|QGemv' -benchtime "$BENCHTIME" ./bench/gemm/ \
		>"$RAW/gemm.txt" 2>"$RAW/gemm.err" || { cat "$RAW/gemm.txt" >>"$RAW/gemm.err"; rm -f "$RAW/gemm.txt"; }
else
	echo "bench/gemm is missing" >"$RAW/gemm.err"
fi

say "sgemm through weft.New (BenchmarkMatMulGraph)"
timeout "$STEP_TIMEOUT" $GO test -run '^$' -bench MatMulGraph -benchtime "$BENCHTIME" ./bench/ \
	>"$RAW/matmul.txt" 2>"$RAW/matmul.err" || { cat "$RAW/matmul.txt" >>"$RAW/matmul.err"; rm -f "$RAW/matmul.txt"; }

say "sgemm: numpy/OpenBLAS"
if $PY -c 'import numpy' 2>/dev/null; then
	# The environment's setting (this machine class exports
	# OPENBLAS_CORETYPE=Haswell), and on an AVX-512 machine the SkylakeX
	# kernel with OpenBLAS's own cache sizes: the peer at its best.
	settings="env"
	grep -qw avx512f /proc/cpuinfo 2>/dev/null && settings="$settings SkylakeX"
	for s in $settings; do
		for t in $THREADS; do
			if [ "$s" = env ]; then
				label=${OPENBLAS_CORETYPE:-auto}
				OPENBLAS_NUM_THREADS=$t timeout "$STEP_TIMEOUT" $PY bench/numpy/sgemm.py >"$RAW/numpy.$label.t$t.json" 2>>"$RAW/numpy.err"
			else
				label=$s
				env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=$s OPENBLAS_NUM_THREADS=$t timeout "$STEP_TIMEOUT" $PY bench/numpy/sgemm.py \
					>"$RAW/numpy.$label.t$t.json" 2>>"$RAW/numpy.err"
			fi || { note "numpy sgemm ($label, $t threads) failed: $(tail -c 300 "$RAW/numpy.err" | tr '\n' ' ')"; rm -f "$RAW/numpy.$label.t$t.json"; }
		done
	done
	[ -n "${OPENBLAS_L2_SIZE:-}" ] && note "The environment sets OPENBLAS_L2_SIZE=$OPENBLAS_L2_SIZE; the SkylakeX runs unset it."
else
	note "numpy/OpenBLAS peer not run: $PY has no numpy (apt-get install python3-numpy)"
fi

elapsed=$(($(date +%s) - start))
note "make bench took ${elapsed}s; models ran $RUNS timed runs after $WARMUP warm-up runs and one first run, threads: $THREADS."
say "results"
$GO run ./bench/cmd/benchreport assemble -dir "$RAW" -out bench/results || exit 1
$GO run ./bench/cmd/benchreport markdown -results bench/results -o docs/performance.md
