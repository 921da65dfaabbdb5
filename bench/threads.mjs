// Threads: time against thread count (1, 2, ..., cores) for softmax at n = 1024 and 4096, linear at
// n = 65536 (not causal, and causal) and a training step, with onnxruntime-web and tfjs-backend-wasm at the same thread
// counts where they run threads in Node. Part of `npm run bench` (bench/run.mjs); alone:
//   node --experimental-wasm-relaxed-simd bench/threads.mjs [--quick]
// Writes bench/threads.md and bench/threads.json (--quick: threads-quick.*).
//
// Method. Every (contender, thread count) runs in a child process of its own: onnxruntime-web
// fixes its thread count when it first loads, and two libraries' thread pools in one process
// steal each other's cores (both spin between calls). The children run one after another, three
// times over in alternating order, so that load from other processes spreads over all of them; a
// child's figure is the median of its repeats, and the passes give the lowest of their medians.
// Speed-ups and per-core efficiency (speed-up / t) compare a contender with itself on one thread.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ALLOCATOR_ENV, commitText } from './cli.mjs';
import { writeRecorded } from './record.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BINDING = new URL('../dist/attnlab.js', import.meta.url).href;
const D = 64;

function inputs(n, d, dv, seed) {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) - 0.5;
  return { n, d, dv, q: Float32Array.from({ length: n * d }, rand), k: Float32Array.from({ length: n * d }, rand), v: Float32Array.from({ length: n * dv }, rand) };
}

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

