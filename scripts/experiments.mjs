// experiments.mjs — `npm run experiments`: the study of experiments/notes.md, run resumably, recorded
// into experiments/ (results.json, summary.json, results.md and the SVG plots).
//
//   npm run experiments                      the whole study (about 3.5 hours on two cores alone), or
//                                            what is left of it: finished jobs are kept
//   npm run experiments -- --phases sweep,report   only these phases (record the study in parts)
//   npm run experiments -- --quick           the headline rows at two seeds, at the recorded
//                                            learning rates, into experiments/quick/ (78 trainings:
//                                            11 min alone on two cores, 2 December 2026)
//   npm run experiments -- --report-only     rewrite results.md, summary.json and the SVGs
//   options: --workers N (default: the cores, at most 2 here), --out DIR, --fresh (start over)
//
// The study's plan (tasks, variants, seeds, learning rates, protocol): scripts/study/plan.mjs.
// Phases, in order (each needs the ones before it):
//   sweep      every headline task x variant x learning rate on its sweep seeds (validation split)
//   report     the reported seeds at each (task, variant)'s chosen rate (held-out split)
//   capacity   recall over pairs and widths for a representative set, at their recall rates
//   transfer   verses: a sweep from scratch, then from scratch and fine-tuned from the text runs
//   timing     ms per step of every (task, variant), one training at a time
//   cost       training tokens/s against sequence length and generation ms/token, one at a time
// Jobs run in worker threads, one thread each, as many at once as --workers (timing and cost:
// one at a time, so that they measure a machine to themselves). results.json is rewritten after
// every job (atomically), so Ctrl-C or a crash loses at most the jobs in flight.
import { Worker } from 'node:worker_threads';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tasks, TASK_NAMES } from '../src/js/tasks.js';
import {
  LRS, LR_LADDER, SWEEP_SEEDS, sweepSeedsOf, REPORT_SEEDS, TRANSFER_SEEDS, CAPACITY_SEEDS, HEADLINE_TASKS, CAPACITY_VARIANTS, TRANSFER_VARIANTS,
  COST_VARIANTS, COST_SEQLENS, variantNames, loadStudyVariants, capacityGrid, jobKey, settingsOf, chanceOf, EVAL_POINTS,
  THRESHOLD, VALIDATION_BATCH, EVAL_BATCH,
} from './study/plan.mjs';
import { chooseLr, sweepState, sweepSeedsIn, writeReport } from './study/report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PHASES = ['sweep', 'report', 'capacity', 'transfer', 'timing', 'cost'];
const ALONE = new Set(['timing', 'cost']);
const QUICK_TASKS = ['copy', 'reverse', 'recall'];
const QUICK_SEEDS = [1, 2];

function args() {
  const { values } = parseArgs({
    options: {
      phases: { type: 'string' }, quick: { type: 'boolean', default: false }, 'report-only': { type: 'boolean', default: false },
      workers: { type: 'string' }, out: { type: 'string' }, fresh: { type: 'boolean', default: false },
      variants: { type: 'string' }, tasks: { type: 'string' }, 'steps-scale': { type: 'string' },
    },
  });
  const a = {
    phases: values.phases ? values.phases.split(',') : PHASES,
    quick: values.quick, reportOnly: values['report-only'], fresh: values.fresh,
    workers: values.workers ? Number(values.workers) : Math.max(1, Math.min(2, os.availableParallelism?.() ?? os.cpus().length)),
    out: path.resolve(root, values.out ?? (values.quick ? 'experiments/quick' : 'experiments')),
    variants: values.variants ? values.variants.split(',') : variantNames(),
    tasks: values.tasks ? values.tasks.split(',') : null,
    // for trying the pipeline only (tests/study.test.mjs): every training's steps scaled; the
    // report says so on its first line
    stepsScale: values['steps-scale'] ? Number(values['steps-scale']) : 1,
  };
  if (!(a.stepsScale > 0 && a.stepsScale <= 1)) throw new Error('--steps-scale must be in (0, 1]');
  scale = a.stepsScale;
  for (const p of a.phases) if (!PHASES.includes(p)) throw new Error(`unknown phase ${p}; the phases are ${PHASES.join(', ')}`);
  for (const t of a.tasks ?? []) if (!TASK_NAMES.includes(t)) throw new Error(`unknown task ${t}; the tasks are ${TASK_NAMES.join(', ')}`);
  for (const v of a.variants) if (!variantNames().includes(v)) throw new Error(`unknown variant ${v}; known: ${variantNames().join(', ')}`);
  if (!Number.isInteger(a.workers) || a.workers < 1) throw new Error('--workers must be a positive integer');
  return a;
}

