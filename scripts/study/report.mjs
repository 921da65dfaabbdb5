// report.mjs — turns the study's experiments/results.json into summary.json (the numbers the page
// and the README quote), results.md (every table) and the SVG plots, with the statistics of
// scripts/lib/stats.mjs (Wilson intervals for counts, Student-t intervals for means) and the
// charts of scripts/lib/svg.mjs. Also chooseLr, the protocol's choice of a learning rate.
import { existsSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { wilson, meanCI, median, fisherExact, holm, formatProportion } from '../lib/stats.mjs';
import { lineChart, pointsChart, barChart, smallMultiples } from '../lib/svg.mjs';
import {
  LRS, LR_LADDER, SWEEP_SEEDS, THRESHOLD, HEADLINE_TASKS, CAPACITY_VARIANTS, COST_VARIANTS, COST_MODEL, GENERATE_RUNS, variantNames,
  TEXT_STRIDE,
} from './plan.mjs';
import { PAPERS } from './papers.mjs';

const TIE = 0.002; // validation accuracies this close are a tie, broken by the validation loss

const jobsOf = (result) => Object.values(result.jobs ?? {});
const trainRuns = (result, experiment, task, variant) => jobsOf(result).filter((j) =>
  j.kind === 'train' && j.experiment === experiment && j.task.name === task && (variant == null || j.variant === variant) && !j.pretrained);

/**
 * The sweep seeds a recorded study used for a task: its protocol's per-task seeds, else its one
 * list (a study recorded before the sweeps of some tasks took two seeds).
 */
export const sweepSeedsIn = (result, task) => result.protocol?.sweepSeedsByTask?.[task] ?? result.protocol?.sweepSeeds ?? SWEEP_SEEDS;

/**
 * Where the sweep of (task, variant) stands (scripts/study/plan.mjs): the rates swept, each one's
 * score (the mean over the task's sweep seeds), the best, and `next`, the rate still to sweep
 * (null when the sweep is complete: every seed has run the base rates and the best is inside the
 * rates swept or at an end of LR_LADDER, in which case `edge` is set). Scores: text, the lowest
 * mean validation loss; the rest, the highest mean validation accuracy, ties within TIE broken by
 * the lower mean validation loss; a rate where any seed's run failed (diverged) ranks last.
 */
export function sweepState(result, task, variant) {
  const experiment = task === 'verses' ? 'transfer-sweep' : 'sweep';
  const seeds = sweepSeedsIn(result, task);
  const runs = trainRuns(result, experiment, task, variant).filter((r) => (r.validation || r.error) && seeds.includes(r.seed));
  const base = result.protocol?.lrs ?? LRS;
  const ladder = result.protocol?.lrLadder ?? LR_LADDER;
  const done = (lr) => runs.filter((r) => r.lr === lr).length >= seeds.length;
  const missing = base.filter((lr) => !done(lr));
  if (missing.length) return { complete: false, next: missing[0], best: null, scores: [], edge: false };
  const swept = ladder.filter(done);
  const scores = swept.map((lr) => {
    const rs = runs.filter((r) => r.lr === lr);
    const ok = rs.filter((r) => !r.error);
    const all = ok.length === rs.length;
    return { lr, loss: all ? ok.reduce((x, r) => x + r.validation.loss, 0) / ok.length : Infinity,
      acc: all ? ok.reduce((x, r) => x + r.validation.accuracy, 0) / ok.length : -Infinity };
  });
  const ranked = scores.slice().sort(task === 'text'
    ? (a, b) => a.loss - b.loss
    : (a, b) => (Math.abs(a.acc - b.acc) > TIE ? b.acc - a.acc : a.loss - b.loss));
  const best = ranked[0].lr;
  const i = ladder.indexOf(best);
  let next = null;
  if (best === Math.max(...swept) && i + 1 < ladder.length) next = ladder[i + 1];
  else if (best === Math.min(...swept) && i > 0) next = ladder[i - 1];
  const complete = next === null;
  return { complete, next, best, scores, edge: complete && (i === 0 || i === ladder.length - 1) };
}

/** The learning rate the protocol chooses for (task, variant), or null while its sweep is not complete. */
export function chooseLr(result, task, variant) {
  const st = sweepState(result, task, variant);
  return st.complete ? st.best : null;
}

// ---- numbers ----

/** { lr: mean of metric over the runs at lr } for the rates where no run failed. */
function meanByRate(runs, metric) {
  const out = {};
  for (const lr of new Set(runs.map((r) => r.lr))) {
    const at = runs.filter((r) => r.lr === lr);
    if (at.some((r) => r.error)) continue;
    out[lr] = at.reduce((x, r) => x + metric(r), 0) / at.length;
  }
  return out;
}

const stepTo = (run, level) => run.history?.find((h) => h[4] >= level)?.[0] ?? null;
const metricOf = (task, run) => {
  if (!run || run.error) return NaN;
  if (task === 'text') return run.full?.bits ?? run.final.evalBits;
  if (task === 'verses') return run.full?.accuracy ?? run.final.evalAccuracy;
  return run.final.evalAccuracy;
};

// Per-head state of a causal head while decoding, in floats (docs/model.md, "Generation"): the
// linear family's running sums, or the cached keys and values of every earlier position.
function stateFloats(variant, seqLen, dh) {
  switch (variant) {
    case 'linear': return dh * dh + dh;
    case 'taylor': return (dh + 1) * dh + (dh + 1);
    case 'efficient': return dh * dh + 2 * dh;
    case 'softmax': case 'mixture': return 2 * seqLen * dh;
    default: return seqLen * dh; // Synthesizer heads: values only (their logits read no keys)
  }
}

/**
 * The text task's character n-gram lines on the test chapters (experiments/ngram.json, written
 * by scripts/study/ngram-lines.mjs): { windows: { order: bits }, full: { order: bits } }, or null.
 */
function ngramLinesRecorded() {
  const file = new URL('../../experiments/ngram.json', import.meta.url);
  if (!existsSync(file)) return null;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const pick = (how) => Object.fromEntries(r.orders.map((o) => [o, r.heldout[o][how]]));
  return { windows: pick('windows'), full: pick('full'), orders: r.orders };
}

export function summarize(result) {
  const s = {
    date: result.lastJob?.at ?? result.updated ?? result.started, commit: result.lastJob?.commit ?? result.commit,
    dirty: result.lastJob?.dirty ?? result.dirty, machine: result.machine, build: result.build,
    stepsScale: result.stepsScale ?? 1, protocol: result.protocol, phaseMs: result.phaseMs, headline: {}, timing: {},
  };
  s.ngram = ngramLinesRecorded();
  const jobs = jobsOf(result);
  for (const j of jobs.filter((x) => x.kind === 'timing' && !x.error)) (s.timing[j.task.name] ??= {})[j.variant] = j.msPerStep;
  for (const task of [...HEADLINE_TASKS]) {
    const info = result.tasks?.[task];
    const variants = {};
    for (const v of result.variants ?? variantNames()) {
      const st = sweepState(result, task, v);
      const chosen = st.complete ? st.best : null;
      // the reported seeds at the chosen rate only: a sweep that gained a seed can move the choice,
      // and runs at the rate chosen before are then kept in results.json but not reported
      const runs = trainRuns(result, 'report', task, v).filter((r) => chosen == null || r.lr === chosen).sort((a, b) => a.seed - b.seed);
      const sweepSeeds = sweepSeedsIn(result, task);
      const sweep = trainRuns(result, 'sweep', task, v).filter((r) => sweepSeeds.includes(r.seed));
      if (!runs.length && !sweep.length) continue;
      const values = runs.map((r) => metricOf(task, r));
      const ok = values.filter(Number.isFinite);
      const ci = meanCI(ok);
      // an accuracy lies in [0, 1]: a t interval over bimodal seeds (a run learns or it does not)
      // can reach past either end, and is cut there (the protocol line says so)
      if (task !== 'text') Object.assign(ci, { lo: Math.max(0, ci.lo), hi: Math.min(1, ci.hi) });
      const e = {
        lr: runs[0]?.lr ?? chosen, lrAtLadderEnd: st.edge, params: runs[0]?.parameterCount ?? sweep[0]?.parameterCount,
        seeds: runs.map((r) => r.seed), values, mean: ci.mean, lo: ci.lo, hi: ci.hi, n: runs.length,
        failed: runs.filter((r) => r.error).map((r) => r.error),
        // per rate, the mean over the sweep seeds that ran it (a rate where one failed: failed)
        sweep: meanByRate(sweep, (r) => (task === 'text' ? r.validation.bits : r.validation.accuracy)),
        sweepLoss: meanByRate(sweep, (r) => r.validation.loss),
        sweepFailed: [...new Set(sweep.filter((r) => r.error).map((r) => r.lr))],
        sweepSeeds: [...new Set(sweep.map((r) => r.seed))].sort((a, b) => a - b),
        msPerStep: s.timing[task]?.[v] ?? null,
      };
      if (task !== 'text') {
        const learned = values.filter((x) => x >= THRESHOLD).length;
        e.learned = learned;
        e.wilson = wilson(learned, runs.length);
        e.stepsTo = runs.map((r) => stepTo(r, THRESHOLD));
        const reached = e.stepsTo.filter((x) => x != null);
        e.medianSteps = reached.length ? median(reached) : null;
      }
      if (task === 'text') {
        // the full-context scoring (plan.mjs TEXT_STRIDE), where the runs recorded it
        e.seqLen = runs[0]?.taskSeqLen;
        const strided = runs.map((r) => r.full?.strided).filter((x) => Number.isFinite(x?.bits));
        if (strided.length) e.strided = { stride: strided[0].stride, values: strided.map((x) => x.bits), n: strided.length, ...meanCI(strided.map((x) => x.bits)) };
      }
      const ent = runs.find((r) => r.rowEntropy)?.rowEntropy;
      if (ent) e.rowEntropy = ent;
      variants[v] = e;
    }
    if (!Object.keys(variants).length) continue;
    const settings = info?.settings ?? {};
    s.headline[task] = { chance: info?.chance, settings, evalEvery: settings.evalEvery, variants };
    // Fisher's exact test of each variant's learned count against softmax's
    if (task !== 'text' && variants.softmax) {
      const sm = variants.softmax;
      for (const e of Object.values(variants)) {
        e.fisherVsSoftmax = fisherExact(e.learned, e.n - e.learned, sm.learned, sm.n - sm.learned);
      }
      // the task's comparisons taken together (Holm): with five seeds against five, the smallest
      // Fisher p is 2/252 = 0.008, which twelve comparisons lift to 0.095
      const others = Object.entries(variants).filter(([v, e]) => v !== 'softmax' && e.n > 0);
      holm(others.map(([, e]) => e.fisherVsSoftmax)).forEach((p, i) => { others[i][1].fisherHolm = p; });
      s.headline[task].comparisons = others.length;
    }
  }
  // learning-rate sensitivity: how much of the best validation metric each variant keeps across the sweep
  const spread = {};
  for (const [task, t] of Object.entries(s.headline)) {
    for (const [v, e] of Object.entries(t.variants)) {
      const xs = Object.values(e.sweep);
      if (xs.length < 2) continue;
      (spread[v] ??= {})[task] = task === 'text' ? Math.max(...xs) - Math.min(...xs) : Math.max(...xs) - Math.min(...xs);
    }
  }
  s.lrSensitivity = lrSensitivity(s, spread);
  s.capacity = capacity(result);
  s.transfer = transfer(result);
  s.cost = cost(result);
  return s;
}

function lrSensitivity(s, spread) {
  // the accuracy tasks: how many of the base rates reach the threshold on the validation split.
  // Only the base rates, which every variant ran: a sweep extends past them only where its best
  // rate was at an edge, so counting the extensions would give some variants more (failing) tries.
  const base = s.protocol?.lrs ?? LRS;
  const rows = {};
  for (const [task, t] of Object.entries(s.headline)) {
    if (task === 'text') continue;
    for (const [v, e] of Object.entries(t.variants)) {
      // a run that failed (diverged) at a base rate is a miss, not a gap
      const xs = base.map((lr) => (e.sweepFailed?.includes(lr) ? -Infinity : e.sweep[lr])).filter((x) => x !== undefined);
      if (!xs.length) continue;
      (rows[v] ??= {})[task] = { good: xs.filter((x) => x >= THRESHOLD).length, of: xs.length };
    }
  }
  const sum = (v) => Object.values(rows[v] ?? {}).reduce((a, r) => [a[0] + r.good, a[1] + r.of], [0, 0]);
  const attention = sum('softmax');
  const linear = ['linear', 'efficient', 'taylor'].map(sum).reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0]);
  if (!attention[1] || !linear[1]) return { rows, spread, summary: 'n/a', verdict: 'not comparable' };
  const p = fisherExact(attention[0], attention[1] - attention[0], linear[0], linear[1] - linear[0]);
  // descriptive: the rates share their sweep seeds and the tasks, so they are not independent draws
  const summary = `base rates of the sweep (${base.join(', ')}; every accuracy task) whose validation accuracy, the mean over the task's sweep seeds, reached ${100 * THRESHOLD} %: ` +
    `softmax ${formatProportion(...attention)}, linear family ${formatProportion(...linear)}; Fisher p = ${p.toFixed(2)} (descriptive: the rates share their sweep seeds and the tasks)`;
  const fa = attention[0] / attention[1], fl = linear[0] / linear[1];
  const verdict = fl < fa ? (p < 0.05 ? 'agrees in direction' : `same direction, not significant (p = ${p.toFixed(2)})`) : 'disagrees in direction';
  return { rows, spread, summary, verdict, p };
}

