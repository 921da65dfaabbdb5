// The cost of one step of a model at the experiments' small shapes, where the work around the
// arithmetic (checking the configuration, laying out the workspace, making each head's attention
// plan) is the largest share: trainStep, evaluate and a token of generate, for every variant the
// experiments train, at the recall, copy and text tasks' defaults (src/js/tasks.js), SIMD build,
// one thread.
//
// With a baseline (--baseline DIR: a dist/ of another commit, e.g. one built in a worktree) both
// bindings run in the same interleaved rounds (each round calls every entry once, starting from a
// different one, so load from other processes hits them alike) and the table gives this build's
// time as a ratio to the baseline's: the before and after of a change, measured side by side.
//
//   node --experimental-wasm-relaxed-simd bench/step-cost.mjs [--quick] [--out DIR] [--baseline DIR]
//   node --experimental-wasm-relaxed-simd bench/step-cost.mjs --threads N [--reps K] [--baseline DIR] ...
//
// Writes step-cost.md and step-cost.json (step-cost-quick.* with --quick) into DIR (bench/).
// --threads N (N > 1) measures the threaded module instead, and each contender in a process of its
// own (two pools in one process would share the cores): K rounds (default 3, 2 with --quick), in
// each one child process per build, in alternating order, times every model in interleaved rounds
// of its own; a time is the median over the K processes' medians, the spread half their range.
// Writes step-cost-threads.md and .json (-quick with --quick).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { commitText, machineInfo, respawnWithFlags } from './cli.mjs';
import { CONTENDED, roundRobin, summarize } from './measure.mjs';
import { fmtMs, writeRecorded } from './record.mjs';
import { tasks } from '../src/js/tasks.js';
import { modelConfig, experimentVariants } from '../src/js/experiment.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CURRENT = path.resolve(HERE, '../dist');
export const STEP_COST_TASKS = ['recall', 'copy', 'text'];
const LR = 1e-3;
const cell = (s) => `${fmtMs(s.median_ms)} ±${(50 * (s.q3_ms - s.q1_ms) / s.median_ms).toFixed(0)}%${s.cpu_wall_ratio < CONTENDED ? ' †' : ''}`;

/** The commit a dist/ was built from: its COMMIT file, else the commit of the repository it sits in. */
function distCommit(dir) {
  const file = path.join(dir, 'COMMIT');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const r = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: dir, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

async function open(dir, threads = 1) {
  const { init } = await import(pathToFileURL(path.join(dir, 'attnlab.js')).href);
  const lab = await init({ simd: true, threads, fresh: true });
  if (lab.threads !== threads) throw new Error(`${dir}: asked for ${threads} threads, runs ${lab.threads}`);
  return lab;
}

/** Every model the step cost times: each experiment variant at each step-cost task's defaults, seed 1, with a training batch and a one-token prompt. */
function* stepCostModels(variants) {
  for (const name of STEP_COST_TASKS) {
    const task = tasks[name]();
    const d = task.defaults;
    const batch = task.sample(d.batch, 1, 'train');
    const prompt = batch.tokens.subarray(0, 1);
    for (const v of experimentVariants(variants)) yield { name, task, d, batch, prompt, v, config: modelConfig(task, v, d, 1) };
  }
}

/** Every experiment model of the step-cost tasks, timed in interleaved rounds on one instance. */
async function timeModels(lab, rounds, log = () => {}) {
  const rows = [];
  for (const { name, task, d, batch, prompt, v, config } of stepCostModels(lab.variants)) {
    const m = lab.model(config);
    try {
      const st = await roundRobin([
        { key: 'trainStep', fn: () => m.trainStep(batch.tokens, batch.targets, { lr: LR }) },
        { key: 'evaluate', fn: () => m.evaluate(batch.tokens, batch.targets) },
        { key: 'generate', fn: () => m.generate(prompt, task.seqLen - 1, { temperature: 0 }) },
      ], rounds);
      rows.push({ task: name, variant: v.name, parameters: m.parameterCount,
        shape: { seqLen: task.seqLen, vocab: task.vocab, batch: d.batch, dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF },
        train_step: st.trainStep.median_ms, evaluate: st.evaluate.median_ms, generate_token: st.generate.median_ms / (task.seqLen - 1) });
      log(`    ${name} ${v.name}: trainStep ${fmtMs(st.trainStep.median_ms)} ms`);
    } finally { m.dispose(); }
  }
  return rows;
}

/** The threaded step cost: each build's models in child processes of their own, builds alternating. */
export async function stepCostThreadsPhase({ threads, quick = false, dir = HERE, log = console.log, baseline = null, reps = quick ? 2 : 3 } = {}) {
  const machine = machineInfo();
  const builds = [{ key: 'this', dist: CURRENT, commit: commitText(machine) }];
  if (baseline) builds.push({ key: 'baseline', dist: baseline, commit: distCommit(baseline) });
  const rounds = quick ? 3 : 7;
  log(`\nstep cost: SIMD build, ${threads} threads, a process per build and round (${reps} rounds); ${STEP_COST_TASKS.join(', ')} at their defaults` +
    (baseline ? `; against the baseline ${builds[1].commit} (${baseline})` : ''));
  const runs = new Map(builds.map((b) => [b.key, []]));
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 ? [...builds].reverse() : builds;
    for (const b of order) {
      log(`  round ${rep + 1}: ${b.key} (${b.commit})`);
      const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', b.dist, '--threads', String(threads), '--rounds', String(rounds)],
        { encoding: 'utf8', env: { ...process.env, ATTNLAB_BENCH_CHILD: '1' }, maxBuffer: 1 << 26 });
      if (r.status !== 0) throw new Error(`step-cost child (${b.dist}, ${threads} threads) failed: ${r.stderr}`);
      runs.get(b.key).push(JSON.parse(r.stdout.trim().split('\n').pop()));
    }
  }
  // the spread of a few processes' medians is their range
  const stat = (xs) => { const s = summarize([...xs]); return { median_ms: s.median_ms, q1_ms: s.min_ms, q3_ms: s.max_ms, reps: xs.length }; };
  const rows = runs.get('this')[0].map((first, i) => {
    const row = { task: first.task, variant: first.variant, shape: first.shape, parameters: first.parameters };
    for (const b of builds) {
      const of = runs.get(b.key).map((run) => run[i]);
      row[b.key] = { train_step: stat(of.map((x) => x.train_step)), evaluate: stat(of.map((x) => x.evaluate)), generate_token: stat(of.map((x) => x.generate_token)) };
    }
    if (baseline) for (const k of ['train_step', 'evaluate', 'generate_token']) row[`${k}_ratio`] = row.this[k].median_ms / row.baseline[k].median_ms;
    return row;
  });
  const md = report(rows, builds, machine, quick, baseline, threads);
  const results = { meta: { ...machine, loadavg_end: os.loadavg()[0], quick, rounds, reps, threads, baseline: baseline && { dir: baseline, commit: builds[1].commit } }, rows };
  writeRecorded(dir, 'step-cost-threads', quick, md, results);
  return results;
}