const sh = (cmd) => { try { return execSync(cmd, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { return null; } };

// ---- the jobs of each phase, from the plan and what is recorded so far ----

let scale = 1; // --steps-scale
const settings = (name, t, overrides = {}) => {
  if (scale === 1) return settingsOf(name, t, overrides);
  const d = t.defaults;
  const steps = Math.max(2, Math.round(d.steps * scale));
  return settingsOf(name, t, { steps, warmup: Math.min(steps - 1, Math.round(d.warmup * scale)), ...overrides });
};
const taskSpec = (name, options = {}) => ({ name, options });
const task = (name, options) => tasks[name](options ?? {});

function trainJob(fields) {
  const j = { kind: 'train', ...fields };
  j.key = jobKey(j);
  return j;
}

function phaseJobs(phase, result, a) {
  const jobs = [];
  const headline = a.tasks ?? HEADLINE_TASKS;
  const lrOf = (t, v) => chooseLr(result, t, v);
  // the sweep of (task, variant): the base rates, then one rate outward while the best is at an edge
  const sweepJobs = (experiment, t, v) => {
    const rates = [...LRS];
    const st = sweepState(result, t, v);
    if (st.next != null && !rates.includes(st.next)) rates.push(st.next);
    for (const lr of LR_LADDER.filter((x) => result.jobs && Object.values(result.jobs).some((j) => j.experiment === experiment && j.task?.name === t && j.variant === v && j.lr === x))) {
      if (!rates.includes(lr)) rates.push(lr);
    }
    return rates.flatMap((lr) => sweepSeedsOf(t).map((seed) => trainJob({ experiment, task: taskSpec(t), variant: v, seed, lr, settings: settings(t, task(t)), wantValidation: true })));
  };
  if (phase === 'sweep') {
    for (const t of headline) for (const v of a.variants) jobs.push(...sweepJobs('sweep', t, v));
  } else if (phase === 'report') {
    for (const t of headline) for (const v of a.variants) {
      const lr = lrOf(t, v);
      if (lr == null) continue; // its sweep is not finished
      for (const seed of REPORT_SEEDS) {
        jobs.push(trainJob({ experiment: 'report', task: taskSpec(t), variant: v, seed, lr, settings: settings(t, task(t)),
          wantFull: t === 'text', saveModel: t === 'text' }));
      }
    }
  } else if (phase === 'capacity') {
    for (const seed of CAPACITY_SEEDS) for (const cell of capacityGrid()) for (const v of CAPACITY_VARIANTS.filter((x) => a.variants.includes(x))) {
      const lr = lrOf('recall', v);
      if (lr == null) continue;
      const t = task('recall', cell.taskOptions);
      jobs.push(trainJob({ experiment: 'capacity', task: taskSpec('recall', cell.taskOptions), cell: { pairs: cell.pairs, dModel: cell.dModel },
        variant: v, seed, lr, settings: settings('recall', t, { dModel: cell.dModel }) }));
    }
  } else if (phase === 'transfer') {
    const verses = task('verses');
    for (const v of TRANSFER_VARIANTS.filter((x) => a.variants.includes(x))) {
      jobs.push(...sweepJobs('transfer-sweep', 'verses', v));
      const lr = lrOf('verses', v), textLr = lrOf('text', v);
      if (lr == null || textLr == null) continue;
      for (const seed of TRANSFER_SEEDS) {
        jobs.push(trainJob({ experiment: 'transfer', task: taskSpec('verses'), variant: v, seed, lr, settings: settings('verses', verses), wantFull: true }));
        const pretrained = trainJob({ experiment: 'report', task: taskSpec('text'), variant: v, seed, lr: textLr, settings: settings('text', task('text')), wantFull: true, saveModel: true });
        jobs.push(trainJob({ experiment: 'transfer', task: taskSpec('verses'), variant: v, seed, lr, settings: settings('verses', verses), wantFull: true, pretrained }));
      }
    }
  } else if (phase === 'timing') {
    for (const t of [...headline, 'verses']) for (const v of a.variants) {
      const j = { kind: 'timing', experiment: 'timing', task: taskSpec(t), variant: v, settings: settings(t, task(t)) };
      j.key = jobKey(j);
      jobs.push(j);
    }
  } else if (phase === 'cost') {
    for (const v of COST_VARIANTS.filter((x) => a.variants.includes(x))) {
      for (const seqLen of COST_SEQLENS) { const j = { kind: 'cost-train', experiment: 'cost', variant: v, seqLen }; j.key = jobKey(j); jobs.push(j); }
      const g = { kind: 'cost-generate', experiment: 'cost', variant: v }; g.key = jobKey(g); jobs.push(g);
    }
  }
  return jobs;
}

// The quick run: the headline rows at QUICK_SEEDS, each (task, variant) at the learning rate the
// recorded study chose and at the settings it recorded (read from experiments/results.json: a
// task's defaults may have moved on since), so no sweep is needed.
const recordedSettings = (recorded, t) => recorded.tasks?.[t]?.settings ?? settings(t, task(t));
function quickJobs(recorded, a) {
  const jobs = [];
  for (const t of a.tasks ?? QUICK_TASKS) for (const v of a.variants) {
    const lr = chooseLr(recorded, t, v);
    if (lr == null) throw new Error(`--quick needs the recorded study's learning rate for ${t} ${v}: run the sweep phase first`);
    for (const seed of QUICK_SEEDS) jobs.push(trainJob({ experiment: 'report', task: taskSpec(t), variant: v, seed, lr, settings: recordedSettings(recorded, t), wantFull: t === 'text' }));
  }
  return jobs;
}

// ---- cost of a job, for the time left ----

function units(job) {
  if (job.kind !== 'train') return job.kind === 'cost-generate' ? 4e8 : 1.5e8;
  const s = job.settings;
  const L = tasks[job.task.name](job.task.options).seqLen;
  return s.steps * s.batch * L * s.dModel * s.layers * (job.pretrained && job.pretrained.key ? 1 : 1);
}

function fmt(ms) {
  if (!Number.isFinite(ms)) return '?';
  const m = Math.round(ms / 60000);
  return m >= 60 ? `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min` : `${m} min`;
}

// ---- running ----

async function runJobs(jobs, workers, result, save, log) {
  if (!jobs.length) return;
  // longest first, so that the last jobs are short; the capacity grid seed by seed before that, so
  // that a run cut short has the whole grid at its first seeds
  const seedRank = (j) => (j.experiment === 'capacity' ? j.seed : 0);
  const queue = jobs.slice().sort((p, q) => seedRank(p) - seedRank(q) || units(q) - units(p));
  const total = queue.length;
  let done = 0;
  const t0 = Date.now();
  let unitsDone = 0;
  const unitsAll = queue.reduce((s, j) => s + units(j), 0);
  const binding = path.join(root, 'dist', 'attnlab.js');
  const workerFile = path.join(root, 'scripts', 'study', 'worker.mjs');
  const cacheDir = path.join(root, 'experiments', '.cache', 'models');
  const pool = [];
  const stop = () => { for (const w of pool) w.terminate(); };
  process.once('SIGINT', () => { log('\nexperiments: interrupted; finished jobs are kept in results.json, run again to resume'); stop(); save(); process.exit(130); });
  await Promise.all(Array.from({ length: Math.min(workers, queue.length) }, () => new Promise((resolve, reject) => {
    const w = new Worker(workerFile, { workerData: { binding, cacheDir } });
    pool.push(w);
    const next = () => {
      const j = queue.shift();
      if (j) w.postMessage(j); else { w.postMessage(null); resolve(); }
    };
    w.on('message', (m) => {
      if (m.ready) { result.build = m.build; next(); return; }
      result.jobs[m.job.key] = { ...m.job, ...m.record };
      // the provenance the report prints: when the last job was recorded, by which commit (the
      // header's commit and dirty are this run's, rewritten even by a run with nothing to do)
      result.lastJob = { at: new Date().toISOString(), commit: result.commit, dirty: result.dirty };
      save();
      done++;
      unitsDone += units(m.job);
      const elapsed = Date.now() - t0;
      const left = unitsDone ? (elapsed * (unitsAll - unitsDone)) / unitsDone : NaN;
      log(`[${String(done).padStart(String(total).length)}/${total}] ${describeRecord(result.jobs[m.job.key])} | ${fmt(elapsed)} so far, about ${fmt(left)} left`);
      next();
    });
    w.on('error', reject);
  })));
}

function describeRecord(r) {
  const head = `${r.experiment} ${r.task?.name ?? ''}${r.cell ? ` P${r.cell.pairs} d${r.cell.dModel}` : ''} ${r.variant}${r.seed != null ? ` seed ${r.seed}` : ''}${r.lr != null ? ` lr ${r.lr}` : ''}${r.pretrained ? ' (pretrained)' : ''}${r.seqLen ? ` n ${r.seqLen}` : ''}`;
  if (r.error) return `${head}: FAILED ${r.error}`;
  if (r.kind === 'timing') return `${head}: ${r.msPerStep.toFixed(1)} ms/step`;
  if (r.kind === 'cost-train') return `${head}: ${(r.tokensPerSecond / 1000).toFixed(1)} k tokens/s`;
  if (r.kind === 'cost-generate') return `${head}: ${r.windows.map((w) => w.ms.toFixed(2)).join(' ')} ms/token`;
  const f = r.full ?? r.final; // the full held-out result where the job asked for one
  const metric = r.task.name === 'text' ? `${(f.bits ?? f.evalBits ?? f.evalLoss / Math.LN2).toFixed(3)} bits/char` : `${(100 * (f.accuracy ?? f.evalAccuracy)).toFixed(1)} %`;
  const v = r.validation ? `, validation ${r.task.name === 'text' ? `${r.validation.bits.toFixed(3)} bits/char` : `${(100 * r.validation.accuracy).toFixed(1)} %`}` : '';
  return `${head}: held-out ${metric}${v}, ${(r.trainMs / 1000).toFixed(0)} s`;
}

function header(a, result) {
  const info = {};
  // a run limited by --tasks records only those tasks again: the others keep the settings and
  // sweep seeds they were recorded with (a task's defaults may have moved on since)
  const kept = (t) => a.tasks && !a.tasks.includes(t) && result.tasks?.[t];
  for (const t of [...HEADLINE_TASKS, 'verses']) {
    if (kept(t)) { info[t] = result.tasks[t]; continue; }
    const k = task(t);
    info[t] = { options: { ...k.options, corpus: undefined }, vocab: k.vocab, seqLen: k.seqLen, settings: settings(t, k), chance: chanceOf(k),
      ...(k.corpus ? { corpus: k.corpus } : {}), ...(k.counts ? { counts: k.counts } : {}) };
  }
  return {
    ...result,
    version: 2,
    commit: sh('git rev-parse HEAD'),
    dirty: (sh('git status --porcelain -- src scripts web/experiment') ?? '').split('\n').filter(Boolean).length,
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, os: `${os.type()} ${os.release()} ${os.arch()}`, node: process.version },
    stepsScale: scale,
    protocol: { lrs: LRS, lrLadder: LR_LADDER, sweepSeeds: SWEEP_SEEDS,
      sweepSeedsByTask: Object.fromEntries([...HEADLINE_TASKS, 'verses'].map((t) => [t, kept(t) ? sweepSeedsIn(result, t) : sweepSeedsOf(t)])), reportSeeds: REPORT_SEEDS, transferSeeds: TRANSFER_SEEDS, capacitySeeds: CAPACITY_SEEDS,
      evalPoints: EVAL_POINTS, evalBatch: EVAL_BATCH, validationBatch: VALIDATION_BATCH, threshold: THRESHOLD, capacity: capacityGrid(),
      capacityVariants: CAPACITY_VARIANTS, transferVariants: TRANSFER_VARIANTS, costVariants: COST_VARIANTS, costSeqLens: COST_SEQLENS },
    tasks: info,
    variants: variantNames(),
  };
}

async function main() {
  await loadStudyVariants();
  const a = args();
  mkdirSync(a.out, { recursive: true });
  const jsonPath = path.join(a.out, 'results.json');
  const recordedPath = path.join(root, 'experiments', 'results.json');
  let result = { jobs: {}, started: new Date().toISOString(), phaseMs: {} };
  if (existsSync(jsonPath) && !a.fresh) {
    const old = JSON.parse(readFileSync(jsonPath, 'utf8'));
    if (old.version === 2) result = old;
  }
  if (a.reportOnly) {
    writeReport(result, a.out, { quick: a.quick, recorded: a.quick && existsSync(recordedPath) ? JSON.parse(readFileSync(recordedPath, 'utf8')) : null });
    console.log(`experiments: wrote ${path.relative(root, a.out)}/results.md, summary.json and the plots from results.json`);
    return;
  }
  if (!existsSync(path.join(root, 'dist', 'attnlab.js'))) throw new Error('dist/attnlab.js is missing: run `npm run build` first');
  result = header(a, result);
  const save = () => {
    result.updated = new Date().toISOString();
    writeFileSync(`${jsonPath}.tmp`, `${JSON.stringify(result)}\n`);
    renameSync(`${jsonPath}.tmp`, jsonPath);
  };
  const log = (s) => console.log(s);
  // A recorded job counts as done only if it ran at the settings planned now: the settings are not
  // part of a job's key, so after a task's defaults change (recall's warmup) the job runs again and
  // its record is replaced, instead of an old run standing in for it.
  const asPlanned = (rec, job) => rec && (!job.settings || JSON.stringify(rec.settings) === JSON.stringify(job.settings));
  const toRun = (job, retryFailed) => !asPlanned(result.jobs[job.key], job) || (result.jobs[job.key].error && retryFailed);
  console.log(`experiments: on ${result.machine.cpu}, ${result.machine.cores} cores, node ${process.version}; ${a.workers} at a time; into ${path.relative(root, a.out)}/`);
  if (a.quick) {
    const recorded = JSON.parse(readFileSync(recordedPath, 'utf8'));
    for (const t of a.tasks ?? QUICK_TASKS) if (result.tasks[t]) result.tasks[t].settings = recordedSettings(recorded, t);
    const jobs = quickJobs(recorded, a).filter((j) => toRun(j, true));
    console.log(`experiments --quick: ${jobs.length} trainings (${(a.tasks ?? QUICK_TASKS).join(', ')} x ${a.variants.length} variants x seeds ${QUICK_SEEDS.join(', ')}) at the recorded learning rates`);
    await runJobs(jobs, a.workers, result, save, log);
    save();
    writeReport(result, a.out, { quick: true, recorded });
    console.log(`experiments --quick: wrote ${path.relative(root, a.out)}/results.md; compare it with experiments/results.md`);
    return;
  }
  for (const phase of PHASES.filter((p) => a.phases.includes(p))) {
    // a phase's jobs can depend on each other (transfer: its sweep, then the rest), so it runs
    // until no job is left that it could make
    for (let round = 0; ; round++) {
      const jobs = phaseJobs(phase, result, a).filter((j) => toRun(j, round === 0));
      if (!jobs.length) { if (round === 0) console.log(`experiments: phase ${phase}: nothing left to run`); break; }
      console.log(`experiments: phase ${phase}: ${jobs.length} jobs${ALONE.has(phase) ? ', one at a time' : ''}`);
      const t0 = Date.now();
      await runJobs(jobs, ALONE.has(phase) ? 1 : a.workers, result, save, log);
      result.phaseMs[phase] = (result.phaseMs[phase] ?? 0) + (Date.now() - t0);
      save();
    }
  }
  save(); // the header too (plan and tasks as they are now), even when no phase had a job to run
  writeReport(result, a.out, {});
  console.log(`experiments: wrote ${path.relative(root, a.out)}/results.json, summary.json, results.md and the plots`);
}

main().catch((err) => { console.error(`experiments: ${err.stack ?? err.message}`); process.exit(1); });
