#!/usr/bin/env node
// attnlab benchmark: `npm run bench` (node bench/run.mjs after the build).
//
//   node bench/run.mjs                    full run: n in {64, 256, 1024, 4096, 16384}, a few minutes
//   node bench/run.mjs --quick            n in {64, 256, 1024}, fewer repeats, under a minute;
//                                         writes results-quick.* so the recorded full run stays
//   node bench/run.mjs --only softmax,linear      only these variants
//   node bench/run.mjs --out DIR          where results*.json / .md / scaling*.svg go (default bench/)
//   node bench/run.mjs --sizes 64,256     other sizes (development)
//   node bench/run.mjs --skip native,onnxruntime-web,...   leave contenders out (development)
//
// One thread, d = dv = 64. Contenders: the attnlab builds (scalar, SIMD128, relaxed-SIMD), a
// plain-JS implementation (softmax, linear), the same C compiled natively with gcc -O3
// -march=native (a reference, not a competitor), onnxruntime-web and @tensorflow/tfjs-backend-wasm
// (softmax only), and a micro-kernel that measures this machine's WebAssembly SIMD128 peak.
// Each measurement: warm-up, then repeats (>= 5 and >= 0.3 s; fewer at huge sizes), median and
// IQR/min/max. The relaxed build needs --experimental-wasm-relaxed-simd on Node 20: this script
// re-spawns itself with that flag (and --expose-gc) when it is missing.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { measurePeak, peakRunner, relaxedSupported } from './peak.mjs';
import { softmaxAttention, softmaxBytes, linearAttention, linearBytes } from './plain-js.mjs';
import { writeReports } from './report.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

// ---- re-spawn with the flags the relaxed build (and gc between measurements) need -------------
if (!process.env.ATTNLAB_BENCH_CHILD && !relaxedSupported() && !process.execArgv.includes(RELAXED_FLAG)) {
  const args = [...process.execArgv, RELAXED_FLAG, '--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const env = { ...process.env, ATTNLAB_BENCH_CHILD: '1' };
  let r = spawnSync(process.execPath, args, { stdio: 'inherit', env });
  if (r.status === 9) {
    // "bad option": this Node does not know the flag; run without it (relaxed is reported n/a)
    r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env });
  }
  process.exit(r.status ?? 1);
}

// ---- options -----------------------------------------------------------------------------------
function parseArgs(argv) {
  const o = { quick: false, only: null, out: HERE, sizes: null, skip: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (a.includes('=')) return a.slice(a.indexOf('=') + 1);
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a.startsWith('--only')) o.only = val().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a.startsWith('--out')) o.out = path.resolve(process.cwd(), val());
    else if (a.startsWith('--sizes')) o.sizes = val().split(',').map(Number);
    else if (a.startsWith('--skip')) for (const s of val().split(',')) o.skip.add(s.trim());
    else if (a === '--help' || a === '-h') {
      console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 20).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  return o;
}
const opts = parseArgs(process.argv.slice(2));
const QUICK = opts.quick;
const SIZES = opts.sizes ?? (QUICK ? [64, 256, 1024] : [64, 256, 1024, 4096, 16384]);
const D = 64, DV = 64, H = 64, RANK = 8;
const POLICY = QUICK
  ? { minTimeMs: 100, minReps: 3, warmMs: 30 }
  : { minTimeMs: 300, minReps: 5, warmMs: 100 };
// Above this n a call takes seconds: no warm-up at the size itself (the instance is pre-warmed at
// n = 1024 so the engine has tiered the code up), and only 2-3 repeats.
const HUGE_N = 8192;
const PREWARM_N = 1024;
const TOL = 1e-4; // correctness checks: max |diff| against attnlab's SIMD build
const LINEAR = ['linear', 'efficient', 'taylor'];
const MIXTURE = { components: ['softmax', 'dense1'], alpha: [0.5, 0.5] };
const want = (c) => !opts.skip.has(c);

const log = (...a) => console.log(...a);
const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
const fmtBytes = (b) => (b == null ? '-' : b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);
const gc = () => globalThis.gc?.();

// ---- what runs where -------------------------------------------------------------------------------
// Softmax-type variants (softmax and the Synthesizers) cost O(n²): at n = 16384 one call takes
// seconds on the fast builds and far longer on the slow ones, so to keep the full run under ~10
// minutes the slow contenders run a subset there. Every skip is recorded as "n/a: reason".
const MAX_PREDICTED_MS = 6000; // the SIMD build, the main subject, gets 25 s
const PLAN_NOTES = [
  'plain-js softmax is skipped above n = 4096 (one call would take minutes).',
  'random is skipped above n = 4096: its input r is L×L floats (1 GiB at n = 16384).',
  `softmax-type variants run at n = 16384 because the library streams (online softmax over key blocks, no n×n buffer); the run checks this from softmax's memory at n = 4096.`,
  'Time budget (keeps the full run under ~10 minutes): the scalar build runs softmax-type variants other than softmax only up to n = 1024, and softmax up to 4096; at n = 16384 the relaxed build and native run softmax but no Synthesizer variant; the SIMD build runs everything.',
  `At n = 16384 a softmax-type measurement whose call would take over ${MAX_PREDICTED_MS / 1000} s (25 s on the SIMD build), predicted from its time at the previous size (∝ n²), is skipped.`,
  'onnxruntime-web and tfjs-wasm are skipped at n = 16384: they materialise the n×n logits and probabilities (>= 2 GiB).',
];
const lastTime = new Map(); // `${contender} ${variant}` -> { n, ms } of the largest size measured so far
function planSkip(contender, id, n, softmaxType, streaming) {
  const huge = n > HUGE_N;
  if (id === 'random' && n > 4096) return 'r is L×L (1 GiB at this n)';
  if (softmaxType && huge && streaming === false) return 'the library is not streaming here (softmax at n = 4096 held n×n memory)';
  if (contender === 'attnlab-scalar' && softmaxType && (huge || (n >= 4096 && id !== 'softmax'))) return 'time budget (scalar build: softmax up to 4096, other softmax-type variants up to 1024)';
  if ((contender === 'attnlab-relaxed' || contender === 'native') && softmaxType && huge && id !== 'softmax') return 'time budget (only softmax among the softmax-type variants at this n)';
  if (contender === 'plain-js' && id === 'softmax' && n > 4096) return 'skipped above n = 4096';
  if ((contender === 'onnxruntime-web' || contender === 'tfjs-wasm') && huge) return 'materialises n×n (>= 2 GiB at this n)';
  const prev = lastTime.get(`${contender} ${id}`);
  if (huge && softmaxType && prev) {
    const predicted = prev.ms * (n / prev.n) ** 2;
    if (predicted > (contender === 'attnlab-simd' ? 25000 : MAX_PREDICTED_MS)) return `time budget: one call would take about ${(predicted / 1000).toFixed(0)} s (from ${prev.ms.toFixed(0)} ms at n = ${prev.n})`;
  }
  return null;
}

