#!/usr/bin/env bash
# bench/run.sh — what `make bench` runs: weft and its peers on the same work,
# in one script, on this machine. Writes bench/results/DATE-HOST.json, prints
# the ratio table and regenerates docs/performance.md from the newest results.
#
#   1. builds weft; writes the zoo models (random weights) into $BENCH_CACHE
#   2. per model and thread count: `weft bench --json`, then the ONNX Runtime
#      peer (bench/ort/bench.mjs) on the same file
#   3. LLM: `weft mkllm` GGUF models (random weights, cached; q4_k_m is the
#      f16 file through `weft quantize --type q4_k_m --policy all`, the mix
#      most real-world files use) and, per model
#      and thread count, `weft bench MODEL.gguf --prefill --decode --json`
#      (prefill/decode tok/s, decode's weight GB/s against a read bandwidth
#      measured in the same process), each run followed by the llama.cpp peer
#      (bench/llamacpp/bench.mjs) on the same file; one long-context run
#      checks the peak RSS against weights + KV cache + 64 MiB
#   4. sgemm: weft's kernels (bench/gemm BenchmarkSgemm) and the whole
#      weft.New path (bench BenchmarkMatMulGraph) vs numpy/OpenBLAS
#      (bench/numpy/sgemm.py) at each OpenBLAS kernel setting worth trying
#   5. quantized GEMV GB/s vs a read-bandwidth measurement (bench/gemm)
#   6. bench/cmd/benchreport: assemble the results file, print the table,
#      write docs/performance.md
#
# A step that fails is recorded as failed in the results (with its stderr)
# and the run goes on. Knobs (environment): GO, BENCH_THREADS ("1 2"),
# BENCH_RUNS (10), BENCH_WARMUP (2), BENCH_MODELS, BENCH_CACHE, BENCH_TIME
# (go -benchtime, 1s), BENCH_PYTHON (/usr/bin/python3), BENCH_KEEP_RAW=1,
# BENCH_LLM (1; 0 skips the LLM section), BENCH_LLM_BIG=1 (also qwen2-0.5b in
# q8_0 and f16: minutes and ~1.5 GB more disk), BENCH_LLM_MODELS
# ("PRESET:TYPE ..."), BENCH_LLM_PREFILL (128), BENCH_LLM_DECODE (64),
# BENCH_LLM_REPEAT (3: runs per row, the report keeps the best),
# BENCH_LLM_CTX (2048, the memory check's cache), BENCH_LLM_MEM
# ("llama-110m:q4_0 qwen2-0.5b:q4_0"; with BENCH_LLM_BIG=1 also qwen2-0.5b in
# q8_0 and f16; empty skips the memory check), BENCH_ONLY (sections to
# run, e.g. "llm" or "models,gemm"; of models, llm, gemm, numpy; default all),
# BENCH_OUT (bench/results) and BENCH_DOC (docs/performance.md): where the
# results file and the page go (a trial run can point them elsewhere).
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
ONLY=${BENCH_ONLY:-}
OUT=${BENCH_OUT:-bench/results}
DOC=${BENCH_DOC:-docs/performance.md}
LLM=${BENCH_LLM:-1}
LLM_MODELS=${BENCH_LLM_MODELS:-llama-110m:q4_0 llama-110m:q4_k_m llama-110m:q8_0 llama-110m:f16 qwen2-0.5b:q4_0}
[ "${BENCH_LLM_BIG:-0}" = 1 ] && [ -z "${BENCH_LLM_MODELS:-}" ] && LLM_MODELS="$LLM_MODELS qwen2-0.5b:q8_0 qwen2-0.5b:f16"
LLM_PREFILL=${BENCH_LLM_PREFILL:-128}
LLM_DECODE=${BENCH_LLM_DECODE:-64}
LLM_CTX=${BENCH_LLM_CTX:-2048}
LLM_MEM_DEFAULT="llama-110m:q4_0 qwen2-0.5b:q4_0"
[ "${BENCH_LLM_BIG:-0}" = 1 ] && LLM_MEM_DEFAULT="$LLM_MEM_DEFAULT qwen2-0.5b:q8_0 qwen2-0.5b:f16"
LLM_MEM=${BENCH_LLM_MEM-$LLM_MEM_DEFAULT}
LLM_REPEAT=${BENCH_LLM_REPEAT:-3}
LLM_SEED=1

