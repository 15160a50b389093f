#!/usr/bin/python3
"""numpy/OpenBLAS peer of weft's sgemm benchmark (bench/gemm BenchmarkSgemm).

Times C = A·B in float32 for the M×N×K sizes below and prints one JSON object:
{"numpy": ..., "threads": ..., "coretype": ..., "openblas": {...}, "results":
[{"m","n","k","gflops_mean","gflops_best","reps"}]}. Threads and kernel come
from the environment, as OpenBLAS reads them at load time:

    OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 sgemm.py

Run it with Debian's python3-numpy (/usr/bin/python3), which links the
system's libblas.so.3: OpenBLAS where libopenblas0 is installed, else the
reference BLAS (tens of times slower). The script reports the BLAS library
numpy has loaded ("blas_library") and fails unless it is OpenBLAS, so that
the reference BLAS is never reported as the OpenBLAS peer. threadpoolctl,
when installed, reports the kernel (architecture) and thread count
OpenBLAS actually uses.
"""
import json
import os
import sys
import time

import numpy as np

SIZES = [(256, 256, 256), (1024, 1024, 1024),
         (1, 4096, 4096), (16, 4096, 4096), (512, 4096, 4096)]


def bench(m, n, k, min_time):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    np.matmul(a, b, out=c)  # warm-up: page in, start the threads
    best, total, reps = float("inf"), 0.0, 0
    while total < min_time or reps < 3:
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        dt = time.perf_counter() - t0
        best = min(best, dt)
        total += dt
        reps += 1
    flops = 2.0 * m * n * k
    return {"m": m, "n": n, "k": k, "reps": reps,
            "gflops_mean": round(flops * reps / total / 1e9, 2),
            "gflops_best": round(flops / best / 1e9, 2)}


def openblas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"note": "threadpoolctl not installed: kernel not reported"}
    for info in threadpool_info():
        if info.get("internal_api") == "openblas":
            return {k: info.get(k) for k in ("version", "architecture", "num_threads", "threading_layer", "filepath")}
    return {"note": "no OpenBLAS found by threadpoolctl"}


def blas_library():
    """The BLAS shared library mapped into this process (after numpy has
    run a matmul), or "" where /proc/self/maps is not readable."""
    np.matmul(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32))
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return ""
    libs = sorted(p for p in paths if "blas" in os.path.basename(p).lower())
    return " ".join(libs)


def main():
    min_time = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    lib = blas_library()
    # Debian's numpy calls sgemm through libblas.so.3, which the
    # alternatives system points at OpenBLAS's or the reference BLAS's
    # (OpenBLAS's LAPACK may be mapped either way).
    ref = [p for p in lib.split() if os.path.basename(p).startswith(("libblas", "libcblas")) and "openblas" not in p]
    if ref or (lib and "openblas" not in lib):
        sys.stderr.write("numpy uses %s, not OpenBLAS: apt-get install libopenblas0-pthread\n" % lib)
        sys.exit(1)
    out = {
        "numpy": np.__version__,
        "threads": int(os.environ.get("OPENBLAS_NUM_THREADS", "0")) or None,
        "coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "l2_size": os.environ.get("OPENBLAS_L2_SIZE", ""),
        "blas_library": lib,
        "openblas": openblas_info(),
        "results": [bench(m, n, k, min_time) for m, n, k in SIZES],
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