export async function stepCostPhase({ quick = false, dir = HERE, log = console.log, baseline = null } = {}) {
  const machine = machineInfo();
  const builds = [{ key: 'this', lab: await open(CURRENT), commit: commitText(machine) }];
  if (baseline) builds.push({ key: 'baseline', lab: await open(baseline), commit: distCommit(baseline) });
  const rounds = quick ? 3 : 9;
  log(`\nstep cost: SIMD build, one thread; ${STEP_COST_TASKS.join(', ')} at their defaults${baseline ? `; against the baseline ${builds[1].commit} (${baseline})` : ''}`);
  const rows = [];
  for (const { name, task, d, batch, prompt, v, config } of stepCostModels(builds[0].lab.variants)) {
    const models = builds.map((b) => b.lab.model(config));
    try {
      const entries = [];
      models.forEach((m, i) => {
        const k = builds[i].key;
        entries.push({ key: `${k} trainStep`, fn: () => m.trainStep(batch.tokens, batch.targets, { lr: LR }) });
        entries.push({ key: `${k} evaluate`, fn: () => m.evaluate(batch.tokens, batch.targets) });
        entries.push({ key: `${k} generate`, fn: () => m.generate(prompt, task.seqLen - 1, { temperature: 0 }) });
      });
      const st = await roundRobin(entries, rounds);
      const row = { task: name, variant: v.name, shape: { seqLen: task.seqLen, vocab: task.vocab, batch: d.batch, dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF },
        parameters: models[0].parameterCount };
      for (const b of builds) {
        row[b.key] = {
          train_step: st[`${b.key} trainStep`], evaluate: st[`${b.key} evaluate`],
          // a generate call decodes seqLen - 1 positions (the prompt's one, then each drawn token)
          generate_token: scale(st[`${b.key} generate`], 1 / (task.seqLen - 1)),
        };
      }
      if (baseline) for (const k of ['train_step', 'evaluate', 'generate_token']) row[`${k}_ratio`] = row.this[k].median_ms / row.baseline[k].median_ms;
      rows.push(row);
      log(`  ${name} ${v.name}: trainStep ${fmtMs(row.this.train_step.median_ms)} ms, evaluate ${fmtMs(row.this.evaluate.median_ms)} ms, ` +
        `generate ${fmtMs(row.this.generate_token.median_ms)} ms/token` +
        (baseline ? ` (× ${row.train_step_ratio.toFixed(2)}, ${row.evaluate_ratio.toFixed(2)}, ${row.generate_token_ratio.toFixed(2)} of the baseline)` : ''));
    } finally { for (const m of models) m.dispose(); }
  }
  for (const b of builds) b.lab.dispose();
  const md = report(rows, builds, machine, quick, baseline);
  const results = { meta: { ...machine, loadavg_end: os.loadavg()[0], quick, rounds, baseline: baseline && { dir: baseline, commit: builds[1].commit } }, rows };
  writeRecorded(dir, 'step-cost', quick, md, results);
  return results;
}

const scale = (s, f) => Object.fromEntries(Object.entries(s).map(([k, x]) => [k, k.endsWith('_ms') ? x * f : x]));

