// The command line of the benchmark: flags, the configuration they select, the re-spawn with the
// Node flags the relaxed build needs, and a description of the machine for the results.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseFlags } from 'node:util';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..');
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

export const USAGE = `attnlab benchmark: \`npm run bench\` (node bench/run.mjs after the build).

  node bench/run.mjs                    full run: n in {64, 256, 1024, 4096, 16384}, a few minutes
  node bench/run.mjs --quick            n in {64, 256, 1024}, fewer repeats, under a minute;
                                        writes results-quick.* so the recorded full run stays
  node bench/run.mjs --only softmax,linear      only these variants
  node bench/run.mjs --out DIR          where results*.json / .md / scaling*.svg go (default bench/)
  node bench/run.mjs --sizes 64,256     other sizes (development)
  node bench/run.mjs --skip native,onnxruntime-web,...   leave contenders out (development);
                                        also backward (the backward pass), tfjs-wasm-grad,
                                        training (the training part), recurrent, threads and
                                        throughput, step-cost
  node bench/run.mjs --baseline DIR     the step-cost part also runs DIR (a dist/ of another
                                        commit) in its rounds, and gives the ratios
  node bench/run.mjs --training-only    measure only the training part and put it into the
                                        recorded results (results.json / results.md of --out)
  node bench/run.mjs --threads-only     the same for the threads part (bench/threads.mjs)
  node bench/run.mjs --throughput-only  the same for training throughput against seqLen
                                        (bench/throughput.mjs)

One thread, d = dv = 64. Contenders: the attnlab builds (scalar, SIMD128, relaxed-SIMD), a plain-JS
implementation (softmax, linear), the same C compiled natively with gcc -O3 -march=native (a
reference, not a competitor), onnxruntime-web and @tensorflow/tfjs-backend-wasm (softmax only), and
a micro-kernel that measures this machine's WebAssembly SIMD128 peak. Then the backward pass:
lab.attentionGrad against lab.attention (SIMD and relaxed builds, n = 1024 and 4096; 256 and 1024
when --quick), the tfjs-wasm gradient of softmax attention, and softmax's backward memory at
n = 32768 (8192 when --quick). Then training: lab.model's training step against the same model
trained with tfjs-wasm (reference shape dModel 96, 4 layers, seqLen 64, batch 16), every variant at
that shape and at each task's defaults, and generation ms/token against position. Then the
recurrent family against linear attention, forward and backward, interleaved (bench/recurrent.mjs,
bench/recurrent.md). Then threads
(bench/threads.mjs) and training tokens/s of every variant at seqLen 64 … 2048, one thread and all
(bench/throughput.mjs), each thread count in a process of its own; and the cost of a step (trainStep,
evaluate, a token of generate) of every experiment variant at the recall, copy and text defaults,
one thread and every core (bench/step-cost.mjs). See bench/README.md.`;

/**
 * glibc's allocator settings for every benchmark process. Each call returns fresh arrays (4 MiB of
 * output at n = 16384), and by default glibc hands such blocks back to the kernel when they are
 * freed, so the next call's array is new pages, each a page fault. On the virtual machines these
 * runs were recorded on a fault costs microseconds: measured, linear at n = 16384 took 23.2 ms a
 * call that way and 10.2 ms with these settings, which keep freed memory in the process (what a
 * long-running program's warm heap does anyway). Every contender runs under them alike; the
 * variables already in the environment win.
 */
export const ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: '4294967296', MALLOC_TRIM_THRESHOLD_: '4294967296' };

/**
 * Node 20 runs the relaxed build only with --experimental-wasm-relaxed-simd: re-runs `script` in a
 * child with that flag, --expose-gc and ALLOCATOR_ENV (without the flags if this Node rejects
 * them) and returns its exit status; returns null when this process is that child already, or
 * has the allocator settings and can run the relaxed build.
 */
export function respawnWithFlags(script, relaxedSupported) {
  const allocatorSet = Object.keys(ALLOCATOR_ENV).every((k) => process.env[k] != null);
  if (process.env.ATTNLAB_BENCH_CHILD || (allocatorSet && (relaxedSupported() || process.execArgv.includes(RELAXED_FLAG)))) return null;
  const env = { ...ALLOCATOR_ENV, ...process.env, ATTNLAB_BENCH_CHILD: '1' };
  const run = (flags) => spawnSync(process.execPath, [...process.execArgv, ...flags, script, ...process.argv.slice(2)], { stdio: 'inherit', env });
  let r = run([RELAXED_FLAG, '--expose-gc']);
  if (r.status === 9) r = run([]); // "bad option": this Node does not know the flag (relaxed is then n/a)
  return r.status ?? 1;
}

