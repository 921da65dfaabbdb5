#!/usr/bin/env node
// attnlab benchmark: `npm run bench` (node bench/run.mjs after the build); `--help` for the flags.
// This file only puts the parts together (bench/README.md describes them):
//   cli.mjs      flags, configuration, re-spawn with --experimental-wasm-relaxed-simd, machine
//   plan.mjs     variants (lab.variants), dims, inputs, options, flop counts, what is skipped
//   measure.mjs  warm-up, repeats, median / IQR, interleaved rounds, output comparisons
//   record.mjs   rows, correctness checks against the SIMD build, log lines
//   contenders   attnlab.mjs (the three builds), plain-js.mjs, native.mjs (+ native.c),
//                onnxruntime-web.mjs and tfjs-wasm.mjs (through external.mjs), peak.mjs
//   paired.mjs   the interleaved pass behind the headline ratios
//   backward.mjs the backward pass (attentionGrad against attention; tfjs-grad.mjs: tfjs's gradient)
//   step-cost.mjs a step's cost at the experiments' small shapes (bench/step-cost.md)
//   training.mjs model.trainStep against tfjs-wasm (tfjs-train.mjs), every variant, generation
//   report.mjs   results.json, results.md (targets.mjs) and scaling.svg (svg.mjs)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBuilds, REFERENCE } from './attnlab.mjs';
import { backwardPhase } from './backward.mjs';
import { configure, machineInfo, parseArgs, respawnWithFlags, USAGE } from './cli.mjs';
import { native } from './native.mjs';
import { onnxruntimeWeb } from './onnxruntime-web.mjs';
import { pairedPhase } from './paired.mjs';
import { peaksAfter, peaksBefore, relaxedSupported } from './peak.mjs';
import { callInputs, callOptions, D, DV, dimsFor, flops, H, HUGE_N, makeInputs, Plan, PREWARM_N, RANK, selectVariants, BENCH_OPTIONS } from './plan.mjs';
import { plainJs } from './plain-js.mjs';
import { log, Record } from './record.mjs';
import { recurrentPhase } from './recurrent.mjs';
import { writeReports } from './report.mjs';
import { tfjsWasm } from './tfjs-wasm.mjs';
import { threadsPhase } from './threads.mjs';
import { stepCostPhase, stepCostThreadsPhase } from './step-cost.mjs';
import { throughputPhase } from './throughput.mjs';
import { trainingPhase } from './training.mjs';

const errorText = (e) => `${e.code ? e.code + ': ' : ''}${e.message}`;

/** Every contender `cfg.want`s, loaded, in the order of the tables; the SIMD build (the reference) first. */
async function loadContenders(cfg) {
  const { builds, variants } = await loadBuilds(cfg);
  for (const b of builds) log(`${b.name}: ${b.error ? 'n/a: ' + b.error : 'loaded (' + b.lab.build + ')'}`);
  const others = [];
  if (cfg.want('plain-js')) others.push(plainJs({ policy: cfg.policy, hugeN: cfg.quick ? 1024 : 4096 }));
  if (cfg.want('native')) others.push(native(cfg));
  const externals = [];
  for (const [name, make] of [['onnxruntime-web', onnxruntimeWeb], ['tfjs-wasm', tfjsWasm]]) {
    if (cfg.want(name)) externals.push(await make({ policy: cfg.policy, dims: { d: D, dv: DV } }).init());
  }
  for (const c of [...others, ...externals]) log(c.error ? `${c.name}: n/a: ${c.error}` : c.banner ?? `${c.name}: ready`);
  return { builds, externals, registry: variants, all: [...builds, ...others, ...externals] };
}

function resultsMeta(cfg, machine, variants, contenders) {
  const at = dimsFor(1024);
  return {
    ...machine, quick: cfg.quick, sizes: cfg.sizes, d: D, dv: DV, h: H, rank: RANK, mixture: BENCH_OPTIONS.mixture,
    policy: { minTimeMs: cfg.policy.minTimeMs, minReps: cfg.policy.minReps, warmMs: cfg.policy.warmMs, huge_n: HUGE_N, prewarm_n: PREWARM_N, note: 'warm-up, then repeats until >= minReps and >= minTimeMs; 2-3 repeats when one call takes > 0.5 s; n > huge_n: no warm-up at that size, the instance is pre-warmed at prewarm_n' },
    variants: variants.map((v) => ({ id: v.id, family: v.family, inputs: v.inputs.map((i) => i.name) })),
    flops: Object.fromEntries(variants.map((v) => [v.id, flops(v, at).formula])),
    contenders: Object.fromEntries(contenders.filter((c) => c.meta).map((c) => [c.name, c.meta])),
    notes: [],
  };
}