// ---- flop counts ------------------------------------------------------------------------------
// Multiply-add = 2 flops; exp, max, division and the softmax normalisation are not counted.
const FLOPS = {
  softmax: { text: '4·n²·d  (2n²d for q·kᵀ + 2n²dv for A·v)', f: ({ n, d, dv }) => 2 * n * n * d + 2 * n * n * dv },
  dense: { text: '2n·d·h + 2n²·h + 2n²·dv', f: ({ n, d, dv, h }) => 2 * n * d * h + 2 * n * n * h + 2 * n * n * dv },
  dense1: { text: '2n²·d + 2n²·dv', f: ({ n, d, dv }) => 2 * n * n * d + 2 * n * n * dv },
  random: { text: '2n²·dv', f: ({ n, dv }) => 2 * n * n * dv },
  'factorized-dense': { text: '2n·d·(a+b) + n² + 2n²·dv', f: ({ n, d, dv, a, b }) => 2 * n * d * (a + b) + n * n + 2 * n * n * dv },
  'factorized-random': { text: '2n²·rank + 2n²·dv', f: ({ n, dv, rank }) => 2 * n * n * rank + 2 * n * n * dv },
  mixture: { text: 'Σ components\' logit flops + 2n²·dv (softmax + dense1: 2n²d + 2n²d + 2n²dv)', f: ({ n, d, dv }) => 2 * n * n * d + 2 * n * n * d + 2 * n * n * dv },
  linear: { text: '4·n·d·dv (+ O(n·d) feature map)', f: ({ n, d, dv }) => 4 * n * d * dv },
  efficient: { text: '4·n·d·dv (+ O(n·d) softmaxes)', f: ({ n, d, dv }) => 4 * n * d * dv },
  taylor: { text: '4·n·d·dv (+ O(n·d) normalisation)', f: ({ n, d, dv }) => 4 * n * d * dv },
  fixed: { text: 'n·dv', f: ({ n, dv }) => n * dv },
};

// ---- deterministic inputs (the same generator as native.c) ----------------------------------
const INPUT_ORDER = ['q', 'k', 'v', 'x', 'w1', 'b1', 'w2', 'b2', 'w', 'r', 'wa', 'ba', 'wb', 'bb', 'r1', 'r2'];
function randomArray(count, index, n) {
  const x = new Float32Array(count);
  let s = (Math.imul(index + 1, 2654435761 | 0) + Math.imul(n, 40503)) >>> 0;
  s = (s | 1) >>> 0;
  for (let i = 0; i < count; i++) {
    s = (s ^ (s << 13)) >>> 0;
    s = (s ^ (s >>> 17)) >>> 0;
    s = (s ^ (s << 5)) >>> 0;
    x[i] = (s >>> 8) * (1 / 16777216) * 2 - 1;
  }
  return x;
}
function dimsFor(n) {
  let a = 1;
  for (let t = 1; t * t <= n; t++) if (n % t === 0) a = t;
  return { n, d: D, dv: DV, h: H, L: n, a, b: n / a, rank: RANK };
}
/** Lazily generated arrays of one size; shapes from the variant metadata ('n*d' etc.). */
function makeInputs(n) {
  const dims = dimsFor(n);
  const cache = new Map();
  return {
    dims,
    get(name, shape) {
      if (!cache.has(name)) {
        const count = shape.reduce((p, s) => p * dims[s], 1);
        cache.set(name, randomArray(count, INPUT_ORDER.indexOf(name), n));
      }
      return cache.get(name);
    },
  };
}

// ---- variant metadata: the binding's, or parsed from src/c/variants.def ---------------------------
function variantsFromDef() {
  const src = fs.readFileSync(path.join(ROOT, 'src/c/variants.def'), 'utf8');
  const re = /X\(\s*(\w+),\s*"([^"]+)",\s*"([^"]*)",\s*"([^"]*)",\s*"([^"]*)",\s*"([^"]*)"/g;
  const out = [];
  for (const m of src.matchAll(re)) {
    out.push({
      id: m[2], label: m[3], family: m[4], dims: m[5].split(/\s+/).filter(Boolean),
      inputs: m[6].split(/\s+/).filter(Boolean).map((s) => { const [name, shape] = s.split(':'); return { name, shape: shape.split('*') }; }),
    });
  }
  return out;
}
let VARIANTS = variantsFromDef();