/** The flags of USAGE (--flag value or --flag=value; a list is comma-separated, --skip may repeat). */
export function parseArgs(argv) {
  let values;
  try {
    ({ values } = parseFlags({
      args: argv,
      options: {
        quick: { type: 'boolean', default: false }, 'training-only': { type: 'boolean', default: false },
        'threads-only': { type: 'boolean', default: false }, 'throughput-only': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
        only: { type: 'string' }, out: { type: 'string' }, baseline: { type: 'string' }, sizes: { type: 'string' }, skip: { type: 'string', multiple: true },
      },
    }));
  } catch (err) {
    throw new Error(`${err.message} (see --help)`);
  }
  const list = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);
  return {
    quick: values.quick, trainingOnly: values['training-only'], threadsOnly: values['threads-only'], throughputOnly: values['throughput-only'], help: values.help,
    only: values.only != null ? list(values.only) : null,
    out: values.out != null ? path.resolve(process.cwd(), values.out) : BENCH_DIR,
    sizes: values.sizes != null ? list(values.sizes).map(Number) : null,
    baseline: values.baseline != null ? path.resolve(process.cwd(), values.baseline) : null,
    skip: new Set((values.skip ?? []).flatMap(list)),
  };
}

/**
 * The run's configuration from the flags: sizes, the measuring policy (policy.quick also makes
 * measureRobust retry less) and want(contender).
 */
export function configure(o) {
  const quick = o.quick;
  return {
    quick,
    only: o.only,
    out: o.out,
    baseline: o.baseline,
    suffix: quick ? '-quick' : '',
    sizes: o.sizes ?? (quick ? [64, 256, 1024] : [64, 256, 1024, 4096, 16384]),
    policy: quick ? { minTimeMs: 100, minReps: 3, warmMs: 30, quick } : { minTimeMs: 300, minReps: 5, warmMs: 100, quick },
    want: (contender) => !o.skip.has(contender),
  };
}

function cpuInfo() {
  let cpu = os.cpus()[0]?.model ?? 'unknown', mhz = null;
  try {
    const text = fs.readFileSync('/proc/cpuinfo', 'utf8');
    const line = (key) => text.split('\n').find((l) => l.startsWith(key))?.split(':').slice(1).join(':').trim();
    cpu = line('model name') ?? cpu;
    mhz = line('cpu MHz') != null ? Number(line('cpu MHz')) : null;
  } catch {}
  return { cpu, mhz };
}

/** The commit the run measured, and the source files (src/, build.sh) that differ from it. */
export function gitInfo() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = git('rev-parse', '--short=12', 'HEAD');
  if (head.status !== 0) return { commit: null, uncommitted: [] };
  const dirty = git('status', '--porcelain', '--', 'src', 'build.sh').stdout.split('\n').filter(Boolean).map((l) => l.slice(3));
  return { commit: head.stdout.trim(), uncommitted: dirty };
}

/** "abc123def456" or "abc123def456 (with uncommitted changes in src/c/x.c)", for a report's header. */
export function commitText({ commit, uncommitted } = gitInfo()) {
  if (!commit) return 'an unknown commit';
  return commit.slice(0, 12) + (uncommitted?.length ? ` (with uncommitted changes in ${uncommitted.join(', ')})` : '');
}

/** The machine, the Node and the commit the run uses, for results.json's meta. */
export function machineInfo() {
  const { cpu, mhz } = cpuInfo();
  return {
    ...gitInfo(),
    cpu, cpu_mhz: mhz, cores: os.cpus().length, memory_bytes: os.totalmem(), platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version, v8: process.versions.v8, loadavg_start: os.loadavg()[0], node_flags: process.execArgv, date: new Date().toISOString(),
    allocator_env: Object.fromEntries(Object.keys(ALLOCATOR_ENV).map((k) => [k, process.env[k] ?? null])),
  };
}
