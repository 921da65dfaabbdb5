// experiments.mjs — `npm run experiments`: trains the small transformer with every attention
// variant on every task (the task defaults of src/js/tasks.js), several seeds each, and writes
// experiments/results.json, experiments/results.md and one learning-curve SVG per task.
//
//   npm run experiments -- [--seeds 3] [--seed-start 1] [--tasks recall,copy] [--variants softmax,random-frozen]
//                          [--steps-scale 0.25] [--workers 2] [--out experiments] [--report-only]
//
// Runs go to up to --workers worker threads (scripts/experiments-worker.mjs), one training each
// at a time. Seed s of a run seeds both the model's initialisation and its training data, so
// every number is reproducible from the seeds (timings aside). results.json is rewritten after
// every finished run, so an interrupted run keeps what it finished. --report-only rewrites the
// Markdown and SVGs from an existing results.json. If <out>/notes.md exists, results.md includes
// it (the written reading of the numbers).
import { Worker } from 'node:worker_threads';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tasks } from '../src/js/tasks.js';
import { writeReport } from './experiments-report.mjs';
import { VARIANTS } from '../web/experiment/variants.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const TASKS = ['recall', 'copy', 'reverse', 'sort', 'text'];

function parseArgs(argv) {
  const a = { seeds: 3, seedStart: 1, tasks: TASKS, variants: VARIANTS.map((v) => v.name), stepsScale: 1, workers: 2, out: 'experiments', reportOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i], value = argv[i + 1];
    const need = () => { if (value === undefined) throw new Error(`${key} needs a value`); i++; return value; };
    if (key === '--seeds') a.seeds = Number(need());
    else if (key === '--seed-start') a.seedStart = Number(need());
    else if (key === '--tasks') a.tasks = need().split(',');
    else if (key === '--variants') a.variants = need().split(',');
    else if (key === '--steps-scale') a.stepsScale = Number(need());
    else if (key === '--workers') a.workers = Number(need());
    else if (key === '--out') a.out = need();
    else if (key === '--report-only') a.reportOnly = true;
    else throw new Error(`unknown argument ${key}`);
  }
  if (!Number.isInteger(a.seeds) || a.seeds < 1) throw new Error('--seeds must be a positive integer');
  if (!Number.isInteger(a.seedStart) || a.seedStart < 0 || a.seedStart + a.seeds > 2 ** 32) throw new Error('--seed-start must be an integer >= 0');
  if (!Number.isInteger(a.workers) || a.workers < 1) throw new Error('--workers must be a positive integer');
  if (!(a.stepsScale > 0)) throw new Error('--steps-scale must be a positive number');
  for (const t of a.tasks) if (!TASKS.includes(t)) throw new Error(`unknown task ${t}; known: ${TASKS.join(', ')}`);
  for (const v of a.variants) if (!VARIANTS.some((x) => x.name === v)) throw new Error(`unknown variant ${v}; known: ${VARIANTS.map((x) => x.name).join(', ')}`);
  return a;
}

/** The training settings of a task: its defaults, steps (and warmup, evalEvery) scaled. */
function settingsFor(task, scale) {
  const d = task.defaults;
  const steps = Math.max(1, Math.round(d.steps * scale));
  return {
    dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF, batch: d.batch, lr: d.lr, steps,
    warmup: Math.min(steps - 1, Math.round(d.warmup * scale)),
    evalEvery: Math.max(1, Math.round((d.evalEvery ?? d.steps / 20) * scale)),
    evalBatch: d.evalBatch ?? 256,
  };
}