function capacity(result) {
  const recorded = jobsOf(result).filter((j) => j.kind === 'train' && j.experiment === 'capacity');
  if (!recorded.length) return null;
  // the defaults' own cell: the headline recall runs of the same variants
  const base = result.tasks?.recall;
  // A cell compares with the defaults' cell only when trained as recall is now: at the variant's
  // chosen recall rate and recall's schedule. Runs recorded before either changed are left out
  // and counted in the summary.
  const asRecallNow = (r) => r.lr === chooseLr(result, 'recall', r.variant) &&
    (!base || ['steps', 'warmup', 'batch'].every((k) => r.settings?.[k] === base.settings[k]));
  const capacityRuns = recorded.filter(asRecallNow);
  const stale = recorded.length - capacityRuns.length;
  const variants = result.protocol?.capacityVariants ?? CAPACITY_VARIANTS;
  const baseRuns = base ? trainRuns(result, 'report', 'recall').filter((r) => variants.includes(r.variant))
    .map((r) => ({ ...r, cell: { pairs: base.options.pairs, dModel: base.settings.dModel } })) : [];
  const runs = [...capacityRuns, ...baseRuns];
  const cells = new Map();
  for (const r of runs) {
    const key = `${r.variant}|${r.cell.pairs}|${r.cell.dModel}`;
    if (!cells.has(key)) {
      const dh = r.cell.dModel / r.settings.heads;
      cells.set(key, { variant: r.variant, pairs: r.cell.pairs, dModel: r.cell.dModel, heads: r.settings.heads, dh,
        seqLen: r.taskSeqLen, state: stateFloats(r.variant, r.taskSeqLen, dh), values: [], seeds: [] });
    }
    const c = cells.get(key);
    c.values.push(metricOf('recall', r));
    c.seeds.push(r.seed);
  }
  const rows = [...cells.values()].map((c) => {
    const ok = c.values.filter(Number.isFinite);
    return { ...c, mean: ok.reduce((a, b) => a + b, 0) / ok.length, min: Math.min(...ok), max: Math.max(...ok) };
  });
  // Zoology's claim, checked: softmax learns every cell it was run on; and at the largest pair count
  // each fixed-state variant learns only with the most width (or not at all). One rule for every
  // variant: a cell is learned when every seed run on it reached the threshold.
  const learned = (r) => r.values.length > 0 && r.values.every((x) => x >= THRESHOLD); // a failed run (NaN) is not learned
  const soft = rows.filter((r) => r.variant === 'softmax');
  const softAll = soft.length && soft.every(learned);
  const fixedState = rows.filter((r) => ['linear', 'efficient', 'taylor'].includes(r.variant));
  const fixedFail = fixedState.filter((r) => !learned(r)).length;
  const synth = rows.filter((r) => !soft.includes(r) && !fixedState.includes(r) && r.variant !== 'mixture');
  const staleText = stale ? `; ${stale} runs of the grid recorded at an earlier recall rate or schedule are left out` : '';
  // a grid being recorded (seed by seed): say how far it has got
  const planned = result.protocol?.capacitySeeds?.length ?? 0;
  const short = rows.filter((r) => r.pairs !== base?.options.pairs || r.dModel !== base?.settings.dModel).filter((r) => r.values.length < planned).length;
  const partText = short ? `; ${short} cells have fewer than the protocol's ${planned} seeds so far` : '';
  if (!capacityRuns.length) return { rows: [], summary: `the grid is not recorded at recall's present settings${staleText}`, verdict: 'not recorded at these settings', stale };
  const summary = `a cell counts when every seed run on it reached ${100 * THRESHOLD} %: softmax in ${soft.filter(learned).length} of ${soft.length} cells, ` +
    `the linear family (linear, efficient, taylor) in ${fixedState.length - fixedFail} of ${fixedState.length}` +
    (synth.length ? `, the Synthesizers (${[...new Set(synth.map((r) => r.variant))].join(', ')}) in ${synth.filter(learned).length} of ${synth.length}` : '') + partText + staleText;
  const verdict = !soft.length ? 'not comparable' : softAll && fixedFail > 0 ? 'agrees' : softAll ? 'agrees on attention; the fixed-state models did not fail here' : 'disagrees: softmax itself did not solve every cell';
  return { rows, summary, verdict, stale };
}