/** One measurement: a variant at one size; inputs made on first use (a skipped job allocates nothing). */
function makeJob(variant, inp, ctx) {
  let ins = null;
  const { dims } = inp;
  return {
    variant, n: dims.n, dims, seed: inp.seed, huge: dims.n > HUGE_N, options: callOptions(variant), flops: flops(variant, dims).flops,
    inputs: () => (ins ??= callInputs(variant, ctx.registry, inp)),
    prewarmInputs: () => callInputs(variant, ctx.registry, ctx.prewarm),
  };
}

async function measureOne(c, job, { plan, record }) {
  if (c.error) return record.na(c.name, job.variant.id, job.n, c.error);
  const why = plan.skip(c.name, job.variant, job.n);
  if (why) return record.na(c.name, job.variant.id, job.n, why);
  try {
    globalThis.gc?.();
    record.ok(c.name, job, await c.measure(job));
  } catch (e) {
    record.na(c.name, job.variant.id, job.n, errorText(e));
    log(`  ${job.variant.id} ${c.name}: n/a: ${e.message}`);
  }
}

/** A contender that measures a whole size in one go (native). */
function measureBatch(c, jobs, { plan, record }) {
  const run = [];
  for (const job of jobs) {
    const why = c.error ?? plan.skip(c.name, job.variant, job.n);
    if (why) record.na(c.name, job.variant.id, job.n, why);
    else run.push(job);
  }
  if (!run.length) return;
  let out;
  try { out = c.measureSize(run); } catch (e) {
    for (const job of run) record.na(c.name, job.variant.id, job.n, e.message);
    return log(`  ${c.name}: n/a: ${e.message}`);
  }
  for (const { job, m, error } of out) {
    if (error) { record.na(c.name, job.variant.id, job.n, error); log(`  ${job.variant.id} ${c.name}: n/a: ${error}`); } else record.ok(c.name, job, m);
  }
}

async function runSize(n, ctx) {
  const inp = makeInputs(n), d = inp.dims;
  log(`\n== n = ${n} (a = ${d.a}, b = ${d.b}, L = ${d.L}, h = ${d.h}, rank = ${d.rank}) at ${(performance.now() / 1000).toFixed(0)} s`);
  const jobs = ctx.variants.map((v) => makeJob(v, inp, ctx));
  const perCall = ctx.contenders.filter((c) => !c.batch);
  for (const job of jobs) {
    for (const c of perCall) if (c.supports(job.variant)) await measureOne(c, job, ctx);
  }
  for (const c of ctx.contenders.filter((x) => x.batch)) measureBatch(c, jobs.filter((j) => c.supports(j.variant)), ctx);
  ctx.record.doneWith(n);
}

const trainingContext = (builds, before, cfg, machine) => ({
  builds, quick: cfg.quick, want: cfg.want, machine, peakCfg: before.simd128.best, relaxedPeakCfg: before.relaxed?.best ?? null,
});

/**
 * --training-only / --threads-only: measures one part again and puts it into the recorded results
 * (results.json of --out), whose other parts are kept as they were; results.md is rewritten.
 * measure(results) sets the part's field.
 */
async function remeasurePart(cfg, flag, part, measure) {
  const file = path.join(cfg.out, `results${cfg.suffix}.json`);
  if (!fs.existsSync(file)) throw new Error(`${flag} merges into ${file}, which does not exist: run the whole benchmark first`);
  const results = JSON.parse(fs.readFileSync(file, 'utf8'));
  await measure(results);
  const files = writeReports(results, { dir: cfg.out, suffix: cfg.suffix });
  log(`\nwrote the ${part} part into ${files.slice(0, 2).map((f) => path.relative(process.cwd(), f)).join(' and ')}`);
}

const trainingOnly = (cfg, machine) => remeasurePart(cfg, '--training-only', 'training', async (results) => {
  const before = peaksBefore(cfg.quick);
  const { builds } = await loadBuilds({ policy: cfg.policy, want: (c) => c !== 'attnlab-scalar' && cfg.want(c) });
  for (const b of builds) log(`${b.name}: ${b.error ? 'n/a: ' + b.error : 'loaded (' + b.lab.build + ')'}`);
  results.training = await trainingPhase(trainingContext(builds, before, cfg, machine));
  for (const b of builds) await b.dispose();
  // the recorded threads part (bench/threads.mjs writes it next to these files), for the report's goals
  const threadsFile = path.join(cfg.out, `threads${cfg.suffix}.json`);
  if (fs.existsSync(threadsFile)) results.threads = JSON.parse(fs.readFileSync(threadsFile, 'utf8'));
});

const threadsOnly = (cfg) => remeasurePart(cfg, '--threads-only', 'threads', async (results) => {
  results.threads = await threadsPhase({ quick: cfg.quick, dir: cfg.out, log });
});

