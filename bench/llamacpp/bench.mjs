#!/usr/bin/env node
// llama.cpp (CPU) peer of `weft bench MODEL.gguf`: the same prefill and
// decode on the same GGUF file through node-llama-cpp's prebuilt
// linux-x64 llama.cpp (pinned in package.json; ggml loads the CPU variant
// that suits the CPU, e.g. its AMX one on a Sapphire Rapids). Usage:
//
//   node bench.mjs MODEL.gguf [--prefill N] [--decode N] [--threads T] [--runs R]
//
// Each run clears the context, evaluates a prompt of --prefill token ids
// as one batch (logits of its last token: the time to first token), then
// decodes --decode tokens one batch of one at a time, each with its
// logits (as weft's decode step computes them), at positions after the
// prompt; the tokens fed are fixed ids, not sampled (sampling is not what
// is timed, and random weights make no text). Each run then decodes the
// same number of tokens from an empty context, after a 1-token prompt
// (llama-bench's tg test, as weft bench's from_empty_context). One untimed warm-up run of
// two prompt tokens and two decode steps comes first (weft bench warms up
// with two tokens too). The context holds prefill + decode + 16 positions
// with an f16 KV cache (llama.cpp's default, as weft's), llama.cpp's
// default flash-attention choice, threads = batch threads = T. It prints
// one JSON object: the best prefill and decode rates of the runs and each
// run's, the CPU variant ggml loaded and the node process's peak RSS.
//
// The decode steps call node-llama-cpp's context binding directly
// (initBatch, addToBatch, decodeBatch: what its own evaluation loop calls;
// an internal API, hence the pinned version) so that no sampling,
// detokenization or generator bookkeeping is counted against llama.cpp.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

import { parseArgs } from '../args.mjs';

const usageLine = 'node bench.mjs MODEL.gguf [--prefill N] [--decode N] [--threads T] [--runs R]';
function usage(msg) {
  process.stderr.write(`bench.mjs: ${msg}\nusage: ${usageLine}\n`);
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2), usageLine, { prefill: 128, decode: 64, threads: 1, runs: 1 },
  { prefill: 1, decode: 1, threads: 1, runs: 1 });

// The CPU variant ggml picks is only in its log ("loaded CPU backend from
// .../libggml-cpu-VARIANT.so"); everything at warning level or above goes
// to stderr.
let cpuVariant = '';
const logger = (level, message) => {
  const m = /loaded CPU backend from .*libggml-cpu-([a-z0-9_]+)\.so/.exec(message);
  if (m) cpuVariant = m[1];
  if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal || level === LlamaLogLevel.warn) {
    process.stderr.write(`llama.cpp: ${message.trimEnd()}\n`);
  }
};

function buildInfo() {
  try {
    const meta = JSON.parse(readFileSync(new URL('node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/_nlcBuildMetadata.json', import.meta.url), 'utf8'));
    return meta.buildOptions?.llamaCpp?.release ?? '';
  } catch {
    return '';
  }
}

// Token ids spread over the vocabulary (below 1000: any vocabulary has
// them), never the first few (BOS, EOS and other specials sit there).
const ids = (n, off) => Uint32Array.from({ length: n }, (_, i) => 4 + ((off + i) * 7919) % 996);

const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, maxThreads: 0, logLevel: LlamaLogLevel.debug, logger });
const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0, useMmap: true });
const ctxSize = args.prefill + args.decode + 16;
const context = await model.createContext({
  contextSize: ctxSize, batchSize: Math.max(args.prefill, 2), sequences: 1, // (the warm-up prompt is 2)
  threads: { ideal: args.threads, min: args.threads },
});
const c = context._ctx;
if (typeof c?.decodeBatch !== 'function' || typeof c.addToBatch !== 'function' || typeof c.removeTokenCellsFromSequence !== 'function') {
  usage(`node-llama-cpp ${context.constructor?.name}: no context binding (initBatch/addToBatch/decodeBatch); install the version in package.json`);
}

// run evaluates a prompt of np ids and nd decode steps from a clear
// context; it returns the prompt's and the decode steps' times (ms).
async function run(np, nd) {
  if (!c.removeTokenCellsFromSequence(0, 0, -1)) throw new Error('cannot clear the KV cache');
  const prompt = ids(np, 0);
  let t0 = performance.now();
  c.initBatch(np);
  c.addToBatch(0, 0, prompt, Uint32Array.of(np - 1));
  await c.decodeBatch();
  const prefillMs = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < nd; i++) {
    c.initBatch(1);
    c.addToBatch(0, np + i, ids(1, np + i), Uint32Array.of(0));
    await c.decodeBatch();
  }
  return { prefillMs, decodeMs: performance.now() - t0 };
}

await run(2, 2);
const prefill = [], decode = [], ttft = [], tg = [];
for (let r = 0; r < args.runs; r++) {
  const t = await run(args.prefill, args.decode);
  ttft.push(t.prefillMs);
  prefill.push(args.prefill / t.prefillMs * 1000);
  decode.push(args.decode / t.decodeMs * 1000);
  tg.push(args.decode / (await run(1, args.decode)).decodeMs * 1000);
}
const out = {
  peer: 'llama.cpp',
  llama_cpp_release: buildInfo(),
  node_llama_cpp: JSON.parse(readFileSync(new URL('node_modules/node-llama-cpp/package.json', import.meta.url), 'utf8')).version,
  cpu_variant: cpuVariant,
  model: args.model,
  threads: c.getThreads(),
  prefill_tokens: args.prefill,
  decode_tokens: args.decode,
  ctx: ctxSize,
  runs: args.runs,
  ttft_ms: Math.min(...ttft),
  prefill_tok_s: Math.max(...prefill),
  decode_tok_s: Math.max(...decode),
  prefill_tok_s_runs: prefill,
  decode_tok_s_runs: decode,
  empty_decode_tok_s: Math.max(...tg),
  empty_decode_tok_s_runs: tg,
  peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
};
await context.dispose();
await model.dispose();
process.stdout.write(JSON.stringify(out) + '\n');
