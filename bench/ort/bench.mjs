#!/usr/bin/env node
// ONNX Runtime (CPU) peer of `weft bench`: times one model file with
// onnxruntime-node and prints the same JSON object `weft bench --json`
// does. Usage:
//
//   node bench.mjs MODEL.onnx [--threads T] [--runs N] [--warmup N] [--dim SYM=N]
//
// Inputs get the declared shapes and dtypes (symbolic dimensions from
// --dim): floats uniform in [-1,1), integers in [0,4), bools alternating,
// as weft generates them (the values differ; timing does not depend on
// them). intraOpNumThreads = T, interOpNumThreads = T, sequential
// execution, graphOptimizationLevel 'all'. One untimed first run, --warmup
// more, then --runs timed session.run calls (each allocates its outputs:
// onnxruntime-node returns new tensors). peak_rss_bytes is the node
// process's (V8 included).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';

import { parseArgs } from '../args.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

const usageLine = 'node bench.mjs MODEL.onnx [--threads T] [--runs N] [--warmup N] [--dim SYM=N]';

// --dim SYM=N: the size of a symbolic dimension.
function dimFlag(flag, v, a, int, usage) {
  if (flag !== '--dim') return false;
  const [sym, n] = v.split('=');
  if (!sym || n === undefined) usage('--dim wants SYM=N');
  a.dims[sym] = int('--dim ' + sym, n, 0);
  return true;
}

// A small deterministic generator (mulberry32), seeded per input name.
function rng(name) {
  let s = 0x77656674;
  for (const c of name) s = Math.imul(s ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const arrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function makeInput(meta, dims) {
  if (!meta.isTensor) throw new Error(`input ${meta.name} is not a tensor`);
  const shape = meta.shape.map((d, i) => {
    if (typeof d === 'number' && d >= 0) return d;
    if (typeof d === 'string' && d in dims) return dims[d];
    throw new Error(`input ${meta.name} has symbolic dimension ${JSON.stringify(d)} (axis ${i}): pass --dim SYM=N`);
  });
  const Arr = arrays[meta.type];
  if (!Arr) throw new Error(`input ${meta.name} has dtype ${meta.type}, which this script cannot generate`);
  const n = shape.reduce((x, y) => x * y, 1);
  const data = new Arr(n);
  const r = rng(meta.name);
  for (let i = 0; i < n; i++) {
    if (meta.type === 'bool') data[i] = 1 - (i % 2);
    else if (meta.type.startsWith('float')) data[i] = 2 * r() - 1;
    else if (Arr === BigInt64Array || Arr === BigUint64Array) data[i] = BigInt(Math.floor(4 * r()));
    else data[i] = Math.floor(4 * r());
  }
  return { tensor: new ort.Tensor(meta.type, data, shape), desc: `${meta.type}[${shape.join(',')}]` };
}

const ms = (t0, t1) => Math.round(Number(t1 - t0) / 1e3) / 1e3;

async function main() {
  const a = parseArgs(process.argv.slice(2), usageLine, { threads: 1, runs: 10, warmup: 2, dims: {} },
    { threads: 1, runs: 1, warmup: 0 }, dimFlag);
  const bytes = readFileSync(a.model);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: a.threads,
    interOpNumThreads: a.threads,
  });
  const compileMs = ms(t0, process.hrtime.bigint());
  const feeds = {};
  const inputs = {};
  for (const meta of session.inputMetadata) {
    const { tensor, desc } = makeInput(meta, a.dims);
    feeds[meta.name] = tensor;
    inputs[meta.name] = desc;
  }
  const t1 = process.hrtime.bigint();
  await session.run(feeds);
  const firstRunMs = ms(t1, process.hrtime.bigint());
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const lat = [];
  for (let i = 0; i < a.runs; i++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    lat.push(ms(s, process.hrtime.bigint()));
  }
  lat.sort((x, y) => x - y);
  const n = lat.length;
  const median = Math.round(1e3 * (n % 2 ? lat[(n - 1) / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2)) / 1e3;
  const out = {
    model: a.model,
    threads: a.threads,
    runs: a.runs,
    latency_ms_median: median,
    latency_ms_min: lat[0],
    latency_ms_max: lat[n - 1],
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    runtime: 'onnxruntime-node',
    ort_version: ort.env.versions?.node ?? ort.env.versions?.common ?? 'unknown',
    node_version: process.version,
    platform: `${process.platform}/${process.arch}`,
    compile_ms: compileMs,
    first_run_ms: firstRunMs,
    warmup: a.warmup,
    latency_ms_p90: lat[Math.max(0, Math.ceil(0.9 * n) - 1)],
    threads_mechanism: 'intraOpNumThreads and interOpNumThreads',
    inputs,
  };
  await session.release();
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench.mjs: ${modelArg()}: ${err?.message ?? err}\n`);
  process.exit(1);
});

function modelArg() {
  return process.argv.slice(2).find((x) => !x.startsWith('-')) ?? '(no model)';
}