const throughputOnly = (cfg, machine) => remeasurePart(cfg, '--throughput-only', 'throughput', async (results) => {
  results.throughput = await throughputPhase({ quick: cfg.quick, dir: cfg.out, log, machine });
});

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) return log(USAGE);
  const cfg = configure(opts);
  const machine = machineInfo();
  if (opts.trainingOnly) return trainingOnly(cfg, machine);
  if (opts.threadsOnly) return threadsOnly(cfg);
  if (opts.throughputOnly) return throughputOnly(cfg, machine);
  log(`attnlab bench${cfg.quick ? ' --quick' : ''}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node} (V8 ${machine.v8}), one thread, d = dv = ${D}`);
  log(`sizes: ${cfg.sizes.join(', ')}`);
  const before = peaksBefore(cfg.quick);
  log(`SIMD128 peak: ${before.simd128.gflops.toFixed(1)} GFLOP/s (mul+add chains); relaxed FMA: ${before.relaxed?.gflops ? before.relaxed.gflops.toFixed(1) + ' GFLOP/s' : 'n/a: ' + before.relaxed.error}`);

  const { builds, externals, registry, all } = await loadContenders(cfg);
  if (!registry) throw new Error(`no attnlab build loaded, so there is no variant registry (lab.variants): ${builds.map((b) => b.error).join('; ') || 'every build was --skip-ped'}`);
  const variants = selectVariants(registry, cfg.only);
  const plan = new Plan(registry);
  const record = new Record(resultsMeta(cfg, machine, variants, all), plan, REFERENCE);
  const ctx = { registry, variants, plan, record, contenders: all, prewarm: makeInputs(PREWARM_N) };
  for (const n of cfg.sizes) await runSize(n, ctx);

  const results = record.results;
  results.paired = await pairedPhase({ builds, externals: externals.filter((c) => !c.error), registry, variants, sizes: cfg.sizes, quick: cfg.quick, peakCfg: before.simd128.best });
  results.backward = cfg.want('backward') ? await backwardPhase({ builds, registry, variants, quick: cfg.quick, want: cfg.want }) : null;
  results.training = cfg.want('training') ? await trainingPhase(trainingContext(builds, before, cfg, machine)) : null;
  results.recurrent = cfg.want('recurrent') ? await recurrentPhase({ quick: cfg.quick, dir: cfg.out, log }) : null; // bench/recurrent.md
  for (const c of all) await c.dispose();
  results.threads = cfg.want('threads') ? await threadsPhase({ quick: cfg.quick, dir: cfg.out, log }) : null; // bench/threads.md
  results.throughput = cfg.want('throughput') ? await throughputPhase({ quick: cfg.quick, dir: cfg.out, log, machine }) : null; // bench/throughput.md
  results.step_cost = cfg.want('step-cost') ? await stepCostPhase({ quick: cfg.quick, dir: cfg.out, log, baseline: cfg.baseline }) : null; // bench/step-cost.md
  const cores = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);
  results.step_cost_threads = cfg.want('step-cost') && cores > 1 // bench/step-cost-threads.md
    ? await stepCostThreadsPhase({ threads: cores, quick: cfg.quick, dir: cfg.out, log, baseline: cfg.baseline }) : null;
  results.peak = peaksAfter(before, cfg.quick);
  log(`\nSIMD128 peak: before ${before.simd128.gflops.toFixed(1)}, after ${results.peak.simd128.after.toFixed(1)} GFLOP/s (the higher is used)`);
  finish(results, plan, cfg);
}

function finish(results, plan, cfg) {
  const m = results.meta;
  m.notes.push(...plan.notes);
  m.elapsed_s = performance.now() / 1000;
  m.paired_note = 'The softmax targets (n = 1024, 4096) and the linear-family targets use interleaved round-robin timings (results.paired): every round calls each contender once, and the SIMD128 peak kernel, so load from other processes hits them alike. The tables are from the main pass.';
  m.loadavg_end = os.loadavg()[0];
  const files = writeReports(results, { dir: cfg.out, suffix: cfg.suffix });
  log(`\nwrote ${files.map((f) => path.relative(process.cwd(), f)).join(', ')} in ${m.elapsed_s.toFixed(0)} s`);
  const bad = results.checks.filter((c) => !c.ok);
  if (bad.length) log(`WARNING: ${bad.length} correctness check(s) failed: ${bad.map((c) => `${c.variant} n=${c.n} ${c.contender}`).join('; ')}`);
}

const status = respawnWithFlags(fileURLToPath(import.meta.url), relaxedSupported);
if (status != null) process.exit(status);
main().catch((e) => {
  console.error(e?.stack ?? e);
  process.exit(1);
});