function transfer(result) {
  const runs = jobsOf(result).filter((j) => j.kind === 'train' && j.experiment === 'transfer');
  if (!runs.length) return null;
  const variants = {};
  for (const v of [...new Set(runs.map((r) => r.variant))]) {
    const scratch = runs.filter((r) => r.variant === v && !r.pretrained).sort((a, b) => a.seed - b.seed);
    const tuned = runs.filter((r) => r.variant === v && r.pretrained).sort((a, b) => a.seed - b.seed);
    const a = scratch.map((r) => metricOf('verses', r)), b = tuned.map((r) => metricOf('verses', r));
    const pairs = scratch.map((r, i) => [r.seed, a[i], b[tuned.findIndex((t) => t.seed === r.seed)]]).filter((p) => Number.isFinite(p[1]) && Number.isFinite(p[2]));
    variants[v] = {
      lr: scratch[0]?.lr, scratch: { values: a, ...meanCI(a.filter(Number.isFinite)) }, finetuned: { values: b, ...meanCI(b.filter(Number.isFinite)) },
      gain: meanCI(pairs.map((p) => p[2] - p[1])), seeds: pairs.map((p) => p[0]),
    };
  }
  return { variants, chance: result.tasks?.verses?.chance };
}

function cost(result) {
  const jobs = jobsOf(result).filter((j) => j.experiment === 'cost' && !j.error);
  if (!jobs.length) return null;
  const train = {}, generate = {};
  for (const j of jobs) {
    if (j.kind === 'cost-train') (train[j.variant] ??= []).push({ seqLen: j.seqLen, tokensPerSecond: j.tokensPerSecond, msPerStep: j.msPerStep });
    if (j.kind === 'cost-generate') generate[j.variant] = { windows: j.windows, totalMs: j.totalMs };
  }
  for (const xs of Object.values(train)) xs.sort((a, b) => a.seqLen - b.seqLen);
  return { train, generate };
}