/** Interleaved rounds over { name: () => Promise|void }: { name: median ms }. */
async function rounds(fns, count) {
  const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  // Warm-up: V8 runs WebAssembly in its baseline tier first and tiers hot functions up while they
  // run; one call was not enough (the SIMD build's softmax at n = 1024 took ~17 ms for its first
  // ~20 calls in some processes, 11 ms after), so each contender runs for half a second first.
  for (const fn of Object.values(fns)) {
    const start = performance.now();
    for (let i = 0; i < 3 || performance.now() - start < 500; i++) await fn();
  }
  for (let r = 0; r < count; r++) {
    for (const [name, fn] of Object.entries(fns)) {
      const t0 = performance.now();
      await fn();
      times[name].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

async function loadOrt(threads) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const { attentionModel } = await import('./onnx-graph.mjs');
  const session = await ort.InferenceSession.create(attentionModel({ d: D, dv: D }), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', intraOpNumThreads: threads, executionMode: 'sequential',
  });
  return {
    threads: ort.env.wasm.numThreads,
    prepare(x) {
      const feeds = { q: new ort.Tensor('float32', x.q, [x.n, D]), k: new ort.Tensor('float32', x.k, [x.n, D]), v: new ort.Tensor('float32', x.v, [x.n, D]) };
      return async () => (await session.run(feeds)).y.data;
    },
  };
}

async function loadTfjs(threads) {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const tf = await import('@tensorflow/tfjs-core');
  const tfw = await import('@tensorflow/tfjs-backend-wasm');
  const dist = path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + path.sep;
  // The threaded tfjs binary needs Emscripten pthreads (Web Workers): only the plain one loads in Node.
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tfw.setWasmPaths(dist);
  tfw.setThreadsCount?.(threads);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  return {
    threads: tfw.getThreadsCount?.() ?? 1,
    prepare(x) {
      const tq = tf.tensor2d(x.q, [x.n, D]), tk = tf.tensor2d(x.k, [x.n, D]), tv = tf.tensor2d(x.v, [x.n, D]);
      return () => { const y = tf.tidy(() => tf.matMul(tf.softmax(tf.mul(tf.matMul(tq, tf.transpose(tk)), 1 / Math.sqrt(D))), tv)); const d = y.dataSync(); y.dispose(); return d; };
    },
  };
}

/** One contender at one thread count, in this (child) process: its measurements, as JSON on stdout. */
async function child(who, threads, quick) {
  const out = { who, threads, softmax: {}, linear: null, linearCausal: null, train: null, contenders: {} };
  const sizes = quick ? [1024] : [1024, 4096];
  if (!who.startsWith('attnlab')) {
    try {
      const c = await (who === 'onnxruntime-web' ? loadOrt : loadTfjs)(threads);
      out.contenders[who] = { threads: c.threads };
      for (const n of sizes) out.softmax[n] = await rounds({ [who]: c.prepare(inputs(n, D, D, n)) }, n >= 4096 ? 5 : 15);
    } catch (e) {
      out.contenders[who] = { error: e.message };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exit(0);
  }
  // one build per process: two pools in one process would spin on each other's cores
  const { init, tasks, features } = await import(BINDING);
  const build = who.slice('attnlab-'.length);
  const lab = await init({ simd: build === 'relaxed' ? 'relaxed' : true, threads, fresh: true });
  const name = `attnlab ${build}`;
  out.attnlabThreads = lab.threads;
  for (const n of sizes) {
    const x = inputs(n, D, D, n);
    out.softmax[n] = await rounds({ [name]: () => lab.attention('softmax', x) }, n >= 4096 ? 7 : 21);
  }
  if (build !== 'relaxed' && features().relaxedSimd) { // the rest on the best build only
    lab.dispose();
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exit(0);
  }
  const labs = { [build]: lab }, builds = [build];
  { // the backward pass (attentionGrad: forward + gradients), softmax
    const n = quick ? 1024 : 2048, x = inputs(n, D, D, 11), dOut = inputs(n, D, D, 12).v;
    out.grad = { n, ...(await rounds({ [`attnlab ${builds[0]}`]: () => labs[builds[0]].attentionGrad('softmax', x, dOut) }, 7)) };
  }
  const lin = inputs(quick ? 16384 : 65536, D, D, 7);
  out.linear = { n: lin.n, ...(await rounds({ [`attnlab ${builds[0]}`]: () => labs[builds[0]].attention('linear', lin) }, 5)) };
  // causal: the parallel prefix of chunk-block states (linear.c), at n = 65536 even with --quick
  const linC = inputs(65536, D, D, 8);
  out.linearCausal = { n: linC.n, ...(await rounds({ [`attnlab ${builds[0]}`]: () => labs[builds[0]].attention('linear', linC, { causal: true }) }, 5)) };
  const task = tasks.recall({});
  const d = task.defaults;
  const model = labs[builds[0]].model({ variant: 'softmax', vocab: task.vocab, seqLen: task.seqLen, dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF, causal: task.causal, seed: 1 });
  const { tokens, targets } = task.sample(d.batch, 1);
  out.train = { config: { task: 'recall', ...d, seqLen: task.seqLen }, ...(await rounds({ [`attnlab ${builds[0]}`]: () => model.trainStep(tokens, targets, { lr: 1e-3 }) }, quick ? 11 : 41)) };
  model.dispose();
  for (const lab of Object.values(labs)) lab.dispose();
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** The whole part: a child per thread count, then the tables. Returns the results object. */
const GOALS = { speedup: 1.8, versusOnnx: 1.5 }; // from 1 to 2 threads; attnlab over onnxruntime-web at equal thread counts

/**
 * The thread goals, each met or not and by how much: softmax at n = 4096 and the training step
 * ≥ 1.8× from one thread to two; attnlab ≥ 1.5× faster than onnxruntime-web at every equal thread
 * count. Lines of Markdown, from the results' rows and versus.
 */
export function threadGoals({ rows, versus }) {
  const out = ['## Goals', '', '| goal | measured | required | status | by |', '|---|---:|---:|---|---|'];
  const line = (what, value, limit) => {
    const short = limit / value - 1;
    out.push(`| ${what} | ${value.toFixed(2)}× | ≥ ${limit}× | ${value >= limit ? '✅ met' : '❌ not met'} | ${(100 * Math.abs(short)).toFixed(0)} % ${short > 0 ? 'short' : 'to spare'} |`);
  };
  for (const r of rows.filter((x) => x.threads === 2 && (/^softmax n=4096: attnlab/.test(x.what) || /^training step/.test(x.what)))) {
    line(`${r.what}: 1 → 2 threads`, r.speedup, GOALS.speedup);
  }
  for (const v of versus.filter((x) => x.other === 'onnxruntime-web')) {
    line(`softmax n = ${v.n}, ${v.threads} thread(s): onnxruntime-web / ${v.attnlab}`, v.ratio, GOALS.versusOnnx);
  }
  out.push('');
  return out;
}

export async function threadsPhase({ quick = false, dir = HERE, log = console.log } = {}) {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const counts = [...new Set([1, 2, ...Array.from({ length: Math.min(cores, 8) }, (_, i) => i + 1)])].sort((a, b) => a - b);
  log(`\nthreads: ${cores} cores; thread counts ${counts.join(', ')} (a child process each)`);
  const { features } = await import(BINDING);
  const whos = [...(features().relaxedSimd ? ['attnlab-relaxed'] : []), 'attnlab-simd', 'onnxruntime-web', 'tfjs-wasm'];
  const loadStart = os.loadavg();
  const got = new Map(); // threads -> merged result
  const lower = (a, b) => (a == null ? b : b == null ? a : Math.min(a, b));
  for (const pass of [0, 1, 2]) {
    for (const t of pass % 2 ? counts.slice().reverse() : counts) {
      for (const who of pass % 2 ? whos.slice().reverse() : whos) {
        const r = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', fileURLToPath(import.meta.url), '--child', who, String(t), ...(quick ? ['--quick'] : [])],
          { encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 24, env: { ...ALLOCATOR_ENV, ...process.env } });
        const line = (r.stdout ?? '').trim().split('\n').pop();
        if (r.status !== 0 || !line?.startsWith('{')) {
          log(`threads ${t} ${who}: failed (${r.status ?? r.error?.message}): ${(r.stderr ?? '').slice(-500)}`);
          continue;
        }
        const x = JSON.parse(line);
        const m = got.get(t) ?? { threads: t, softmax: {}, linear: null, linearCausal: null, train: null, grad: null, contenders: {} };
        for (const [n, byName] of Object.entries(x.softmax)) {
          m.softmax[n] ??= {};
          for (const [k, v] of Object.entries(byName)) m.softmax[n][k] = lower(m.softmax[n][k], v);
        }
        for (const key of ['linear', 'linearCausal', 'train', 'grad']) {
          if (!x[key]) continue;
          m[key] ??= { ...x[key] };
          for (const [k, v] of Object.entries(x[key])) if (typeof v === 'number' && k !== 'n') m[key][k] = lower(m[key][k], v);
        }
        Object.assign(m.contenders, x.contenders);
        if (x.attnlabThreads) m.attnlabThreads = x.attnlabThreads;
        got.set(t, m);
        log(`threads ${t} ${who}: done (pass ${pass + 1})`);
      }
    }
  }
  const runs = counts.map((t) => got.get(t)).filter(Boolean);
  const base = runs.find((r) => r.threads === 1);
  const rows = [];
  const add = (what, get) => {
    for (const r of runs) {
      const ms = get(r);
      if (ms == null) continue;
      const one = get(base);
      const speedup = one / ms;
      rows.push({ what, threads: r.threads, ms, speedup, efficiency: speedup / r.threads });
    }
  };
  const names = new Set();
  for (const r of runs) for (const n of Object.keys(r.softmax)) for (const k of Object.keys(r.softmax[n])) names.add(`${n}|${k}`);
  for (const key of names) {
    const [n, name] = key.split('|');
    add(`softmax n=${n}: ${name}`, (r) => r.softmax[n]?.[name]);
  }
  const grName = Object.keys(base.grad ?? {}).find((k) => k.startsWith('attnlab'));
  if (grName) add(`softmax attentionGrad n=${base.grad.n}: ${grName}`, (r) => r.grad?.[grName]);
  const linName = Object.keys(base.linear).find((k) => k.startsWith('attnlab'));
  add(`linear n=${base.linear.n}: ${linName}`, (r) => r.linear[linName]);
  if (base.linearCausal) add(`linear causal n=${base.linearCausal.n}: ${linName}`, (r) => r.linearCausal?.[linName]);
  const trName = Object.keys(base.train).find((k) => k.startsWith('attnlab'));
  add(`training step (recall, batch ${base.train.config.batch}): ${trName}`, (r) => r.train[trName]);
  // attnlab against the contenders at equal thread counts
  const versus = [];
  for (const r of runs) {
    for (const n of Object.keys(r.softmax)) {
      const s = r.softmax[n];
      for (const other of ['onnxruntime-web', 'tfjs-wasm']) {
        if (s[other] == null) continue;
        for (const b of Object.keys(s).filter((k) => k.startsWith('attnlab'))) {
          versus.push({ n: Number(n), threads: r.threads, attnlab: b, other, otherThreads: r.contenders[other]?.threads, ratio: s[other] / s[b] });
        }
      }
    }
  }
  const md = [
    '# Threads', '',
    `Written by \`bench/threads.mjs\` (part of \`npm run bench\`) on ${os.cpus()[0]?.model ?? 'an unknown CPU'}, ${cores} cores, Node ${process.versions.node}, commit ${commitText()}${quick ? ', --quick' : ''}, ${new Date().toISOString()}; load average ${loadStart.map((x) => x.toFixed(2)).join(', ')} at the start and ${os.loadavg().map((x) => x.toFixed(2)).join(', ')} at the end.`,
    'Each (contender or attnlab build, thread count) in a child process of its own, run three times in alternating order; a child gives the median of its repeats, the table the lowest of the three passes; d = dv = 64. The training step, attentionGrad and linear run on the relaxed build (the SIMD build where relaxed SIMD is missing).', '',
    ...threadGoals({ rows, versus }),
    '## Time against thread count', '',
    '| what | threads | ms | speed-up over 1 thread | per-core efficiency |', '|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.what} | ${r.threads} | ${fmt(r.ms)} | ${r.speedup.toFixed(2)}× | ${(100 * r.efficiency).toFixed(0)} % |`), '',
    '## attnlab against the contenders at equal thread counts (time ratio: contender / attnlab)', '',
    '| n | threads asked | attnlab | contender | threads the contender reports | contender / attnlab |', '|---:|---:|---|---|---:|---:|',
    ...versus.map((v) => `| ${v.n} | ${v.threads} | ${v.attnlab} | ${v.other} | ${v.otherThreads ?? '?'} | ${v.ratio.toFixed(2)}× |`), '',
    'Contender notes:',
    ...runs.map((r) => `- ${r.threads} thread(s): ${Object.entries(r.contenders).map(([k, v]) => `${k} ${v.error ? 'n/a: ' + v.error : 'reports ' + v.threads + ' thread(s)'}`).join('; ')}`),
    '- tfjs-backend-wasm runs its threaded binary only with Emscripten pthreads over Web Workers, which it does not start in Node: ' +
      'it is measured with its single-threaded SIMD binary at every thread count (setThreadsCount has no effect there).',
    '- onnxruntime-web takes numThreads in Node and runs that many threads (its default session options, spinning thread pool).',
    '- linear (not causal) splits its state and its outputs over threads, but at n = 65536 most of a call is the binding copying 48 MB of inputs in and 16 MB of output out on the calling thread.',
    '- linear causal splits its chunks into blocks (a parallel prefix of their states: block sums, a serial prefix, then each block\'s outputs from the prefix before it); the copies in and out stay on the calling thread as above.',
    '- Two threaded attnlab instances in one process slow each other down (each pool spins about a millisecond after a call, on the cores the other needs): each build is measured in a process of its own.', '',
  ].join('\n');
  const results = { cores, counts, runs, rows, versus };
  writeRecorded(dir, 'threads', quick, md, results);
  log(md);
  return results;
}

// node bench/threads.mjs [--quick]; the measuring children: --child WHO THREADS [--quick]
const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain) {
  const { values, positionals } = parseArgs({
    options: { child: { type: 'string' }, quick: { type: 'boolean', default: false } }, allowPositionals: true,
  });
  const run = values.child != null ? child(values.child, Number(positionals[0]), values.quick) : threadsPhase({ quick: values.quick });
  run.catch((e) => { console.error(e?.stack ?? e); process.exit(1); });
}