# want SECTION: whether BENCH_ONLY (empty: everything) names it.
want() { [ -z "$ONLY" ] || [[ " ${ONLY//,/ } " == *" $1 "* ]]; }

RAW=$(mktemp -d "${TMPDIR:-/tmp}/weft-bench.XXXXXX")
if [ -z "${BENCH_KEEP_RAW:-}" ]; then trap 'rm -rf "$RAW"' EXIT; else echo "raw results in $RAW"; fi
mkdir -p "$RAW/models" "$CACHE"
cat /proc/loadavg >"$RAW/load_start.txt" 2>/dev/null || true
note() { echo "$*" >>"$RAW/notes.txt"; }
say() { printf '\n== %s\n' "$*" >&2; }
start=$(date +%s)

[ -n "$ONLY" ] && note "Only these sections ran (BENCH_ONLY): $ONLY."
say "build weft"
# `make build` (the Makefile's one rule: without the Vulkan headers the CLI
# builds without cgo, and every figure here is the CPU backend's).
make --no-print-directory build GO="$GO" BIN="$RAW" >&2 || { echo "bench: cannot build weft" >&2; exit 1; }
{
	echo "weft_commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"
	echo "node=$(node --version 2>/dev/null)"
	echo "python=$($PY -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)"
} >>"$RAW/versions.txt"

# The ONNX Runtime peer: onnxruntime-node ships its CPU library in the npm
# package, so no download script is needed (and none is run).
ORT=ok
if ! want models; then
	ORT="skipped"
elif ! command -v node >/dev/null; then
	ORT="node is not installed"
elif [ ! -d bench/ort/node_modules/onnxruntime-node ]; then
	say "install onnxruntime-node (bench/ort/package-lock.json)"
	(cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund) >&2 ||
		ORT="npm ci in bench/ort failed (offline?)"
fi
[ "$ORT" = ok ] || [ "$ORT" = skipped ] || note "ONNX Runtime peer not run: $ORT"

# The llama.cpp peer of the LLM section: node-llama-cpp with its prebuilt
# linux-x64 binaries (an npm package of their own: no build, no download
# script; the other platforms' and the GPU builds are optional dependencies
# left out). Not `npm ci`: it wants every optional package of the lock file
# listed in it, and some (mac, win, riscv64) are not on every registry
# mirror; `npm install --no-save` follows the lock file all the same.
LCPP=ok
if [ "$LLM" = 0 ] || ! want llm; then
	LCPP="skipped"
elif ! command -v node >/dev/null; then
	LCPP="node is not installed"
elif [ "$(uname -sm)" != "Linux x86_64" ]; then
	LCPP="its prebuilt binaries are linux-x64 only (this is $(uname -sm))"
elif [ ! -d bench/llamacpp/node_modules/@node-llama-cpp/linux-x64 ]; then
	say "install node-llama-cpp (bench/llamacpp/package-lock.json)"
	(cd bench/llamacpp && npm install --ignore-scripts --omit=optional --no-save --no-audit --no-fund) >&2 ||
		LCPP="npm install in bench/llamacpp failed (offline?)"
fi
[ "$LCPP" = ok ] || [ "$LCPP" = skipped ] || note "llama.cpp peer not run: $LCPP"

want models || MODELS=""
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