// ---- writing ----

const pct = (x, d = 1) => (Number.isFinite(x) ? `${(100 * x).toFixed(d)}` : '–');
const num = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const lrText = (x) => (x == null ? '–' : x >= 1e-3 ? String(x) : x.toExponential(0));
const pval = (p) => (!Number.isFinite(p) ? '–' : p < 0.001 ? '< 0.001' : p.toFixed(3));
const styleOf = (v) => Math.max(0, variantNames().indexOf(v));

// What Holm's adjustment does to the best a count can do: with n seeds against n, the smallest
// Fisher p (n of n against 0 of n) alone and over the most comparisons a task made.
function holmNote(s) {
  const n = (s.protocol?.reportSeeds ?? []).length;
  const m = Math.max(0, ...Object.values(s.headline).map((t) => t.comparisons ?? 0));
  if (!n || !m) return 'no comparisons';
  const p = fisherExact(n, 0, 0, n);
  const adj = Math.min(1, m * p);
  return `with ${n} seeds against ${n} and ${m} comparisons the smallest p is ${pval(p)} alone, ${pval(adj)} adjusted${adj >= 0.05 ? ': no count difference can reach 5 %' : ''}`;
}

function headlineTable(task, t) {
  const text = task === 'text';
  const rows = [];
  if (text) {
    // the windows the runs trained on, and the stride they were scored at (none yet: the plan's)
    const full = Object.values(t.variants).find((e) => e.strided)?.strided;
    const stride = full?.stride, every = stride ?? TEXT_STRIDE;
    const seqLen = Object.values(t.variants).map((e) => e.seqLen).find(Number.isFinite);
    rows.push(`| variant | parameters | lr | test bits/char in the windows, mean [95 % CI] | per seed | with full context${stride ? ` (stride ${stride})` : ''}, mean [95 % CI] | ms/step alone |`, '|---|---:|---:|---|---|---|---:|');
    for (const [v, e] of Object.entries(t.variants)) {
      const full = e.strided ? `${num(e.strided.mean)} [${num(e.strided.lo)}, ${num(e.strided.hi)}]${e.strided.n < e.n ? ` (${e.strided.n} of ${e.n} seeds)` : ''}` : 'not recorded';
      rows.push(`| ${v} | ${e.params ?? '–'} | ${lrText(e.lr)} | ${num(e.mean)} [${num(e.lo)}, ${num(e.hi)}] | ${e.values.map((x) => num(x)).join(', ')} | ${full} | ${num(e.msPerStep, 1)} |`);
    }
    rows.push('', `Two scorings of the same test characters: **in the windows** (the ${seqLen}-character windows the model trains on, each character after 0–${seqLen - 1} others of its chapter, as train()'s evaluations) and **with full context** (windows every ${every} characters, each character predicted once after at least ${seqLen - every} and up to ${seqLen - 1} others: evaluateHeldOut's stride). ` +
      (stride ? '' : 'These runs were recorded before the full-context scoring was: it is recorded by a text run made since (scripts/study/run-job.mjs), so the column waits for text to be recorded again.'));
  } else {
    rows.push(`| variant | parameters | lr | learned (≥ ${100 * THRESHOLD} %), 95 % Wilson CI | vs softmax: Fisher p (Holm, ${t.comparisons ?? '–'} tests) | held-out accuracy %, mean [95 % CI] | per seed | steps to ${100 * THRESHOLD} % (per seed) | ms/step alone |`,
      '|---|---:|---:|---|---:|---|---|---|---:|');
    for (const [v, e] of Object.entries(t.variants)) {
      rows.push(`| ${v} | ${e.params ?? '–'} | ${lrText(e.lr)} | ${e.learned} of ${e.n} (${pct(e.wilson.lo, 0)}–${pct(e.wilson.hi, 0)} %) | ${v === 'softmax' ? '–' : `${pval(e.fisherVsSoftmax)} (${pval(e.fisherHolm)})`} | ` +
        `${pct(e.mean)} [${pct(e.lo)}, ${pct(e.hi)}] | ${e.values.map((x) => pct(x, 0)).join(', ')} | ${e.stepsTo.map((x) => x ?? '–').join(', ')} | ${num(e.msPerStep, 1)} |`);
    }
  }
  return rows.join('\n');
}

