#!/usr/bin/python3
"""Times numpy/OpenBLAS sgemm on the sizes of BenchmarkSgemm (M×N×K) and
prints GFLOP/s. Thread count and kernel come from the environment, e.g.

    OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 ./sgemm_numpy.py
"""
import os
import time

import numpy as np

SIZES = [(256, 256, 256), (1024, 1024, 1024),
         (1, 4096, 4096), (16, 4096, 4096), (512, 4096, 4096)]


def bench(m, n, k, min_time=1.0):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    np.matmul(a, b, out=c)
    best = float("inf")
    total, reps = 0.0, 0
    cpu0 = time.process_time()
    while total < min_time or reps < 3:
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        dt = time.perf_counter() - t0
        best = min(best, dt)
        total += dt
        reps += 1
    cpu = time.process_time() - cpu0
    flops = 2 * m * n * k
    return flops / (total / reps) / 1e9, flops / best / 1e9, flops * reps / cpu / 1e9 * threads()


def threads():
    return int(os.environ.get("OPENBLAS_NUM_THREADS", "1"))


def main():
    print("numpy", np.__version__, "threads", os.environ.get("OPENBLAS_NUM_THREADS", "default"),
          "coretype", os.environ.get("OPENBLAS_CORETYPE", "default"))
    for m, n, k in SIZES:
        mean, best, cpu = bench(m, n, k)
        print(f"{m}x{n}x{k}: {mean:7.1f} GFLOP/s mean, {best:7.1f} best, {cpu:7.1f} per CPU-second x threads")


if __name__ == "__main__":
    main()
