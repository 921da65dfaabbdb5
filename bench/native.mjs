// Contender native: bench/native.c and the C core compiled with gcc -O3 -march=native (a reference,
// not a competitor), one process per size. It generates the same inputs (src/js/prng.js's streams)
// and prints the output sums, which are checked against the SIMD build's.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, ROOT } from './cli.mjs';
import { CONTENDED } from './measure.mjs';

const SRC = path.join(ROOT, 'src/c');
/** Sources that only the WebAssembly builds link: freestanding.c is the relaxed build's libc stand-in. */
const WASM_ONLY = new Set(['freestanding.c']);
const FLAGS = ['-O3', '-march=native', '-std=c11', '-Wall'];

/** The C core: every src/c/*.c a hosted build links. */
const coreSources = () => fs.readdirSync(SRC).filter((f) => f.endsWith('.c') && !WASM_ONLY.has(f)).sort();

function isFresh(exe, stamp, deps, cmd) {
  try {
    const t = fs.statSync(exe).mtimeMs;
    return deps.every((f) => fs.statSync(f).mtimeMs < t) && fs.readFileSync(stamp, 'utf8') === cmd.join(' ');
  } catch { return false; }
}

/** Compiles (when a source changed) into bench/.cache/native. */
export function buildNative() {
  const cacheDir = path.join(BENCH_DIR, '.cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  const exe = path.join(cacheDir, 'native'), stamp = path.join(cacheDir, 'native.cmd');
  const core = coreSources();
  const srcs = [path.join(BENCH_DIR, 'native.c'), ...core.map((f) => path.join(SRC, f))];
  const deps = [...srcs, ...fs.readdirSync(SRC).map((f) => path.join(SRC, f))];
  const cmd = ['gcc', ...FLAGS, '-I', SRC, ...srcs, '-lm', '-o', exe];
  if (!isFresh(exe, stamp, deps, cmd)) {
    const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8' });
    if (r.error) throw new Error(`gcc: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`gcc failed: ${(r.stderr || '').trim().split('\n').slice(0, 6).join(' | ')}`);
    fs.writeFileSync(stamp, cmd.join(' '));
  }
  let gccVersion = '';
  try { gccVersion = spawnSync('gcc', ['-dumpfullversion'], { encoding: 'utf8' }).stdout.trim(); } catch {}
  return { exe, command: `gcc ${FLAGS.join(' ')} -I src/c bench/native.c src/c/{${core.join(',')}} -lm`, gccVersion };
}

/** One process: every job of one size. Returns native.c's JSON lines. */
function runOnce(exe, jobs, policy) {
  const { dims, seed, huge } = jobs[0];
  const components = jobs.map((j) => j.options.components && j.options.components.map((c, i) => `${c}:${j.options.alpha[i]}`).join(',')).find(Boolean);
  const args = [String(seed), Object.entries(dims).map(([k, v]) => `${k}=${v}`).join(','), jobs.map((j) => j.variant.id).join(','),
    String(policy.minTimeMs), String(policy.minReps), String(huge ? -1 : policy.warmMs), ...(components ? [components] : [])];
  const r = spawnSync(exe, args, { encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600_000 });
  if (r.error) throw r.error;
  const rows = (r.stdout || '').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  if (r.status !== 0 && rows.length < jobs.length) throw new Error(`native exited ${r.status ?? r.signal}: ${(r.stderr || '').trim().slice(0, 300)}`);
  return rows;
}

/** runOnce, then once more for the variants that shared the CPU, keeping the less contended row. */
function runRobust(exe, jobs, policy) {
  const rows = runOnce(exe, jobs, policy);
  const again = rows.filter((r) => !r.error && r.cpu_wall_ratio < CONTENDED && r.median_ms * r.reps < 3000).map((r) => r.variant);
  if (!again.length) return rows.map((r) => ({ ...r, attempts: 1 }));
  const second = new Map(runOnce(exe, jobs.filter((j) => again.includes(j.variant.id)), policy).map((r) => [r.variant, r]));
  return rows.map((r) => {
    const s2 = second.get(r.variant);
    return s2 && !s2.error && s2.cpu_wall_ratio > r.cpu_wall_ratio ? { ...s2, attempts: 2 } : { ...r, attempts: again.includes(r.variant) ? 2 : 1 };
  });
}

/** The native contender; it measures a whole size at once (measureSize). */
export function native({ policy }) {
  const c = { name: 'native', error: null, meta: null, banner: null, batch: true, exe: null };
  try {
    const b = buildNative();
    c.exe = b.exe;
    c.meta = { command: b.command, gcc: b.gccVersion };
    c.banner = `native: ${b.command}`;
  } catch (e) { c.error = e.message; }
  c.supports = () => true;
  /** jobs of one size -> [{ job, m } | { job, error }] */
  c.measureSize = (jobs) => {
    const rows = new Map(runRobust(c.exe, jobs, policy).map((r) => [r.variant, r]));
    return jobs.map((job) => {
      const r = rows.get(job.variant.id);
      if (!r) return { job, error: 'no output from native' };
      if (r.error) return { job, error: r.error };
      const { variant, n, error, workspace_bytes, bytes, ...m } = r;
      return { job, m: { ...m, memory: bytes, memoryKind: 'bytes allocated (inputs + output + workspace)' } };
    });
  };
  c.dispose = () => {};
  return c;
}
