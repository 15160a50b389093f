// The command line of the node peers (ort/bench.mjs, llamacpp/bench.mjs):
// one MODEL and flags that each take a value.
import process from 'node:process';

// parseArgs returns defaults with MODEL in .model and each flag's value:
// ints maps an integer flag ('--runs') to its field and least value
// ({ runs: 1 }); other(flag, value, a, int) takes the rest and returns
// false for a flag it does not know. A bad command line prints the
// problem and usage to stderr and exits with status 2.
export function parseArgs(argv, usageLine, defaults, ints, other = () => false) {
  const usage = (msg) => {
    process.stderr.write(`bench.mjs: ${msg}\nusage: ${usageLine}\n`);
    process.exit(2);
  };
  const int = (flag, v, lo) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < lo) usage(`${flag} ${v}: want an integer >= ${lo}`);
    return n;
  };
  const a = { model: '', ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) {
      if (a.model) usage(`unexpected argument ${arg}`);
      a.model = arg;
      continue;
    }
    if (i + 1 >= argv.length) usage(`${arg} wants a value`);
    const v = argv[++i];
    const field = arg.slice(2);
    if (Object.hasOwn(ints, field)) {
      a[field] = int(arg, v, ints[field]);
    } else if (!other(arg, v, a, int, usage)) {
      usage(`unexpected argument ${arg}`);
    }
  }
  if (!a.model) usage('no MODEL');
  return a;
}