/** Inputs object for lab.attention(): dims the variant reads plus the arrays it needs. */
function callInputs(info, inp) {
  const byId = Object.fromEntries(VARIANTS.map((v) => [v.id, v]));
  let needed = info.inputs;
  if (info.id === 'mixture') {
    const names = new Set(['v']);
    for (const c of MIXTURE.components) for (const i of byId[c].inputs) names.add(i.name);
    needed = info.inputs.filter((i) => names.has(i.name));
  }
  const o = {};
  for (const dname of info.dims ?? ['n', 'd', 'dv', 'h', 'L', 'a', 'b', 'rank']) o[dname] = inp.dims[dname];
  for (const i of needed) o[i.name] = inp.get(i.name, i.shape);
  return o;
}
const callOptions = (id) => (id === 'mixture' ? { ...MIXTURE } : {});

// ---- timing -------------------------------------------------------------------------------------
const now = () => performance.now();
const isThenable = (x) => x && typeof x.then === 'function';

/**
 * Warm-up (at least one call, more while under warmMs), then repeats until >= minReps and
 * >= minTimeMs (2-3 repeats when a call takes over 0.5 s); tiny calls are timed in batches of
 * about 1 ms. huge: no warm-up at this size (the caller pre-warmed the engine). Also records the
 * process CPU time: cpu_wall_ratio well below 1 means other processes took the CPU during the run.
 */
async function measure(fn, { huge = false } = {}) {
  let last = Infinity;
  let result;
  if (!huge) {
    const t0 = now();
    do {
      const t = now();
      result = fn();
      if (isThenable(result)) result = await result;
      last = now() - t;
    } while (now() - t0 < POLICY.warmMs && last < POLICY.warmMs / 4);
  }
  let repsWanted = POLICY.minReps, budget = POLICY.minTimeMs;
  const batch = last < 1 ? Math.min(1000, Math.ceil(1 / Math.max(last, 1e-4))) : 1;
  const samples = [];
  const cpu = []; // process CPU time of each sample: less than the wall time when other processes took the CPU
  const start = now();
  while (samples.length < 1000) {
    const c0 = process.cpuUsage();
    const t = now();
    for (let b = 0; b < batch; b++) {
      result = fn();
      if (isThenable(result)) result = await result;
    }
    const ms = (now() - t) / batch;
    const c = process.cpuUsage(c0);
    samples.push(ms);
    cpu.push((c.user + c.system) / 1000 / batch);
    if (samples.length === 1 && ms > 500) { repsWanted = ms > 2000 ? 2 : 3; budget = 0; }
    const elapsed = now() - start;
    if (samples.length >= repsWanted && elapsed >= budget) break;
    if (elapsed > 20000) break;
  }
  const cpuTotal = cpu.reduce((a, b) => a + b, 0), wallTotal = samples.reduce((a, b) => a + b, 0);
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const m = samples.length;
  const med = (xs) => (m % 2 ? xs[m >> 1] : (xs[m / 2 - 1] + xs[m / 2]) / 2);
  const median = med(samples);
  return {
    median_ms: median, min_ms: samples[0], max_ms: samples[m - 1],
    q1_ms: samples[Math.floor(0.25 * (m - 1))], q3_ms: samples[Math.ceil(0.75 * (m - 1))],
    cpu_median_ms: med(cpu), cpu_wall_ratio: cpuTotal / wallTotal,
    reps: m, batch, result,
  };
}

/**
 * measure(), retried (at most twice; once with --quick) while the process got under 90 % of the wall time as CPU
 * time, i.e. other processes took the CPU; the least contended attempt is kept. Attempts that take
 * over 3 s are not retried.
 */
const CONTENDED = 0.9;
async function measureRobust(fn, o = {}) {
  let best = null;
  for (let attempt = 1; attempt <= (QUICK ? 2 : 3); attempt++) {
    const t = now();
    const m = await measure(fn, o);
    m.attempts = attempt;
    if (!best || m.cpu_wall_ratio > best.cpu_wall_ratio) best = { ...m, attempts: attempt };
    if (m.cpu_wall_ratio >= CONTENDED || now() - t > (QUICK ? 1000 : 3000)) break;
  }
  return best;
}

function maxAbsDiff(a, b) {
  if (!a || !b || a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= m)) m = Number.isNaN(e) ? Infinity : e;
  }
  return m;
}
function sums(y) {
  let s = 0, sa = 0;
  for (let i = 0; i < y.length; i++) { s += y[i]; sa += Math.abs(y[i]); }
  return { sum: s, sumabs: sa };
}

// ---- machine -----------------------------------------------------------------------------------
function machineInfo() {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
    if (m) cpu = m[1].trim();
  } catch {}
  let mhz = null;
  try { mhz = Number(fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^cpu MHz\s*:\s*(.+)$/m)[1]); } catch {}
  return {
    cpu, cpu_mhz: mhz, cores: os.cpus().length, memory_bytes: os.totalmem(), platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version, v8: process.versions.v8, loadavg_start: os.loadavg()[0], node_flags: process.execArgv, date: new Date().toISOString(),
  };
}

// ---- native reference ---------------------------------------------------------------------------
/** C sources of the library for a native build: build.sh's CORE_SOURCES (not freestanding.c,
 * the libc stand-in of the relaxed wasm build); without build.sh, src/c/*.c minus wasm-only files. */