function report(rows, builds, machine, quick, baseline, threads = 1) {
  const L = [];
  const x2 = (r) => `${r.toFixed(2)}×`;
  L.push('# The cost of a step at the experiments\' shapes', '');
  L.push(`${machine.cpu} (${machine.cores} cores), Node ${machine.node}, ${machine.platform}; ${machine.date.slice(0, 10)}; commit ${builds[0].commit}` +
    (baseline ? `, against commit ${builds[1].commit} (the baseline)` : '') + `. SIMD build, ${threads === 1 ? 'one thread' : `${threads} threads`}. Load average (1 min) at the start / end: ` +
    `${machine.loadavg_start.toFixed(2)} / ${os.loadavg()[0].toFixed(2)}. Written by \`node bench/step-cost.mjs\`${quick ? ' --quick' : ''}` +
    `${threads > 1 ? ` --threads ${threads}` : ''}${baseline ? ' --baseline DIR' : ''} (a part of \`npm run bench\`${threads > 1 ? ' with --threads' : ''}).`, '');
  L.push('Each model is the experiments\' (src/js/experiment.js) at the task\'s defaults (src/js/tasks.js), seed 1, on one training batch of the task. ' +
    '*trainStep* is the loss, the backward pass and the AdamW step; *evaluate* the loss alone; *generate* a token of `generate(prompt, seqLen − 1, { temperature: 0 })`, one position decoded a step. ' +
    (threads > 1
      ? 'Each build ran in a child process of its own in every round (builds alternating first), its models in interleaved rounds; every time is the median over the rounds\' processes\' medians ± half their range.'
      : 'Every time is the median over interleaved rounds ± half the IQR; † marks less than 90 % CPU/wall.') +
    (baseline ? ' The ratios divide this build\'s median by the baseline\'s from the same rounds: below 1 is faster.' : ''), '');
  if (baseline) {
    const span = (k) => {
      const r = rows.map((x) => x[`${k}_ratio`]).sort((a, b) => a - b);
      return `median ${x2(r[r.length >> 1])}, from ${x2(r[0])} to ${x2(r[r.length - 1])}`;
    };
    L.push('## Against the baseline', '', `Over the ${rows.length} models: trainStep ${span('train_step')}; evaluate ${span('evaluate')}; ` +
      `a token of generate ${span('generate_token')}.`, '');
  }
  for (const name of [...new Set(rows.map((r) => r.task))]) {
    const of = rows.filter((r) => r.task === name);
    const s = of[0].shape;
    L.push(`## ${name}`, '', `seqLen ${s.seqLen}, vocab ${s.vocab}, batch ${s.batch}, dModel ${s.dModel}, ${s.heads} heads, ${s.layers} layers, dFF ${s.dFF}.`, '');
    if (baseline) {
      L.push('| variant | parameters | trainStep ms | / baseline | evaluate ms | / baseline | generate ms/token | / baseline |', '|---|---:|---:|---:|---:|---:|---:|---:|');
      for (const r of of) L.push(`| ${r.variant} | ${r.parameters} | ${cell(r.this.train_step)} | ${x2(r.train_step_ratio)} | ${cell(r.this.evaluate)} | ${x2(r.evaluate_ratio)} | ${cell(r.this.generate_token)} | ${x2(r.generate_token_ratio)} |`);
    } else {
      L.push('| variant | parameters | trainStep ms | evaluate ms | generate ms/token |', '|---|---:|---:|---:|---:|');
      for (const r of of) L.push(`| ${r.variant} | ${r.parameters} | ${cell(r.this.train_step)} | ${cell(r.this.evaluate)} | ${cell(r.this.generate_token)} |`);
    }
    L.push('');
  }
  return L.join('\n');
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain) {
  const status = respawnWithFlags(fileURLToPath(import.meta.url), () => true);
  if (status != null) process.exit(status);
  const { values } = parseArgs({ options: {
    quick: { type: 'boolean', default: false }, out: { type: 'string' }, baseline: { type: 'string' },
    threads: { type: 'string', default: '1' }, reps: { type: 'string' }, child: { type: 'string' }, rounds: { type: 'string' },
  } });
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1 || threads > 16) { console.error(`--threads must be an integer from 1 to 16, got ${values.threads}`); process.exit(2); }
  const fail = (e) => { console.error(e?.stack ?? e); process.exit(1); };
  if (values.child) { // one build's models, for the threaded phase: JSON rows on the last line
    open(path.resolve(values.child), threads)
      .then(async (lab) => { const rows = await timeModels(lab, Number(values.rounds)); lab.dispose(); console.log(JSON.stringify(rows)); process.exit(0); })
      .catch(fail);
  } else {
    const common = { quick: values.quick, dir: values.out ? path.resolve(values.out) : HERE, baseline: values.baseline ? path.resolve(values.baseline) : null };
    (threads > 1 ? stepCostThreadsPhase({ ...common, threads, reps: values.reps ? Number(values.reps) : undefined }) : stepCostPhase(common)).catch(fail);
  }
}