/** The sweep seeds a task's sweeps actually ran on (read from its runs, not from the plan), ascending. */
function taskSweepSeeds(t) {
  return [...new Set(Object.values(t.variants).flatMap((e) => e.sweepSeeds ?? []))].sort((a, b) => a - b);
}

/** The sweep seeds behind a task's sweep table, in words: "the mean of sweep seeds 1001 and 1002" or "sweep seed 1001". */
function seedsText(t) {
  const seeds = taskSweepSeeds(t);
  return seeds.length > 1 ? `the mean of sweep seeds ${seeds.join(' and ')}` : `sweep seed ${seeds[0] ?? '–'}`;
}

function sweptRates(t) {
  return LR_LADDER.filter((lr) => Object.values(t.variants).some((e) => e.sweep[lr] !== undefined));
}

function sweepTable(task, t) {
  const lrs = sweptRates(t);
  const rows = [`| variant | ${lrs.map((lr) => `lr ${lrText(lr)}`).join(' | ')} | chosen |`, `|---|${lrs.map(() => '---:').join('|')}|---:|`];
  for (const [v, e] of Object.entries(t.variants)) {
    rows.push(`| ${v} | ${lrs.map((lr) => (e.sweep[lr] === undefined ? '' : task === 'text' ? num(e.sweep[lr]) : pct(e.sweep[lr]))).join(' | ')} | ${lrText(e.lr)}${e.lrAtLadderEnd ? ' (end of the ladder)' : ''} |`);
  }
  return rows.join('\n');
}

function curvesChart(task, t, result, ngram = null) {
  const text = task === 'text';
  const panels = [];
  for (const v of Object.keys(t.variants)) {
    const runs = trainRuns(result, 'report', task, v).filter((r) => !r.error);
    if (!runs.length) continue;
    const steps = runs[0].history.map((h) => h[0]);
    const at = (i) => runs.map((r) => (text ? r.history[i]?.[3] / Math.LN2 : r.history[i]?.[4])).filter(Number.isFinite);
    const points = steps.map((x, i) => [x, meanCI(at(i)).mean]);
    const band = steps.map((x, i) => { const c = meanCI(at(i)); return [x, c.lo, c.hi]; });
    panels.push({ title: v, series: [{ name: v, points, band, style: styleOf(v) }] });
  }
  const chance = t.chance?.value;
  return smallMultiples({
    title: `${task}: held-out ${text ? 'bits per character' : 'accuracy'} during training`,
    subtitle: `mean of ${t.variants.softmax?.n ?? 5} seeds, band: 95 % interval; each variant at its own learning rate; evaluated every ${t.evalEvery} steps${text ? ' (on 128 test windows)' : ''}`,
    kind: 'line', columns: 4, legend: 'none', panels,
    x: { label: 'step', min: 0 }, y: text ? { label: 'bits/char' } : { label: 'held-out accuracy', min: 0, max: 1, format: (v) => `${Math.round(100 * v)} %` },
    refs: [...(Number.isFinite(chance) ? [{ y: chance, label: text ? 'uniform guess' : 'chance' }] : []), ...(text ? ngramRefs(ngram) : [])],
  });
}

/** The n-gram lines as chart refs (the study's windows scoring), or none when not recorded. */
function ngramRefs(ngram) {
  return ngram ? ngram.orders.filter((o) => o >= 3).map((o) => ({ y: ngram.windows[o], label: `${o}-gram` })) : [];
}

/** The n-gram lines in words, beside a text table. */
function ngramSentence(ngram) {
  if (!ngram) return 'No n-gram lines are recorded (node scripts/study/ngram-lines.mjs writes experiments/ngram.json).';
  const line = (how) => ngram.orders.map((o) => `${o}-gram ${num(ngram[how][o])}`).join(' · ');
  return `The n-gram lines on the same test characters (interpolated Witten–Bell, fitted on the training chapters only; experiments/ngram.json): in the study's 64-character windows, as every number above is scored, ${line('windows')}; with full context (each character after all of its order − 1 predecessors) ${line('full')} bits/char. A model above the 4-gram line has learnt no more than local statistics.`;
}

function sweepCharts(s) {
  const all = LR_LADDER.filter((lr) => Object.values(s.headline).some((t) => Object.values(t.variants).some((e) => e.sweep[lr] !== undefined)));
  const x = { label: 'learning rate', log: true, ticks: all, format: lrText };
  const seriesOf = (t) => Object.entries(t.variants).map(([v, e]) => ({ name: v, style: styleOf(v), markers: true,
    points: all.filter((lr) => e.sweep[lr] !== undefined).map((lr) => [lr, e.sweep[lr]]) }));
  const accuracy = Object.entries(s.headline).filter(([task]) => task !== 'text');
  const out = {};
  if (accuracy.length) {
    out.accuracy = smallMultiples({
      title: 'Learning-rate sensitivity: validation accuracy at each rate of the sweep',
      subtitle: `per rate, on each task's sweep seeds, the mean where there are two (${sweepSeedsLine(accuracy)}); the chosen rate is each variant's best`,
      kind: 'line', columns: Math.min(2, accuracy.length), legend: 'bottom', x,
      y: { label: 'validation accuracy', min: 0, max: 1, format: (v) => `${Math.round(100 * v)} %` },
      panels: accuracy.map(([task, t]) => ({ title: task, series: seriesOf(t) })),
      refs: [{ y: THRESHOLD, label: `${100 * THRESHOLD} %` }],
    });
  }
  if (s.headline.text) {
    out.text = lineChart({
      title: 'Learning-rate sensitivity: text, validation bits per character at each rate',
      subtitle: `per rate, ${seedsText(s.headline.text)}; lower is better`, x, y: { label: 'validation bits per character' },
      series: seriesOf(s.headline.text),
    });
  }
  return out;
}