function nativeSources() {
  const dir = path.join(ROOT, 'src/c');
  let buildSh = '';
  try { buildSh = fs.readFileSync(path.join(ROOT, 'build.sh'), 'utf8'); } catch {}
  const m = buildSh.match(/^CORE_SOURCES=\(([^)]*)\)/m);
  let files = m ? [...m[1].matchAll(/([\w.-]+\.c)\b/g)].map((x) => x[1]) : [];
  if (!files.length) files = fs.readdirSync(dir).filter((f) => f.endsWith('.c') && !/freestanding|wasm|binding|emscripten/i.test(f));
  return files.map((f) => path.join(dir, f));
}
function buildNative() {
  const cacheDir = path.join(HERE, '.cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  const exe = path.join(cacheDir, 'native');
  const srcs = [path.join(HERE, 'native.c'), ...nativeSources()];
  const deps = [...srcs, ...fs.readdirSync(path.join(ROOT, 'src/c')).map((f) => path.join(ROOT, 'src/c', f))];
  const flags = ['-O3', '-march=native', '-std=c11', '-Wall', '-I', path.join(ROOT, 'src/c')];
  const cmd = ['gcc', ...flags, ...srcs, '-lm', '-o', exe];
  const stamp = path.join(cacheDir, 'native.cmd');
  let fresh = false;
  try {
    const t = fs.statSync(exe).mtimeMs;
    fresh = deps.every((f) => fs.statSync(f).mtimeMs < t) && fs.readFileSync(stamp, 'utf8') === cmd.join(' ');
  } catch {}
  if (!fresh) {
    const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8' });
    if (r.error) throw new Error(`gcc: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`gcc failed: ${(r.stderr || '').trim().split('\n').slice(0, 6).join(' | ')}`);
    fs.writeFileSync(stamp, cmd.join(' '));
  }
  let gccVersion = '';
  try { gccVersion = spawnSync('gcc', ['-dumpfullversion'], { encoding: 'utf8' }).stdout.trim(); } catch {}
  let portable = true;
  try { portable = !/__SSE|__AVX|__x86_64__|immintrin|__ARM_NEON/.test(fs.readFileSync(path.join(ROOT, 'src/c/simd.h'), 'utf8')); } catch {}
  return { portable, exe, command: `gcc -O3 -march=native -std=c11 -Wall -I src/c bench/native.c src/c/{${srcs.slice(1).map((s) => path.basename(s)).join(',')}} -lm`, gccVersion };
}
function runNative(exe, n, variants, huge) {
  const args = [String(n), variants.join(','), String(POLICY.minTimeMs), String(POLICY.minReps), String(huge ? -1 : POLICY.warmMs)];
  const r = spawnSync(exe, args, { encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600_000 });
  if (r.error) throw r.error;
  const rows = (r.stdout || '').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  if (r.status !== 0 && rows.length < variants.length) throw new Error(`native exited ${r.status ?? r.signal}: ${(r.stderr || '').trim().slice(0, 300)}`);
  return rows;
}

// ---- attnlab builds ------------------------------------------------------------------------------
const BUILDS = [
  { contender: 'attnlab-simd', build: 'simd', simd: true },
  { contender: 'attnlab-relaxed', build: 'relaxed', simd: 'relaxed' },
  { contender: 'attnlab-scalar', build: 'scalar', simd: false },
];
async function loadBinding() {
  const file = path.join(ROOT, 'dist/attnlab.js');
  if (!fs.existsSync(file)) throw new Error('dist/attnlab.js not found (run `bash build.sh`)');
  return import(pathToFileURL(file).href);
}
/** The module's bytes, read once so every instance of a run is the same build even if dist/ is rebuilt meanwhile. */
function readWasm(b) {
  const bytes = fs.readFileSync(path.join(ROOT, 'dist', `attnlab-${b.build}.wasm`));
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex').slice(0, 16) };
}
/** A fresh instance of one build (init() with wasmBinary is never cached): dispose() the old one first. */
async function freshInstance(mod, b, old) {
  if (old) { try { old.dispose(); } catch {} }
  const lab = await mod.init({ simd: b.simd, wasmBinary: b.bytes });
  if (lab.build && lab.build !== b.build) { lab.dispose(); throw new Error(`init({ simd: ${JSON.stringify(b.simd)} }) loaded the ${lab.build} build`); }
  return lab;
}

// ==== main ===========================================================================================
async function main() {
  const t0 = now();
  const machine = machineInfo();
  log(`attnlab bench${QUICK ? ' --quick' : ''}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node} (V8 ${machine.v8}), one thread, d = dv = ${D}`);
  log(`sizes: ${SIZES.join(', ')}`);

  const results = {
    meta: {
      ...machine, quick: QUICK, sizes: SIZES, d: D, dv: DV, h: H, rank: RANK, mixture: MIXTURE,
      policy: { ...POLICY, huge_n: HUGE_N, prewarm_n: PREWARM_N, note: 'warm-up, then repeats until >= minReps and >= minTimeMs; 2-3 repeats when one call takes > 0.5 s; n > huge_n: no warm-up at that size, the instance is pre-warmed at prewarm_n' },
      flops: Object.fromEntries(Object.entries(FLOPS).map(([k, v]) => [k, v.text])),
      contenders: {}, notes: [],
    },
    peak: {}, rows: [], checks: [],
  };
  const notes = results.meta.notes;
  const addRow = (row) => {
    results.rows.push(row);
    if (row.status === 'ok') lastTime.set(`${row.contender} ${row.variant}`, { n: row.n, ms: row.median_ms });
    return row;
  };
  const na = (contender, variant, n, reason) => addRow({ contender, variant, n, d: D, dv: DV, status: 'n/a', reason });

  // -- peak (before; measured again after the run, the higher is used)
  const peakOpts = QUICK ? { reps: 3, targetMs: 40, quick: true } : {};
  const peakBefore = { simd128: measurePeak(peakOpts), relaxed: null };
  try { peakBefore.relaxed = measurePeak({ ...peakOpts, relaxed: true }); } catch (e) { peakBefore.relaxed = { error: e.message }; }
  log(`SIMD128 peak: ${peakBefore.simd128.gflops.toFixed(1)} GFLOP/s (mul+add chains); relaxed FMA: ${peakBefore.relaxed?.gflops ? peakBefore.relaxed.gflops.toFixed(1) + ' GFLOP/s' : 'n/a: ' + peakBefore.relaxed.error}`);

  // -- load contenders
  let mod = null, bindingError = null;
  if (BUILDS.some((b) => want(b.contender))) {
    try { mod = await loadBinding(); } catch (e) { bindingError = e.message; }
  }
  const builds = [];
  for (const b of BUILDS) {
    if (!want(b.contender)) continue;
    if (!mod) { builds.push({ ...b, error: bindingError }); continue; }
    try {
      const { bytes, sha256 } = readWasm(b);
      const lab = await freshInstance(mod, { ...b, bytes }, null);
      if (lab.variants?.length) VARIANTS = lab.variants.map((v) => ({ ...v }));
      let stamp = null;
      try { stamp = fs.readFileSync(path.join(ROOT, 'dist/.stamp'), 'utf8').trim(); } catch {}
      results.meta.contenders[b.contender] = { version: lab.version, build: lab.build, simd: lab.simd, wasm: `dist/attnlab-${b.build}.wasm`, sha256, built: stamp };
      builds.push({ ...b, bytes, lab });
    } catch (e) {
      builds.push({ ...b, error: `${e.code ? e.code + ': ' : ''}${e.message}` });
    }
  }
  for (const b of builds) log(`${b.contender}: ${b.error ? 'n/a: ' + b.error : 'loaded (' + b.lab.build + ')'}`);
  const ref = builds.find((b) => b.lab && b.contender === 'attnlab-simd') ?? builds.find((b) => b.lab);

  let native = null, nativeError = null;
  if (want('native')) {
    try { native = buildNative(); results.meta.contenders.native = { command: native.command, gcc: native.gccVersion, ...(native.portable ? { note: 'src/c/simd.h has no x86 branch, so natively the kernels use its portable 4-float struct, which gcc only partly auto-vectorises: slower than a native SIMD build would be' } : {}) }; log(`native: ${native.command}`); } catch (e) { nativeError = e.message; log(`native: n/a: ${e.message}`); }
  }
  let ort = null, ortError = null, tfj = null, tfjError = null;
  if (want('onnxruntime-web')) {
    try {
      const { loadOrt } = await import('./external.mjs');
      ort = await loadOrt({ d: D, dv: DV });
      results.meta.contenders['onnxruntime-web'] = { version: ort.version, backend: 'wasm', threads: 1, graph: 'Transpose(k) → MatMul(q, kT) → Mul(scale) → Softmax(axis=-1) → MatMul(·, v), opset 13, built by bench/onnx-graph.mjs' };
      log(`onnxruntime-web ${ort.version}: loaded`);
    } catch (e) { ortError = e.message; log(`onnxruntime-web: n/a: ${e.message}`); }
  }
  if (want('tfjs-wasm')) {
    try {
      const { loadTfjs } = await import('./external.mjs');
      tfj = await loadTfjs();
      results.meta.contenders['tfjs-wasm'] = { version: tfj.version, backend: 'wasm', simd: tfj.simd, threads: tfj.threads, op: 'tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v), dataSync()' };
      log(`@tensorflow/tfjs-backend-wasm ${tfj.version}: loaded (simd ${tfj.simd}, threads ${tfj.threads})`);
    } catch (e) { tfjError = e.message; log(`tfjs-wasm: n/a: ${e.message}`); }
  }

  const variantIds = VARIANTS.map((v) => v.id).filter((id) => !opts.only || opts.only.includes(id));
  if (opts.only) for (const id of opts.only) if (!VARIANTS.some((v) => v.id === id)) throw new Error(`--only: unknown variant ${id}`);
  const info = Object.fromEntries(VARIANTS.map((v) => [v.id, v]));
  const family = (id) => info[id].family ?? (LINEAR.includes(id) ? 'linear' : id === 'fixed' ? 'fixed' : 'softmax');
  const softmaxType = (id) => ['softmax', 'synthesizer'].includes(family(id));

  notes.push(...PLAN_NOTES);
  let streaming = null; // set from softmax's memory at the largest n <= 4096

  const prewarmInputs = makeInputs(PREWARM_N);
  let memAt4096 = null;

  for (const n of SIZES) {
    const inp = makeInputs(n);
    const dims = inp.dims;
    const huge = n > HUGE_N;
    log(`\n== n = ${n} (a = ${dims.a}, b = ${dims.b}, L = ${dims.L}, h = ${H}, rank = ${RANK}) at ${((now() - t0) / 1000).toFixed(0)} s`);
    for (const id of variantIds) {
      const flops = FLOPS[id]?.f({ ...dims }) ?? null;
      const base = { variant: id, n, d: D, dv: DV, flops };
      let insCache = null; // made on first use: a skipped variant allocates nothing (random's r is n×n)
      const getIns = () => (insCache ??= callInputs(info[id], inp));
      const opt = callOptions(id);
      let refOut = null;
      const skipReason = (contender) => planSkip(contender, id, n, softmaxType(id), streaming);
      for (const b of builds) {
        if (b.error) { na(b.contender, id, n, b.error); continue; }
        const why = skipReason(b.contender);
        if (why) { na(b.contender, id, n, why); continue; }
        try {
          gc();
          b.lab = await freshInstance(mod, b, b.lab);
          if (huge) {
            const pins = callInputs(info[id], prewarmInputs);
            const t = now();
            while (now() - t < 150) b.lab.attention(id, pins, opt);
          }
          const ins = getIns();
          const m = await measureRobust(() => b.lab.attention(id, ins, opt).output, { huge });
          const mem = b.lab.memoryBytes();
          const row = addRow({ contender: b.contender, ...base, status: 'ok', ...strip(m), gflops: flops ? flops / (m.median_ms * 1e6) : null, peak_memory_bytes: mem, memory_kind: 'wasm memory of a fresh instance after the run' });
          if (b === ref) { refOut = m.result; row.sum = sums(m.result).sum; row.sumabs = sums(m.result).sumabs; }
          else if (refOut) check(results, id, n, b.contender, ref.contender, maxAbsDiff(m.result, refOut));
          logRow(row);
          if (b === ref && id === 'softmax' && n === 4096) memAt4096 = mem;
        } catch (e) {
          na(b.contender, id, n, `${e.code ? e.code + ': ' : ''}${e.message}`);
          log(`  ${id} ${b.contender}: n/a: ${e.message}`);
        }
      }
      // plain JS
      if (want('plain-js') && (id === 'softmax' || id === 'linear')) {
        if (skipReason('plain-js')) na('plain-js', id, n, skipReason('plain-js'));
        else {
          gc();
          const f = id === 'softmax' ? softmaxAttention : linearAttention;
          const { q, k, v } = getIns();
          // no warm-up at n >= 4096 (>= 1024 with --quick): a call takes seconds and the function is
          // already optimised from the smaller sizes
          const m = await measureRobust(() => f(n, D, DV, q, k, v), { huge: n >= (QUICK ? 1024 : 4096) });
          const row = addRow({ contender: 'plain-js', ...base, status: 'ok', ...strip(m), gflops: flops / (m.median_ms * 1e6), peak_memory_bytes: (id === 'softmax' ? softmaxBytes : linearBytes)(n, D, DV), memory_kind: 'bytes allocated per call (output + scratch)' });
          if (refOut) check(results, id, n, 'plain-js', ref.contender, maxAbsDiff(m.result, refOut));
          logRow(row);
        }
      }
      // onnxruntime-web, tfjs
      if (id === 'softmax') {
        for (const [name, c, err] of [['onnxruntime-web', ort, ortError], ['tfjs-wasm', tfj, tfjError]]) {
          if (!want(name)) continue;
          if (!c) { na(name, id, n, err); continue; }
          if (skipReason(name)) { na(name, id, n, skipReason(name)); continue; }
          let p;
          try {
            gc();
            const ins = getIns();
            p = c.prepare(n, D, DV, ins.q, ins.k, ins.v);
            const m = await measureRobust(() => p.run(), { huge });
            const row = addRow({ contender: name, ...base, status: 'ok', ...strip(m), gflops: flops / (m.median_ms * 1e6), peak_memory_bytes: p.memoryBytes(), memory_kind: p.memoryBytes() == null ? 'not exposed' : 'wasm heap high-water mark (sizes run in increasing order)' });
            if (refOut) check(results, id, n, name, ref.contender, maxAbsDiff(m.result, refOut));
            logRow(row);
          } catch (e) {
            na(name, id, n, e.message);
            log(`  ${id} ${name}: n/a: ${e.message}`);
          } finally { p?.dispose(); }
        }
      }
      if (id === 'softmax' && n === 4096 && memAt4096 != null) {
        streaming = memAt4096 < n * n * 4;
        if (!streaming) notes.push(`softmax at n = 4096 held ${fmtBytes(memAt4096)} of wasm memory (>= n²·4 bytes): not streaming, so softmax-type variants are skipped above 4096.`);
      }
    }
    // native reference: one process per size
    if (want('native')) {
      const ids = variantIds.filter((id) => !planSkip('native', id, n, softmaxType(id), streaming));
      for (const id of variantIds) if (!ids.includes(id)) na('native', id, n, planSkip('native', id, n, softmaxType(id), streaming));
      if (!native) for (const id of ids) na('native', id, n, nativeError);
      else {
        try {
          let rows = runNative(native.exe, n, ids, huge);
          // rerun, once, the variants that shared the CPU (if quick), keeping the less contended row
          const again = rows.filter((r) => !r.error && r.cpu_wall_ratio < CONTENDED && r.median_ms * r.reps < 3000).map((r) => r.variant);
          if (again.length) {
            const second = new Map(runNative(native.exe, n, again, huge).map((r) => [r.variant, r]));
            rows = rows.map((r) => {
              const s2 = second.get(r.variant);
              return s2 && !s2.error && s2.cpu_wall_ratio > r.cpu_wall_ratio ? { ...s2, attempts: 2 } : { ...r, attempts: again.includes(r.variant) ? 2 : 1 };
            });
          }
          for (const r of rows) {
            const flops = FLOPS[r.variant]?.f({ ...dims }) ?? null;
            if (r.error) { na('native', r.variant, n, r.error); log(`  ${r.variant} native: n/a: ${r.error}`); continue; }
            const row = addRow({ contender: 'native', variant: r.variant, n, d: D, dv: DV, flops, status: 'ok', median_ms: r.median_ms, min_ms: r.min_ms, max_ms: r.max_ms, q1_ms: r.q1_ms, q3_ms: r.q3_ms, cpu_median_ms: r.cpu_median_ms, cpu_wall_ratio: r.cpu_wall_ratio, attempts: r.attempts ?? 1, reps: r.reps, batch: r.batch, gflops: flops ? flops / (r.median_ms * 1e6) : null, peak_memory_bytes: r.bytes, memory_kind: 'bytes allocated (inputs + output + workspace)' });
            logRow(row);
            const refRow = results.rows.find((x) => x.contender === ref?.contender && x.variant === r.variant && x.n === n && x.sum != null);
            if (refRow) {
              const rel = Math.max(Math.abs(r.sum - refRow.sum), Math.abs(r.sumabs - refRow.sumabs)) / Math.max(1, refRow.sumabs);
              check(results, r.variant, n, 'native', ref.contender, rel, 'relative difference of the output sums (sum y, sum |y|)');
            }
          }
        } catch (e) {
          for (const id of ids) if (!results.rows.some((x) => x.contender === 'native' && x.variant === id && x.n === n)) na('native', id, n, e.message);
          log(`  native: n/a: ${e.message}`);
        }
      }
    }
  }
  // -- interleaved measurements for the headline ratios
  results.paired = await pairedPhase({ builds, mod, ort, tfj, variantIds, info, peakCfg: peakBefore.simd128.best });

  for (const b of builds) { try { b.lab?.dispose(); } catch {} }
  await ort?.dispose();

  // measured again after the run (the higher is used); --quick skips this
  const peakAfter = QUICK ? peakBefore : { simd128: measurePeak(), relaxed: null };
  if (!QUICK) try { peakAfter.relaxed = measurePeak({ relaxed: true }); } catch (e) { peakAfter.relaxed = { error: e.message }; }
  const pick = (a, b) => (a?.gflops ?? 0) >= (b?.gflops ?? 0) ? a : b;
  results.peak = {
    simd128: { ...pick(peakBefore.simd128, peakAfter.simd128), before: peakBefore.simd128.gflops, after: peakAfter.simd128.gflops, kernel: 'independent f32x4.mul + f32x4.add chains (hand-assembled wasm, bench/peak.mjs); 2 flops per lane per mul+add' },
    relaxed: peakBefore.relaxed?.gflops ? { ...pick(peakBefore.relaxed, peakAfter.relaxed), before: peakBefore.relaxed.gflops, after: peakAfter.relaxed?.gflops, kernel: 'independent f32x4.relaxed_madd chains; 2 flops per lane' } : { error: peakBefore.relaxed?.error },
  };
  log(`\nSIMD128 peak: before ${peakBefore.simd128.gflops.toFixed(1)}, after ${peakAfter.simd128.gflops.toFixed(1)} GFLOP/s (the higher is used)`);
  results.meta.elapsed_s = (now() - t0) / 1000;
  results.meta.paired_note = 'The softmax targets (n = 1024, 4096) and the linear-family targets use interleaved round-robin timings (results.paired): every round calls each contender once, and the SIMD128 peak kernel, so load from other processes hits them alike. The tables are from the main pass.';
  results.meta.loadavg_end = os.loadavg()[0];

  const suffix = QUICK ? '-quick' : '';
  fs.mkdirSync(opts.out, { recursive: true });
  const files = writeReports(results, { dir: opts.out, suffix, flops: FLOPS });
  log(`\nwrote ${files.map((f) => path.relative(process.cwd(), f)).join(', ')} in ${results.meta.elapsed_s.toFixed(0)} s`);
  const bad = results.checks.filter((c) => !c.ok);
  if (bad.length) log(`WARNING: ${bad.length} correctness check(s) failed: ${bad.map((c) => `${c.variant} n=${c.n} ${c.contender}`).join('; ')}`);
}

/**
 * Round-robin timing: every round calls each entry once (batched to >= 1 ms when tiny), starting
 * from a different entry each round, so a burst of load from other processes hits all alike. Used
 * for the ratios the targets compare. entries: [{ key, fn }] (fn may be async).
 */
async function roundRobin(entries, rounds) {
  const batch = new Map();
  for (const e of entries) { // warm-up and batch size
    let r = e.fn();
    if (isThenable(r)) r = await r;
    const t = now();
    r = e.fn();
    if (isThenable(r)) r = await r;
    const ms = now() - t;
    batch.set(e.key, ms < 1 ? Math.min(1000, Math.ceil(1 / Math.max(ms, 1e-4))) : 1);
  }
  const samples = new Map(entries.map((e) => [e.key, []]));
  const cpuWall = new Map(entries.map((e) => [e.key, [0, 0]]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[(i + round) % entries.length];
      const k = batch.get(e.key);
      const c0 = process.cpuUsage();
      const t = now();
      for (let b = 0; b < k; b++) {
        const r = e.fn();
        if (isThenable(r)) await r;
      }
      const ms = now() - t;
      const c = process.cpuUsage(c0);
      samples.get(e.key).push(ms / k);
      const cw = cpuWall.get(e.key);
      cw[0] += (c.user + c.system) / 1000; cw[1] += ms;
    }
  }
  const out = {};
  for (const e of entries) {
    const xs = samples.get(e.key).sort((a, b) => a - b);
    const m = xs.length;
    out[e.key] = {
      median_ms: m % 2 ? xs[m >> 1] : (xs[m / 2 - 1] + xs[m / 2]) / 2,
      q1_ms: xs[Math.floor(0.25 * (m - 1))], q3_ms: xs[Math.ceil(0.75 * (m - 1))], min_ms: xs[0], max_ms: xs[m - 1],
      reps: m, batch: batch.get(e.key), cpu_wall_ratio: cpuWall.get(e.key)[0] / cpuWall.get(e.key)[1],
    };
  }
  return out;
}

async function pairedPhase({ builds, mod, ort, tfj, variantIds, info, peakCfg }) {
  const paired = [];
  // the SIMD128 peak kernel (the best shape of the first peak measurement) joins every round, so
  // the fraction of peak compares two numbers measured under the same conditions
  const { chains, unroll, split } = peakCfg ?? {};
  const peak = peakRunner(chains ? { chains, unroll, split } : undefined);
  const PEAK = 'peak-simd128';
  const peakEntry = { key: PEAK, fn: peak.fn };
  const peakGflops = (stats) => { if (stats[PEAK]) stats[PEAK].gflops = peak.flops / (stats[PEAK].median_ms * 1e6); };
  log(`\n== interleaved measurements for the targets at ${(performance.now() / 1000).toFixed(0)} s`);
  const simd = builds.find((b) => b.contender === 'attnlab-simd' && b.lab);
  // softmax: SIMD and relaxed builds, onnxruntime-web, tfjs at n = 1024 and 4096
  if (variantIds.includes('softmax')) {
    for (const n of [1024, 4096].filter((x) => SIZES.includes(x))) {
      const inp = makeInputs(n);
      const ins = callInputs(info.softmax, inp);
      const entries = [], cleanup = [];
      for (const b of builds.filter((x) => x.lab && x.contender !== 'attnlab-scalar')) {
        b.lab = await freshInstance(mod, b, b.lab);
        const lab = b.lab;
        entries.push({ key: b.contender, fn: () => lab.attention('softmax', ins, {}).output });
      }
      for (const [key, c] of [['onnxruntime-web', ort], ['tfjs-wasm', tfj]]) {
        if (!c || !want(key)) continue;
        try {
          const p = c.prepare(n, D, DV, ins.q, ins.k, ins.v);
          cleanup.push(p);
          entries.push({ key, fn: () => p.run() });
        } catch {}
      }
      if (entries.length < 2) continue;
      gc();
      const rounds = n >= 4096 ? (QUICK ? 3 : 5) : (QUICK ? 7 : 15);
      const stats = await roundRobin([...entries, peakEntry], rounds);
      for (const p of cleanup) p.dispose();
      const flops = FLOPS.softmax.f(dimsFor(n));
      for (const st of Object.values(stats)) st.gflops = flops / (st.median_ms * 1e6);
      peakGflops(stats);
      paired.push({ variant: 'softmax', n, rounds, entries: stats });
      log(`  interleaved softmax n=${n}, ${rounds} rounds: ${Object.entries(stats).map(([k, v]) => `${k} ${fmtMs(v.median_ms)} ms`).join(', ')} (peak ${stats[PEAK].gflops.toFixed(1)} GFLOP/s)`);
    }
  }
  // linear family: the SIMD build at n = 1024 and 16384, alternating
  if (simd && SIZES.includes(1024) && SIZES.includes(16384)) {
    const small = makeInputs(1024), big = makeInputs(16384);
    for (const id of LINEAR.filter((v) => variantIds.includes(v))) {
      simd.lab = await freshInstance(mod, simd, simd.lab);
      const lab = simd.lab;
      const a = callInputs(info[id], small), b = callInputs(info[id], big);
      const rounds = QUICK ? 5 : 9;
      const stats = await roundRobin([
        { key: '1024', fn: () => lab.attention(id, a, {}).output },
        { key: '16384', fn: () => lab.attention(id, b, {}).output },
        peakEntry,
      ], rounds);
      for (const [k, st] of Object.entries(stats)) if (k !== PEAK) st.gflops = FLOPS[id].f(dimsFor(+k)) / (st.median_ms * 1e6);
      peakGflops(stats);
      paired.push({ variant: id, contender: 'attnlab-simd', rounds, entries: stats });
      log(`  interleaved ${id} (SIMD build), ${rounds} rounds: n=1024 ${fmtMs(stats['1024'].median_ms)} ms, n=16384 ${fmtMs(stats['16384'].median_ms)} ms (peak ${stats[PEAK].gflops.toFixed(1)} GFLOP/s)`);
    }
  }
  return paired;
}

function strip(m) {
  const { result, ...rest } = m;
  return rest;
}
function check(results, variant, n, contender, against, diff, kind = 'max |diff| of the outputs') {
  const ok = diff <= TOL;
  results.checks.push({ variant, n, contender, against, diff, kind, tol: TOL, ok });
  log(`  check ${variant} n=${n} ${contender} vs ${against}: ${kind === 'max |diff| of the outputs' ? 'max |diff|' : 'rel. diff of sums'} ${diff.toExponential(2)} ${ok ? 'ok' : 'FAIL (> ' + TOL + ')'}`);
}
function logRow(r) {
  const spread = r.q3_ms != null ? ` (IQR ${fmtMs(r.q1_ms)}–${fmtMs(r.q3_ms)}, ${r.reps}×${r.batch})` : '';
  const busy = r.cpu_wall_ratio != null && r.cpu_wall_ratio < CONTENDED ? `  [cpu/wall ${r.cpu_wall_ratio.toFixed(2)}: contended]` : '';
  log(`  ${r.variant.padEnd(17)} ${r.contender.padEnd(16)} ${fmtMs(r.median_ms).padStart(8)} ms${spread}  ${r.gflops != null ? r.gflops.toFixed(2) + ' GFLOP/s' : ''}  mem ${fmtBytes(r.peak_memory_bytes)}${busy}`);
}

main().catch((e) => {
  console.error(e?.stack ?? e);
  process.exit(1);
});
