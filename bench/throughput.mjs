// Training throughput against sequence length: tokens per second of model.trainStep for every
// variant at seqLen 64 … 2048 with 4,096 tokens a step, on one thread and on every core, with the
// fraction of the SIMD128 peak. The shape, lengths and batch are the study's cost pass
// (src/js/experiment.js: COST_MODEL, COST_SEQLENS, COST_TOKENS, costBatch), so the study's cost
// plot (experiments/results.md) has a recorded source here. Part of `npm run bench`; alone:
//   node --experimental-wasm-relaxed-simd bench/throughput.mjs [--quick]
// Writes bench/throughput.md and bench/throughput.json (--quick: throughput-quick.*).
//
// Method. The SIMD build (the study's), causal, seed 1. Each thread count runs in a child process
// of its own (a pool that spins between calls would steal the cores of another), the counts one
// after the other, twice in alternating order; a cell's figure is the lower of the two passes'
// medians. In a child, every (variant, length) model takes two warm-up steps, then its steps and
// the SIMD128 peak kernel (bench/peak.mjs) run in the same interleaved rounds, so the fraction of
// peak divides two numbers measured side by side. On T threads the peak is T times the one-thread
// kernel's (each core runs its own SIMD unit), so the fraction says how much of the machine a step
// uses. Flops: bench/training.mjs stepFlops (matrix products only).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ALLOCATOR_ENV, commitText } from './cli.mjs';
import { writeRecorded } from './record.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BINDING = new URL('../dist/attnlab.js', import.meta.url).href;
const LR = 1e-4; // small: the weights barely move, and a step's cost does not depend on them
const QUICK = { variants: ['softmax', 'linear'], seqLens: [64, 512, 2048] };

const fmtK = (x) => `${(x / 1000).toFixed(1)} k`;