function capacityChart(c) {
  const series = CAPACITY_VARIANTS.map((v) => ({
    name: v, style: styleOf(v), line: false,
    points: c.rows.filter((r) => r.variant === v && r.state).map((r) => [r.state, r.mean, r.min, r.max]),
  })).filter((x) => x.points.length);
  return pointsChart({
    title: 'Recall against the state a head keeps',
    subtitle: 'every cell of the capacity sweep (pairs x width); marker: mean of seeds, bar: their range. State per head: dh² + dh (linear), 2·seqLen·dh (softmax\'s keys and values), seqLen·dh (Synthesizer values)',
    x: { label: 'floats of state per head', log: 2 }, y: { label: 'held-out accuracy', min: 0, max: 1, format: (v) => `${Math.round(100 * v)} %` },
    series, refs: [{ y: THRESHOLD, label: `${100 * THRESHOLD} %` }],
  });
}

function transferChart(tr) {
  const vs = Object.keys(tr.variants);
  return barChart({
    title: 'Transfer: which book group a verse is from, from scratch and after pretraining on the corpus',
    subtitle: 'balanced accuracy on every test verse, mean of seeds with 95 % intervals; chance 12.5 %',
    categories: vs, x: { label: 'variant' }, y: { label: 'balanced accuracy', format: (v) => `${Math.round(100 * v)} %` },
    series: [
      { name: 'from scratch', values: vs.map((v) => { const e = tr.variants[v].scratch; return [e.mean, e.lo, e.hi]; }) },
      { name: 'pretrained, then fine-tuned', values: vs.map((v) => { const e = tr.variants[v].finetuned; return [e.mean, e.lo, e.hi]; }) },
    ],
    refs: Number.isFinite(tr.chance) ? [{ y: tr.chance, label: 'chance' }] : [],
  });
}

/** The power of ten at or below the smallest value, so a log axis leaves room under the data. */
const floorDecade = (xs) => 10 ** Math.floor(Math.log10(Math.min(...xs.filter((x) => x > 0))));

function costCharts(c) {
  const train = lineChart({
    title: 'Training throughput against sequence length',
    subtitle: 'tokens per second, 4,096 tokens a step (dModel 64, 2 layers, 4 heads), one thread, one training at a time',
    x: { label: 'sequence length', log: 2 }, y: { label: 'training tokens per second', log: true },
    series: COST_VARIANTS.filter((v) => c.train[v]).map((v) => ({ name: v, style: styleOf(v), markers: true, points: c.train[v].map((p) => [p.seqLen, p.tokensPerSecond]) })),
  });
  const gen = lineChart({
    title: 'Generation: ms per token against position',
    subtitle: 'one sequence of 2,048 tokens, median over each window of positions, one thread (an untrained model: the cost of a step does not depend on the weights)',
    x: { label: 'position', log: 2 }, y: { label: 'ms per token', log: true, min: floorDecade(Object.values(c.generate).flatMap((g) => g.windows.map((w) => w.ms))) },
    series: COST_VARIANTS.filter((v) => c.generate[v]).map((v) => ({ name: v, style: styleOf(v), markers: true, points: c.generate[v].windows.map((w) => [Math.sqrt(w.from * w.to), w.ms]) })),
  });
  return { train, gen };
}

function wallChart(s, result) {
  const t = s.headline.text;
  if (!t) return null;
  const series = [];
  for (const v of COST_VARIANTS) {
    const runs = trainRuns(result, 'report', 'text', v).filter((r) => !r.error);
    const ms = s.timing.text?.[v];
    if (!runs.length || !Number.isFinite(ms)) continue;
    const pts = runs[0].history.map((h, i) => [h[0] * ms / 1000, meanCI(runs.map((r) => r.history[i]?.[3] / Math.LN2).filter(Number.isFinite)).mean]);
    series.push({ name: v, style: styleOf(v), points: pts });
  }
  if (!series.length) return null;
  return lineChart({
    title: 'Text: test bits per character against training time',
    subtitle: 'seqLen 64; time = steps x ms/step measured alone (the timing pass), evaluations left out; mean of seeds',
    x: { label: 'training time, seconds (one thread)' }, y: { label: 'bits per character' }, series, refs: ngramRefs(s.ngram),
  });
}

function papersTable(s) {
  const rows = ['| # | finding | published | where it was read | attnlab | verdict | why |', '|---|---|---|---|---|---|---|'];
  for (const p of PAPERS) {
    let ours = 'n/a', verdict = 'not comparable';
    try { ours = p.ours(s); verdict = p.verdict(s); } catch { /* a part of the study not recorded */ }
    let why = 'n/a';
    try { why = typeof p.why === 'function' ? p.why(s) : p.why; } catch { /* a recorded file missing or unreadable */ }
    rows.push(`| ${p.id} | **${p.paper}**: ${p.claim} (${p.setting}) | ${p.published} | ${p.source} | ${ours} | ${verdict} | ${why} |`);
  }
  return rows.join('\n');
}

