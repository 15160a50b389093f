# weft — GNU make entry points. `make demo` and `make test` are the quick start.

GO        ?= go
BIN       ?= bin
ONNX_DATA ?= /usr/share/libonnx-testdata/data
SUITES    := $(addprefix $(ONNX_DATA)/,node pytorch-converted pytorch-operator simple)
BASELINE  := conformance/baseline.json
FUZZTIME  ?= 20s
# Fuzz targets run by `make test`, as package:FuzzName.
FUZZ_TARGETS := ./npy/:FuzzRead ./frontend/onnx/:FuzzParse ./frontend/onnx/:FuzzReadTensor ./plan/:FuzzDecode ./ir/quant/:FuzzRoundTrip ./ir/quant/:FuzzKQuantize ./frontend/gguf/:FuzzParse ./tokenizer/:FuzzEncode ./tokenizer/:FuzzReadGGUFVocab
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test testdeps fmt-check vet crossbuild unit arm64test conformance fuzz conformance-doc bench benchdeps build

## demo: build the CLI, then compile and run the bundled example model (an MLP built with ir.Builder) and generate text with the bundled tiny llama (examples/tinyllama)
demo: build
	$(BIN)/weft inspect --example mlp
	$(BIN)/weft run --example mlp -O2
	$(BIN)/weft generate examples/tinyllama/tinyllama.gguf -p "Q: How many programmers does it take" -n 64

# The Vulkan backend is cgo against the Vulkan headers (Debian libvulkan-dev).
# Without them the CLI builds without cgo, CPU only, and says so: the demo
# needs no GPU package.
VULKAN_H := $(shell printf '\043include <vulkan/vulkan.h>\n' | $${CC:-cc} -E -x c - >/dev/null 2>&1 && echo yes)

build:
ifeq ($(VULKAN_H),yes)
	$(GO) build -o $(BIN)/weft ./cmd/weft
else
	@echo "build: no Vulkan headers (Debian libvulkan-dev): building the CPU-only CLI (CGO_ENABLED=0)"
	CGO_ENABLED=0 $(GO) build -o $(BIN)/weft ./cmd/weft
endif

## test: everything CI runs — formatting, vet, unit tests, ONNX conformance against the baseline, fuzzing
test: testdeps fmt-check vet crossbuild unit arm64test conformance fuzz

# The ONNX backend test data and the Vulkan loader, headers, lavapipe and
# glslc, and chromium for the headless plan-page test (Debian packages),
# installed only when missing.
testdeps:
	@dpkg -s libonnx-testdata >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y libonnx-testdata)
	@dpkg -s mesa-vulkan-drivers libvulkan1 libvulkan-dev glslc >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y mesa-vulkan-drivers libvulkan1 libvulkan-dev glslc)
	@dpkg -s chromium >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y chromium)

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The CPU backend and the IR run on arm64 under qemu-user. The qemu CPU
# model decides which NEON kernels run (each level below the best is also
# forced with SetISA): cortex-a53 has plain NEON, neoverse-n1 adds SDOT
# (dotprod), max has everything. WEFT_WANT_ISA makes the kernel tests fail
# if detection finds another level, so no path is skipped silently. The
# kernels run once per model; the IR and the whole CPU backend (kernels
# included) once more with -cpu max, where the backend's float-kernel tests
# run at generic and NEON only (forEachFloatISA: dotprod and i8mm add
# integer dot products, which its quantized tests cover at every level).
# Emulated, the backend's tests take 14 minutes on a 2-core Zen 3 guest
# without that, so the run gets 25 minutes instead of go test's 10.
arm64test:
	@dpkg -s qemu-user >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y qemu-user)
	WEFT_WANT_ISA=neon CGO_ENABLED=0 GOARCH=arm64 $(GO) test -exec 'qemu-aarch64 -cpu cortex-a53' ./backends/cpu/kernels/...
	WEFT_WANT_ISA=dotprod CGO_ENABLED=0 GOARCH=arm64 $(GO) test -exec 'qemu-aarch64 -cpu neoverse-n1' ./backends/cpu/kernels/...
	WEFT_WANT_ISA=i8mm CGO_ENABLED=0 GOARCH=arm64 $(GO) test -timeout 25m -exec 'qemu-aarch64 -cpu max' ./ir/... ./backends/cpu/...

# The core builds without cgo and cross-compiles for phones (arm64).
crossbuild:
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build ./...

# With lavapipe (Mesa's CPU Vulkan driver) installed, the Vulkan tests must not skip.
# The Vulkan binding is cgo: its tests also run under the race detector with
# cgocheck2 (full checking of Go pointers passed to C). The CPU backend runs
# once more as on an AVX2-only machine (its allocation checks included).
unit:
	if dpkg -s mesa-vulkan-drivers >/dev/null 2>&1; then export WEFT_REQUIRE_VULKAN=1; fi; $(GO) test ./...
	if dpkg -s mesa-vulkan-drivers >/dev/null 2>&1; then export WEFT_REQUIRE_VULKAN=1; fi; GOEXPERIMENT=cgocheck2 $(GO) test -race ./backends/vulkan/
	GODEBUG=cpu.avx512f=off $(GO) test ./backends/cpu/

conformance: testdeps
	$(GO) run ./cmd/weft conform --baseline $(BASELINE) $(SUITES)
	$(GO) run ./cmd/weft conform --target vulkan --baseline $(BASELINE) $(SUITES)

# A failing fuzz run counts only if it wrote a crasher into the corpus: Go
# 1.26's fuzz coordinator can report a bare "context deadline exceeded" when
# -fuzztime expires mid-execution (go.dev/issue/75804, fixed in Go 1.27).
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; corpus=$$pkg/testdata/fuzz/$$name; \
		before=$$(ls $$corpus 2>/dev/null | wc -l); \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then \
			tail -n 2 $$log; \
		else \
			cat $$log; after=$$(ls $$corpus 2>/dev/null | wc -l); \
			if [ "$$after" -eq "$$before" ] && grep -q 'context deadline exceeded' $$log; then \
				echo "note: fuzz deadline race (go.dev/issue/75804), no crasher written: not a failure"; \
			else exit 1; fi; \
		fi; \
	done

## conformance-doc: regenerate docs/conformance.md (exit status 3 = some tests fail, which the page records)
conformance-doc: build testdeps
	@$(BIN)/weft conform --markdown docs/conformance.md $(SUITES) >/dev/null; rc=$$?; \
	if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; echo "wrote docs/conformance.md"

## bench: weft vs its peers (ONNX Runtime, llama.cpp, numpy/OpenBLAS) on the same work, in one script: prints
## the ratios, saves bench/results/DATE-HOST.json, regenerates docs/performance.md (a few minutes)
BENCH_THREADS ?= 1 2
BENCH_RUNS    ?= 10
BENCH_WARMUP  ?= 2
# The OpenBLAS peer is Debian's numpy (the ONNX Runtime and llama.cpp ones
# bench/run.sh installs from npm), installed only when missing.
benchdeps:
	@dpkg -s python3-numpy libopenblas0-pthread >/dev/null 2>&1 || ($(SUDO) apt-get update && $(SUDO) apt-get install -y python3-numpy libopenblas0-pthread)
bench: benchdeps
	GO="$(GO)" BENCH_THREADS="$(BENCH_THREADS)" BENCH_RUNS="$(BENCH_RUNS)" BENCH_WARMUP="$(BENCH_WARMUP)" bash bench/run.sh