/** The measurements of one thread count, in this (child) process: JSON on stdout. */
async function child(threads, quick) {
  const { init } = await import(BINDING);
  const experiment = await import('../src/js/experiment.js');
  const { experimentVariants, modelConfig } = experiment;
  const { roundRobin } = await import('./measure.mjs');
  const { peakRunner } = await import('./peak.mjs');
  const { stepFlops } = await import('./training.mjs');
  const lab = await init({ simd: true, threads, fresh: true });
  const peak = peakRunner();
  const { tokens, targets } = experiment.costBatch();
  const entries = experimentVariants(lab.variants).filter((v) => v.name === v.variant && (!quick || QUICK.variants.includes(v.name)));
  const seqLens = quick ? QUICK.seqLens : experiment.COST_SEQLENS;
  const rows = [];
  for (const v of entries) {
    const info = lab.variants.find((x) => x.id === v.variant);
    const family = info?.family ?? null;
    for (const seqLen of seqLens) {
      const shape = { ...experiment.COST_MODEL, vocab: experiment.COST_VOCAB, seqLen, batch: experiment.COST_TOKENS / seqLen, causal: true };
      let model;
      try {
        model = lab.model(modelConfig({ vocab: shape.vocab, seqLen, causal: true }, v, experiment.COST_MODEL, 1));
        for (let i = 0; i < 2; i++) model.trainStep(tokens, targets, { lr: LR });
        const st = await roundRobin([{ key: 'step', fn: () => model.trainStep(tokens, targets, { lr: LR }), warmed: true }, { key: 'peak', fn: peak.fn }], quick ? 3 : 5);
        const ms = st.step.median_ms, peakGflops = peak.flops / (st.peak.median_ms * 1e6);
        const flops = stepFlops(shape, v.variant, v.options ?? {}, info);
        rows.push({ variant: v.name, family, seqLen, batch: shape.batch, status: 'ok', ms, tokens_per_s: experiment.COST_TOKENS / (ms / 1000),
          flops, gflops: flops / (ms * 1e6), peak_gflops_one_thread: peakGflops, fraction_of_peak: flops / (ms * 1e6) / (peakGflops * lab.threads),
          cpu_wall_ratio: st.step.cpu_wall_ratio });
      } catch (e) {
        rows.push({ variant: v.name, family, seqLen, status: 'n/a', reason: `${e.code ? e.code + ': ' : ''}${e.message}` });
      } finally { model?.dispose(); }
      process.stderr.write(`  ${threads} thread(s) ${v.name} seqLen ${seqLen}: ${rows.at(-1).status === 'ok' ? `${fmtK(rows.at(-1).tokens_per_s)} tokens/s` : rows.at(-1).reason}\n`);
    }
  }
  const out = { threads: lab.threads, build: lab.build, rows };
  lab.dispose();
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

/** Markdown of the results (also used to re-render a recorded throughput.json). */
export function throughputMarkdown(r) {
  const counts = r.runs.map((x) => x.threads);
  const variants = [...new Set(r.runs.flatMap((x) => x.rows.map((row) => row.variant)))];
  const cell = (t, v, n) => r.runs.find((x) => x.threads === t)?.rows.find((row) => row.variant === v && row.seqLen === n);
  const table = (title, show) => [
    `### ${title}`, '',
    `| variant | threads | ${r.seqLens.map((n) => `seqLen ${n}`).join(' | ')} |`, `|---|---:|${r.seqLens.map(() => '---:').join('|')}|`,
    ...variants.flatMap((v) => counts.map((t) => `| ${v} | ${t} | ${r.seqLens.map((n) => { const c = cell(t, v, n); return c?.status === 'ok' ? show(c) : c ? 'n/a' : '–'; }).join(' | ')} |`)), '',
  ];
  const speedups = variants.map((v) => {
    const xs = r.seqLens.map((n) => { const a = cell(1, v, n), b = cell(counts.at(-1), v, n); return a?.status === 'ok' && b?.status === 'ok' ? `${(a.ms / b.ms).toFixed(2)}×` : '–'; });
    return `| ${v} | ${xs.join(' | ')} |`;
  });
  return [
    '# Training throughput against sequence length', '',
    `Written by \`bench/throughput.mjs\` (part of \`npm run bench\`) on ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}, commit ${r.machine.commit}${r.quick ? ', --quick' : ''}, ${r.date}; load average ${r.machine.loadavg_start.map((x) => x.toFixed(2)).join(', ')} at the start and ${r.machine.loadavg_end.map((x) => x.toFixed(2)).join(', ')} at the end${r.machine.loadavg_start[0] > 0.5 ? ' (other processes were running: absolute figures are noisy)' : ''}. The run took ${r.elapsed_s.toFixed(0)} s.`, '',
    `model.trainStep on the ${r.build} build: dModel ${r.model.dModel}, ${r.model.heads} heads, ${r.model.layers} layers, dFF ${r.model.dFF}, vocab ${r.vocab}, causal, ${r.tokens} tokens a step (batch = ${r.tokens} / seqLen), AdamW; the study's cost shape (src/js/experiment.js). ` +
      'Each thread count in a child process of its own, two passes in alternating order; a cell is the lower of the two medians (5 interleaved rounds each). ' +
      'Fraction of peak: the step\'s matrix-product flops (bench/training.mjs stepFlops) per second over the SIMD128 peak kernel measured in the same rounds, times the thread count. ' +
      `glibc allocator: ${Object.entries(r.allocator_env ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || 'its defaults'} (bench/cli.mjs ALLOCATOR_ENV).` +
      (r.missing?.length ? ` **Not measured: ${r.missing.join(', ')} thread(s) (the child failed; the log says why).**` : ''), '',
    ...table('Tokens per second', (c) => fmtK(c.tokens_per_s)),
    ...table('Fraction of the SIMD128 peak', (c) => `${(100 * c.fraction_of_peak).toFixed(0)} %`),
    ...table('ms per step', (c) => c.ms.toFixed(c.ms >= 100 ? 0 : 1)),
    `### Speed-up from 1 to ${counts.at(-1)} threads`, '',
    `| variant | ${r.seqLens.map((n) => `seqLen ${n}`).join(' | ')} |`, `|---|${r.seqLens.map(() => '---:').join('|')}|`, ...speedups, '',
  ].join('\n');
}

/** The whole part: a child per thread count, twice; writes throughput(.quick).md/.json. */
export async function throughputPhase({ quick = false, dir = HERE, log = console.log, machine = null } = {}) {
  const t0 = performance.now();
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const counts = [...new Set([1, Math.min(cores, 8)])];
  const experiment = await import('../src/js/experiment.js');
  log(`\nthroughput: training tokens/s against seqLen; thread counts ${counts.join(', ')} (a child process each, two passes)`);
  const loadavg_start = os.loadavg();
  const got = new Map();
  for (const pass of [0, 1]) {
    for (const t of pass ? counts.slice().reverse() : counts) {
      // the SIMD build needs no Node flag; the allocator settings as the rest of the benchmark (cli.mjs)
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(t), ...(quick ? ['--quick'] : [])],
        { encoding: 'utf8', timeout: 1_800_000, maxBuffer: 1 << 24, env: { ...ALLOCATOR_ENV, ...process.env } });
      const line = (r.stdout ?? '').trim().split('\n').pop();
      if (r.status !== 0 || !line?.startsWith('{')) { log(`throughput ${t} thread(s): failed (${r.status ?? r.error?.message}): ${(r.stderr ?? '').slice(-800)}`); continue; }
      const x = JSON.parse(line);
      const prev = got.get(t);
      if (prev) { // the lower median of the two passes, cell by cell
        for (const row of x.rows) {
          const i = prev.rows.findIndex((p) => p.variant === row.variant && p.seqLen === row.seqLen);
          if (i < 0 || prev.rows[i].status !== 'ok' || (row.status === 'ok' && row.ms < prev.rows[i].ms)) prev.rows.splice(i < 0 ? prev.rows.length : i, i < 0 ? 0 : 1, row);
        }
      } else got.set(t, x);
      log(`throughput ${t} thread(s) (the module runs ${x.threads}): pass ${pass + 1} done`);
    }
  }
  const m = machine ?? {};
  const results = {
    date: new Date().toISOString(), quick, elapsed_s: (performance.now() - t0) / 1000,
    machine: { cpu: m.cpu ?? os.cpus()[0]?.model ?? 'an unknown CPU', cores, node: process.versions.node, loadavg_start, loadavg_end: os.loadavg(),
      commit: commitText(m.commit ? m : undefined) },
    build: 'simd', model: experiment.COST_MODEL, vocab: experiment.COST_VOCAB, tokens: experiment.COST_TOKENS, seqLens: quick ? QUICK.seqLens : experiment.COST_SEQLENS,
    runs: counts.map((t) => got.get(t)).filter(Boolean),
    missing: counts.filter((t) => !got.has(t)),
    allocator_env: Object.fromEntries(Object.keys(ALLOCATOR_ENV).map((k) => [k, process.env[k] ?? ALLOCATOR_ENV[k]])),
  };
  if (!results.runs.length) { // nothing measured: keep the recorded files
    log('throughput: every child failed; nothing written');
    return results;
  }
  const md = throughputMarkdown(results);
  writeRecorded(dir, 'throughput', quick, md, results);
  log(md);
  return results;
}

// node bench/throughput.mjs [--quick]; the measuring children: --child THREADS [--quick]
const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain) {
  const { values, positionals } = parseArgs({ options: { child: { type: 'string' }, quick: { type: 'boolean', default: false } }, allowPositionals: true });
  const run = values.child != null ? child(Number(values.child), values.quick) : throughputPhase({ quick: values.quick });
  run.catch((e) => { console.error(e?.stack ?? e); process.exit(1); });
}