function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  const m = Math.round(ms / 60000);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min`;
}

/** Which sweep seeds each task's sweeps ran on, from the runs themselves: "recall, copy: seeds 1001 and 1002; text: seed 1001". */
function sweepSeedsLine(tasks) {
  const by = tasks.map(([task, t]) => [task, taskSweepSeeds(t).join(' and ')]);
  const groups = new Map();
  for (const [task, seeds] of by) groups.set(seeds, [...(groups.get(seeds) ?? []), task]);
  return [...groups].map(([seeds, ts]) => `${ts.join(', ')}: ${seeds.includes(' and ') ? 'seeds' : 'seed'} ${seeds}`).join('; ');
}

export function writeReport(result, out, { quick = false, recorded = null } = {}) {
  mkdirSync(out, { recursive: true });
  const s = summarize(result);
  writeFileSync(path.join(out, 'summary.json'), `${JSON.stringify(s, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(6)) : v), 1)}\n`);
  const md = [];
  const plots = {};
  md.push(`# ${quick ? 'Quick run' : 'The study'}: ${quick ? 'the headline rows at two seeds' : 'is token-to-token attention necessary, and is softmax?'}`, '');
  if (s.stepsScale !== 1) md.push(`**Steps scaled by ${s.stepsScale}: a trial of the pipeline, not a result.**`, '');
  md.push(`Generated by \`npm run experiments${quick ? ' -- --quick' : ''}\` (scripts/experiments.mjs; the plan: scripts/study/plan.mjs) from ${quick ? 'experiments/quick/results.json' : 'results.json'}, ` +
    `last job ${String(s.date).slice(0, 16).replace('T', ' ')} UTC at commit ${String(s.commit).slice(0, 7)}${s.dirty ? ` (${s.dirty} file${s.dirty === 1 ? '' : 's'} uncommitted)` : ''}, on ${s.machine?.cpu} (${s.machine?.cores} cores), ${s.machine?.node}, the ${s.build} build, one thread per training.` +
    (s.phaseMs && Object.keys(s.phaseMs).length ? ` Time per phase: ${Object.entries(s.phaseMs).map(([p, ms]) => `${p} ${fmtMs(ms)}`).join(', ')}.` : ''), '');
  if (!quick) {
    md.push('## Protocol', '',
      `- Every (task, variant): a learning-rate sweep over ${(s.protocol?.lrs ?? LRS).join(', ')} (extended outward along ${(s.protocol?.lrLadder ?? LR_LADDER).join(', ')} while the best rate is at an edge of those swept) on the task's sweep seeds (${sweepSeedsLine(Object.entries(s.headline))}; never reported), the rate chosen on the **validation** split (an independent stream for the synthetic tasks; the validation chapters for text and verses): the highest mean validation accuracy over the sweep seeds, ties within ${100 * TIE} points broken by the lower mean validation loss; for text, the lowest mean validation bits per character. A rate chosen at an end of the ladder is flagged beside its sweep. Then seeds ${(s.protocol?.reportSeeds ?? []).join(', ')} at that rate, reported on the **held-out** split (the test chapters for text and verses).`,
      `- A run's seed seeds the model and its data. Every other setting is the task's default (src/js/tasks.js), chosen by pilots of softmax alone before any other variant ran on it (the pilots are recorded there and in experiments/notes.md).`,
      `- Accuracy tasks: a run has **learned** the task when its final held-out accuracy is ≥ ${100 * THRESHOLD} %; counts with 95 % Wilson intervals and Fisher's exact test against softmax's count, each p alone and, in brackets, Holm-adjusted over the task's comparisons (${holmNote(s)}); mean accuracy with a 95 % Student-t interval over seeds, cut at 0 and 100 % (with bimodal outcomes read the counts first); steps to ${100 * THRESHOLD} % = the first evaluation at or above it (evaluated every steps / ${s.protocol?.evalPoints ?? 40} steps, the resolution of that number).`,
      '- Text: bits per character on every character of the test chapters (202,035), mean with a 95 % t interval.',
      '- ms/step: measured in a pass of its own, one training at a time on an otherwise idle machine (10 warm-up steps, median of 5 blocks of 10). The trainings themselves ran two at a time, one per core.',
      '');
  }
  for (const [task, t] of Object.entries(s.headline)) {
    const chance = t.chance ? `chance: ${task === 'text' ? `${num(t.chance.value)} bits/char` : `${pct(t.chance.value)} %`} (${t.chance.why})` : '';
    const st = t.settings ?? {};
    md.push(`## ${task}`, '', `${chance}. Model: dModel ${st.dModel}, ${st.heads} heads, ${st.layers} layers, dFF ${st.dFF}; ${st.steps} steps of batch ${st.batch}, warmup ${st.warmup}.`, '', headlineTable(task, t), '');
    if (task === 'text') md.push(ngramSentence(s.ngram), '');
    if (!quick) {
      md.push(`Learning-rate sweep (validation ${task === 'text' ? 'bits per character' : 'accuracy %'}, ${seedsText(t)}):`, '', sweepTable(task, t), '');
      const atEnd = Object.entries(t.variants).filter(([, e]) => e.lrAtLadderEnd).map(([v]) => v);
      const ladder = s.protocol?.lrLadder ?? LR_LADDER;
      if (atEnd.length) md.push(`Chosen at an end of the ladder the sweeps ran on (${lrText(ladder[0])}–${lrText(ladder.at(-1))}), so the best rate may lie beyond it: ${atEnd.join(', ')}.`, '');
      plots[`curves-${task}.svg`] = curvesChart(task, t, result, s.ngram);
      md.push(`![${task}: learning curves](curves-${task}.svg)`, '');
    }
    const ent = Object.entries(t.variants).filter(([, e]) => e.rowEntropy);
    if (ent.length && task === 'copy') {
      md.push('Random heads\' rows (softmax of a causal row of r): mean entropy at the start → the end of training, against a uniform row\'s:', '',
        ...ent.map(([v, e]) => `- ${v}: ${num(e.rowEntropy.start.entropy)} → ${num(e.rowEntropy.end.entropy)} nats (uniform ${num(e.rowEntropy.start.uniform)}); mean largest weight ${num(e.rowEntropy.start.maxWeight)} → ${num(e.rowEntropy.end.maxWeight)}`), '');
    }
  }
  if (quick && recorded) {
    const r = summarize(recorded);
    md.push('## Against the recorded study', '', '| task | variant | quick: learned / mean | recorded: learned / mean |', '|---|---|---|---|');
    for (const [task, t] of Object.entries(s.headline)) {
      for (const [v, e] of Object.entries(t.variants)) {
        const o = r.headline[task]?.variants?.[v];
        const f = (x) => (task === 'text' ? num(x.mean) : `${x.learned}/${x.n}, ${pct(x.mean)} %`);
        md.push(`| ${task} | ${v} | ${f(e)} | ${o ? f(o) : '–'} |`);
      }
    }
    md.push('');
  }
  if (!quick && Object.keys(s.headline).length) {
    const sw = sweepCharts(s);
    plots['lr-sensitivity.svg'] = sw.accuracy;
    plots['lr-sensitivity-text.svg'] = sw.text;
    md.push('## Learning-rate sensitivity', '', s.lrSensitivity.summary + '.', '',
      ...(sw.accuracy ? ['![validation accuracy against learning rate](lr-sensitivity.svg)', ''] : []),
      ...(sw.text ? ['![validation bits per character against learning rate](lr-sensitivity-text.svg)', ''] : []));
  }
  if (s.capacity) {
    const rows = ['| variant | pairs | dModel | seqLen | state floats / head | held-out accuracy % (seeds) |', '|---|---:|---:|---:|---:|---|'];
    for (const r of s.capacity.rows.sort((a, b) => a.variant.localeCompare(b.variant) || a.pairs - b.pairs || a.dModel - b.dModel)) {
      rows.push(`| ${r.variant} | ${r.pairs} | ${r.dModel} | ${r.seqLen ?? '–'} | ${r.state ?? '–'} | ${r.values.map((x) => pct(x, 0)).join(', ')} |`);
    }
    const any = s.capacity.rows.length > 0;
    plots['capacity.svg'] = any ? capacityChart(s.capacity) : null;
    md.push('## Capacity: recall against pairs, width and state', '', `${s.capacity.summary}.`, '', ...(any ? [rows.join('\n'), '', '![recall against state size](capacity.svg)', ''] : []));
  }
  if (s.transfer) {
    const rows = ['| variant | lr | from scratch, balanced accuracy % [95 % CI] | fine-tuned after pretraining on text | gain (paired by seed), points [95 % CI] |', '|---|---:|---|---|---|'];
    for (const [v, e] of Object.entries(s.transfer.variants)) {
      rows.push(`| ${v} | ${lrText(e.lr)} | ${pct(e.scratch.mean)} [${pct(e.scratch.lo)}, ${pct(e.scratch.hi)}] (${e.scratch.values.map((x) => pct(x, 0)).join(', ')}) | ` +
        `${pct(e.finetuned.mean)} [${pct(e.finetuned.lo)}, ${pct(e.finetuned.hi)}] (${e.finetuned.values.map((x) => pct(x, 0)).join(', ')}) | ${pct(e.gain.mean)} [${pct(e.gain.lo)}, ${pct(e.gain.hi)}] |`);
    }
    plots['transfer.svg'] = transferChart(s.transfer);
    md.push('## Transfer: pretraining on the corpus, then which book group a verse is from', '',
      'Pretrained = the text run of the same variant and seed (its final model), loaded with `resetOptimizer` and fine-tuned with the same steps and learning rate as from scratch (the rate the verses sweep chose from scratch).', '',
      rows.join('\n'), '', '![transfer](transfer.svg)', '');
  }
  if (s.cost) {
    const c = costCharts(s.cost);
    plots['cost-train.svg'] = c.train;
    plots['cost-generate.svg'] = c.gen;
    const wall = wallChart(s, result);
    if (wall) plots['text-wall-time.svg'] = wall;
    const lens = [...new Set(Object.values(s.cost.train).flat().map((p) => p.seqLen))].sort((a, b) => a - b);
    const rows = [`| variant | ${lens.map((n) => `n = ${n}`).join(' | ')} |`, `|---|${lens.map(() => '---:').join('|')}|`];
    for (const [v, xs] of Object.entries(s.cost.train)) rows.push(`| ${v} | ${lens.map((n) => { const p = xs.find((x) => x.seqLen === n); return p ? `${(p.tokensPerSecond / 1000).toFixed(1)} k` : '–'; }).join(' | ')} |`);
    const gens = Object.entries(s.cost.generate);
    const grow = gens.length ? ['| variant | ' + gens[0][1].windows.map((w) => `positions ${w.from}–${w.to}`).join(' | ') + ' | 2,047 tokens |', `|---|${gens[0][1].windows.map(() => '---:').join('|')}|---:|`,
      ...gens.map(([v, g]) => `| ${v} | ${g.windows.map((w) => w.ms.toFixed(3)).join(' | ')} | ${(g.totalMs / 1000).toFixed(2)} s |`)] : [];
    md.push('## The cost side of "is softmax necessary?"', '', 'Training tokens per second (4,096 tokens a step, one thread, alone):', '', rows.join('\n'), '', '![training throughput](cost-train.svg)', '',
      `Generation, ms per token of an untrained causal model (dModel ${COST_MODEL.dModel}, ${COST_MODEL.heads} heads, ${COST_MODEL.layers} layers; one thread, alone): each position's lowest time over ${GENERATE_RUNS} generations after a warm-up one, then the median over each window of positions:`, '', grow.join('\n'), '', '![generation time per token](cost-generate.svg)', '');
    if (wall) md.push('![text: bits per character against training time](text-wall-time.svg)', '');
  }
  // the phases a partial recording left out, named, so that an absent section is not read as nothing found
  const notRun = [
    !s.capacity && 'capacity (recall against pairs and width)',
    !s.transfer && 'transfer (pretraining on the corpus, then verses)',
    !Object.keys(s.timing).length && 'timing (ms/step of each training alone: the tables\' last column is empty)',
    !s.cost && 'cost (training tokens/s against sequence length, generation ms/token)',
  ].filter(Boolean);
  if (!quick && notRun.length) md.push('## Not run in this recording', '', `Phases of the plan with no recorded run: ${notRun.join('; ')}. \`npm run experiments\` runs them (finished jobs are kept).`, '');
  if (!quick) md.push('## Against the papers', '', 'Each row: the published finding, where its number was read, attnlab\'s numbers from this study, and whether they agree. The published side was checked against the papers\' own tables where they could be read; where only secondary copies could be, the row says so.', '', papersTable(s), '');
  const notes = path.join(out, 'notes.md');
  if (!quick && existsSync(notes)) md.push('## Reading', '', readFileSync(notes, 'utf8').trim(), '');
  writeFileSync(path.join(out, 'results.md'), `${md.join('\n')}\n`);
  // null: the plot has nothing to show now, so an earlier run's file must not stay beside the report
  for (const [file, svg] of Object.entries(plots)) {
    if (svg) writeFileSync(path.join(out, file), svg);
    else if (svg === null) rmSync(path.join(out, file), { force: true });
  }
  return s;
}