function sh(cmd) {
  try { return execSync(cmd, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { return null; }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const out = path.resolve(root, args.out);
  mkdirSync(out, { recursive: true });
  const jsonPath = path.join(out, 'results.json');
  if (args.reportOnly) {
    writeReport(JSON.parse(readFileSync(jsonPath, 'utf8')), out);
    console.log(`experiments: wrote ${path.relative(root, out)}/results.md and the SVGs from results.json`);
    return;
  }
  const binding = path.join(root, 'dist', 'attnlab.js');
  if (!existsSync(binding)) throw new Error('dist/attnlab.js is missing: run `npm run build` first');

  const taskInfo = {};
  const runs = [];
  for (const name of args.tasks) {
    const task = tasks[name]();
    const settings = settingsFor(task, args.stepsScale);
    taskInfo[name] = { options: name === 'text' ? { ...task.options, corpus: `(the King James Bible, ${task.length} characters, every 10th chapter held out)` } : task.options,
      vocab: task.vocab, seqLen: task.seqLen, defaults: task.defaults, settings };
    for (let seed = args.seedStart; seed < args.seedStart + args.seeds; seed++) {
      for (const v of VARIANTS.filter((x) => args.variants.includes(x.name))) {
        runs.push({ id: runs.length, task: name, taskOptions: {}, variant: v, seed, settings });
      }
    }
  }
  // Seed by seed (so that a run cut short still has whole seeds), longest tasks first within a
  // seed, so the last runs of a seed are short ones.
  const cost = (r) => r.settings.steps * r.settings.batch * r.settings.dModel * r.settings.layers;
  const queue = runs.slice().sort((p, q) => p.seed - q.seed || cost(q) - cost(p) || p.id - q.id);

  const commit = sh('git rev-parse HEAD');
  const dirty = sh('git status --porcelain -- src scripts dist');
  const result = {
    date: new Date().toISOString(),
    commit, dirty: dirty ? dirty.split('\n').length : 0,
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, os: `${os.type()} ${os.release()} ${os.arch()}`, node: process.version },
    args: { seeds: args.seeds, seedStart: args.seedStart, tasks: args.tasks, variants: args.variants, stepsScale: args.stepsScale, workers: args.workers },
    tasks: taskInfo,
    variants: VARIANTS.filter((x) => args.variants.includes(x.name)),
    runs: [],
  };
  const save = () => writeFileSync(jsonPath, `${JSON.stringify(result, null, 1)}\n`);

  console.log(`experiments: ${runs.length} runs (${args.tasks.length} tasks × ${result.variants.length} variants × ${args.seeds} seeds), ` +
    `${args.workers} at a time, steps × ${args.stepsScale}; on ${result.machine.cpu}, ${result.machine.cores} cores, node ${process.version}`);
  const t0 = Date.now();
  let done = 0;
  // Ctrl-C (SIGINT) or SIGTERM: stop the workers and write the report of the runs finished so far.
  const workers = [];
  const stop = (sig) => {
    console.log(`experiments: ${sig}: stopping; the report covers the ${result.runs.length} finished runs`);
    result.interrupted = true;
    result.totalMs = Date.now() - t0;
    save();
    writeReport(result, out);
    for (const w of workers) w.terminate();
    process.exit(130);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const workerFile = path.join(root, 'scripts', 'experiments-worker.mjs');
  const workerData = { binding, train: path.join(root, 'src', 'js', 'train.js') };
  await Promise.all(Array.from({ length: Math.min(args.workers, queue.length) }, () => new Promise((resolve, reject) => {
    const w = new Worker(workerFile, { workerData });
    workers.push(w);
    const next = () => {
      const r = queue.shift();
      if (r) w.postMessage(r); else { w.postMessage(null); resolve(); }
    };
    w.on('message', (m) => {
      if (m.ready) { result.build = m.build; next(); return; }
      result.runs.push(m);
      result.runs.sort((p, q) => p.id - q.id);
      result.totalMs = Date.now() - t0;
      save();
      done++;
      const reached = m.history.find((p) => p.evalAccuracy >= 0.9);
      const acc = m.final ? (100 * m.final.evalAccuracy).toFixed(1) : '-';
      console.log(`[${String(done).padStart(3)}/${runs.length}] ${m.task} ${m.variant} seed ${m.seed}: held-out ${acc} %, ` +
        `90 % ${reached ? `at step ${reached.step}` : 'not reached'}, ${m.msPerStep ? m.msPerStep.toFixed(1) : '-'} ms/step, ` +
        `${((m.ms ?? 0) / 1000).toFixed(1)} s${m.error ? `, FAILED: ${m.error}` : ''}`);
      next();
    });
    w.on('error', reject);
  })));
  result.totalMs = Date.now() - t0;
  save();
  writeReport(result, out);
  console.log(`experiments: ${runs.length} runs in ${(result.totalMs / 60000).toFixed(1)} min; wrote ${path.relative(root, out)}/results.json, results.md and the SVGs`);
}

main().catch((err) => { console.error(`experiments: ${err.message}`); process.exit(1); });