# LLM: GGUF files from `weft mkllm` (random weights, llama.cpp's layout),
# cached by preset, type, seed and context length; written under a temporary
# name first so an interrupted run leaves no truncated file behind.
if [ "$LLM" != 0 ] && want llm; then
	mkdir -p "$RAW/llm" "$CACHE/llm"
	llm_start=$(date +%s)
	last_t=${THREADS##* }
	# llm_model PRESET TYPE: the cached file's path on stdout, or the error
	# in $RAW/mkllm.err and a failure status.
	llm_model() {
		local f="$CACHE/llm/$1.$2.s$LLM_SEED.c$LLM_CTX.gguf" src
		if [ ! -s "$f" ] && [ "$2" = q4_k_m ]; then
			src=$(llm_model "$1" f16) || return 1
			say "quantize $1 f16 to q4_k_m"
			"$RAW/weft" quantize "$src" "$f.part.gguf" --type q4_k_m --policy all \
				>/dev/null 2>"$RAW/mkllm.err" && mv "$f.part.gguf" "$f" || { rm -f "$f.part.gguf"; return 1; }
		elif [ ! -s "$f" ]; then
			say "mkllm $1 $2"
			"$RAW/weft" mkllm --preset "$1" --type "$2" --seed "$LLM_SEED" --ctx "$LLM_CTX" -o "$f.part.gguf" \
				>/dev/null 2>"$RAW/mkllm.err" && mv "$f.part.gguf" "$f" || { rm -f "$f.part.gguf"; return 1; }
		fi
		echo "$f"
	}
	# llm_bench BASE FILE ARGS...: weft bench --json into $RAW/llm/BASE.json.
	llm_bench() {
		local base=$1 file=$2
		shift 2
		timeout "$STEP_TIMEOUT" "$RAW/weft" bench "$file" --json "$@" >"$RAW/llm/$base.json" 2>"$RAW/llm/$base.err" ||
			{ echo "exit status $?: $(cat "$RAW/llm/$base.err")" >"$RAW/llm/$base.err"; rm -f "$RAW/llm/$base.json"; }
	}
	# llm_peer BASE FILE ARGS...: the llama.cpp peer into $RAW/llamacpp/BASE.json.
	llm_peer() {
		local base=$1 file=$2
		shift 2
		timeout "$STEP_TIMEOUT" node bench/llamacpp/bench.mjs "$file" "$@" >"$RAW/llamacpp/$base.json" 2>"$RAW/llamacpp/$base.err" ||
			{ echo "exit status $?: $(tail -c 2000 "$RAW/llamacpp/$base.err")" >"$RAW/llamacpp/$base.err"; rm -f "$RAW/llamacpp/$base.json"; }
	}
	mkdir -p "$RAW/llamacpp"
	for spec in $LLM_MODELS; do
		preset=${spec%%:*} typ=${spec#*:}
		if ! file=$(llm_model "$preset" "$typ"); then
			for t in $THREADS; do cp "$RAW/mkllm.err" "$RAW/llm/$preset.$typ.t$t.err"; done
			continue
		fi
		for t in $THREADS; do
			say "llm $preset $typ: prefill $LLM_PREFILL, decode $LLM_DECODE, $t thread(s), $LLM_REPEAT run(s)"
			# weft and llama.cpp turn about, so that both see the same
			# moments of a shared host.
			for r in $(seq "$LLM_REPEAT"); do
				llm_bench "$preset.$typ.t$t.r$r" "$file" --prefill "$LLM_PREFILL" --decode "$LLM_DECODE" --threads "$t"
				[ "$LCPP" = ok ] && llm_peer "$preset.$typ.t$t.r$r" "$file" --prefill "$LLM_PREFILL" --decode "$LLM_DECODE" --threads "$t" --runs 2
			done
		done
	done
	for spec in $LLM_MEM; do
		preset=${spec%%:*} typ=${spec#*:}
		base="$preset.$typ.ctx$LLM_CTX.t$last_t"
		if ! file=$(llm_model "$preset" "$typ"); then
			cp "$RAW/mkllm.err" "$RAW/llm/$base.err"
			continue
		fi
		say "llm $preset $typ: peak RSS at a $LLM_CTX-token context, $last_t thread(s)"
		llm_bench "$base" "$file" --prefill $((LLM_CTX - LLM_DECODE - 64)) --decode "$LLM_DECODE" --ctx "$LLM_CTX" --threads "$last_t"
	done
	note "The LLM section took $(($(date +%s) - llm_start))s (model files cached in $CACHE/llm; best of $LLM_REPEAT runs per row, threads: $THREADS)."
fi

if want gemm; then
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
else
	echo "skipped (BENCH_ONLY=$ONLY)" | tee "$RAW/gemm.err" >"$RAW/matmul.err"
fi

if want numpy; then
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
		note "numpy/OpenBLAS peer not run: $PY has no numpy (apt-get install python3-numpy libopenblas0-pthread)"
	fi
fi

elapsed=$(($(date +%s) - start))
note "make bench took ${elapsed}s; models ran $RUNS timed runs after $WARMUP warm-up runs and one first run, threads: $THREADS."
say "results"
$GO run ./bench/cmd/benchreport assemble -dir "$RAW" -out "$OUT" || exit 1
$GO run ./bench/cmd/benchreport markdown -results "$OUT" -o "$DOC"
