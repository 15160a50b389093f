#!/bin/sh
# Rebuilds examples/tinyllama from scratch: trains the model (train.py),
# writes tinyllama.gguf with weft's GGUF writer (export/) and refreshes the
# test fixtures. Run from the repository root:
#
#	scripts/train-tiny-llama/build.sh            # the committed model's settings, on a CUDA GPU
#	DEVICE=cpu scripts/train-tiny-llama/build.sh # the same on the CPU (hours)
#
# Extra arguments go to train.py. Needs python3-torch, python3-numpy,
# fortunes-min and fortunes (Debian packages) and Go.
set -eu
OUT=${OUT:-/tmp/tinyllama}
DEVICE=${DEVICE:-cuda}
PY=${PYTHON:-python3}
here=$(dirname "$0")
"$PY" "$here/train.py" --out "$OUT" --device "$DEVICE" \
	--dim 192 --layers 5 --heads 4 --kv-heads 2 --ffn 512 --ctx 256 \
	--batch 64 --max-steps 2500 --eval-every 100 --dropout 0.2 --lr 2e-3 \
	--minutes 600 --threads "${THREADS:-2}" "$@"
go run ./scripts/train-tiny-llama/export -in "$OUT" -o examples/tinyllama/tinyllama.gguf
cp "$OUT/greedy.json" "$OUT/tokenize.json" examples/tinyllama/
go test ./examples/tinyllama
