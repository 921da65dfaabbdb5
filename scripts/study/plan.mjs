// plan.mjs — the study behind `npm run experiments` (experiments/notes.md has its reading): which
// experiments, tasks, variants, seeds and learning rates, and the jobs they make. Everything here
// was fixed before any variant but softmax was run on the settings it uses, with two exceptions,
// both added to the capacity grid after its first results and run for every capacity variant
// alike (experiments/notes.md says why): dense and random in the grid, and its 12-pair cell.
// Nothing is chosen by how a variant does, except each variant's own learning rate, which the
// protocol chooses the same way for every variant (below).
//
// The protocol, per task and variant:
//   1. a learning-rate sweep: one training per rate of LRS on each sweep seed (sweepSeedsOf: two
//      for the tasks whose runs learn or do not, one for the rest; never reported), at the task's
//      defaults otherwise, extended outward along LR_LADDER while the best rate is at an edge of
//      those swept; a rate chosen at an end of the ladder itself is flagged (results.md says so);
//   2. the rate chosen on the task's validation split (tasks.js: an independent stream for the
//      synthetic tasks, validation chapters for the corpus): the highest mean validation accuracy
//      over the sweep seeds, ties (within one sequence's worth) broken by the lower mean
//      validation loss; for text, the lowest mean validation loss (bits per character);
//   3. REPORT_SEEDS fresh seeds at that rate: the numbers reported, on the held-out (test) split.
// A run's seed seeds both the model and its data, so every number is a pure function of the job.

import { tasks } from '../../src/js/tasks.js';
import { experimentVariants, EVAL_POINTS } from '../../src/js/experiment.js';

// The experiments' facts this plan shares with the page and the benchmark live in the package
// (src/js/experiment.js); re-exported for the study's scripts.
export { THRESHOLD, EVAL_POINTS, chanceOf, COST_VARIANTS, COST_SEQLENS, COST_TOKENS, COST_MODEL, COST_VOCAB, costBatch } from '../../src/js/experiment.js';

let variants = null;
/**
 * The study's variants: every variant of the built binding with the curated extras
 * (src/js/experiment.js), as the page's Experiment view races them. Read once, from `lab` (an
 * instance the caller has) or from dist/ (so the study needs a build, as its jobs do); nothing
 * is loaded when this module is imported.
 */
export async function loadStudyVariants(lab = null) {
  if (variants) return variants;
  if (lab) return (variants = experimentVariants(lab.variants));
  let own;
  try {
    own = await (await import('../../dist/attnlab.js')).init({ threads: 1 });
  } catch (err) {
    throw new Error(`the study's variants come from dist/attnlab.js, which did not load (run \`npm run build\` first): ${err.message}`);
  }
  variants = experimentVariants(own.variants);
  own.dispose();
  return variants;
}
const loaded = () => {
  if (!variants) throw new Error('scripts/study/plan.mjs: the study\'s variants are not loaded yet (await loadStudyVariants() first)');
  return variants;
};
/** The names of the study's variants, in table order (after loadStudyVariants). */
export const variantNames = () => loaded().map((v) => v.name);

export const LRS = [3e-4, 1e-3, 3e-3, 1e-2];
/**
 * The rates a sweep may extend to: when the best of the rates swept so far is the largest (or
 * smallest) of them, the next rate outward on this ladder is swept too, until the best is inside
 * or the ladder ends. Where several rates reach 100 % the tie goes to the lower validation loss,
 * which tends to favour the largest rate: such sweeps climbed to 3e-2 or 1e-1 (notes.md).
 */
// 3e-1 and 1 were added when the tie rule had climbed to 1e-1, the old top, on copy, reverse and
// text: a rate chosen at the top rung says only that the ladder ended there
export const LR_LADDER = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1];
export const SWEEP_SEEDS = [1001];
/**
 * The tasks whose runs learn or do not (bimodal outcomes): there one seed's sweep can choose a
 * rate by the luck of that seed, so their sweeps run on two seeds and choose by the mean.
 */
export const BIMODAL_TASKS = ['recall', 'copy', 'reverse'];
export const BIMODAL_SWEEP_SEEDS = [1001, 1002];
/** The sweep seeds of a task (never reported). */
export const sweepSeedsOf = (task) => (BIMODAL_TASKS.includes(task) ? BIMODAL_SWEEP_SEEDS : SWEEP_SEEDS);
export const REPORT_SEEDS = [1, 2, 3, 4, 5];
export const TRANSFER_SEEDS = [1, 2, 3];
/** Held-out sequences evaluated during training (train()'s evalBatch) and for validation. */
export const EVAL_BATCH = 256;
/**
 * Text's full-context scoring (evaluateHeldOut's stride): windows every TEXT_STRIDE characters,
 * each test character predicted once, after at least seqLen − TEXT_STRIDE (32) characters of its
 * chapter and up to seqLen − 1 (63), where the windowed scoring gives 0-63. Recorded beside the
 * windowed bits/char of every text report run.
 */
export const TEXT_STRIDE = 32;
export const VALIDATION_BATCH = 512;

export const HEADLINE_TASKS = ['copy', 'reverse', 'sort', 'recall', 'text'];
export const ACCURACY_TASKS = ['copy', 'reverse', 'sort', 'recall', 'verses'];
/**
 * The capacity sweep's variants: softmax against the fixed-state linear family, the mixture (which
 * holds softmax), and dense and random, the Synthesizers the question is about: their weights
 * never read the keys' content, so they should not find a pair by its key at any size (at the
 * defaults every Synthesizer stayed at chance on every seed) — the grid measures that rather than
 * assuming it. The factorized ones and dense1 are left out to keep the study's budget.
 */
export const CAPACITY_VARIANTS = ['softmax', 'linear', 'efficient', 'taylor', 'mixture', 'dense', 'random'];
export const CAPACITY_SEEDS = [1, 2, 3];
/**
 * The transfer experiment's variants: the Synthesizer paper's finding is about Dense and Random
 * (trained and fixed) against softmax and their mixture; the linear family is the other question.
 * (A verses training costs 45–80 s on one thread here: all thirteen would add most of an hour.)
 */
export const TRANSFER_VARIANTS = ['softmax', 'dense', 'random', 'random-frozen', 'mixture', 'linear', 'efficient', 'taylor'];
export const GENERATE_LENGTH = 2048;
/** Generations timed per variant (after one warm-up): each position takes its lowest time. */
export const GENERATE_RUNS = 3;

/** The study's entry of a variant name (after loadStudyVariants). */
export const variantSpec = (name) => {
  const v = loaded().find((x) => x.name === name);
  if (!v) throw new Error(`unknown variant ${name}; known: ${variantNames().join(', ')}`);
  return v;
};

/** The training settings of a task at its defaults (evalEvery = steps / EVAL_POINTS). */
export function settingsOf(taskName, task, overrides = {}) {
  const d = task.defaults;
  const s = { dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF, steps: d.steps, batch: d.batch, lr: d.lr, warmup: d.warmup, ...overrides };
  s.evalEvery = Math.max(1, Math.round(s.steps / EVAL_POINTS));
  s.evalBatch = EVAL_BATCH;
  return s;
}

/**
 * The capacity grid around recall's defaults (P pairs, width D), each cell away from them in one
 * direction: half, one and a half and twice the pairs (the sequence they need grows with them),
 * half and twice the width. The defaults' own cell is the headline recall runs (seeds 1-5), not run again.
 */
export function capacityGrid() {
  const base = tasks.recall();
  const P = base.options.pairs;
  const D = base.defaults.dModel;
  const cells = [];
  // 1.5·P was added after the first grid: softmax learned P pairs and failed 2·P at width D, so
  // this cell says where between them its cliff lies (run for every capacity variant alike)
  for (const pairs of [P / 2, 1.5 * P, 2 * P]) if (Number.isInteger(pairs) && pairs >= 2) cells.push({ pairs, dModel: D });
  for (const dModel of [D / 2, 2 * D]) if (Number.isInteger(dModel) && dModel >= 16) cells.push({ pairs: P, dModel });
  return cells.map((c) => ({ ...c, taskOptions: recallOptionsFor(base, c.pairs) }));
}

// recall with `pairs` pairs and the defaults' layout; the query count and sequence follow the
// pairs (tasks.recall's own rules), the vocabulary grows only if the keys need it.
function recallOptionsFor(base, pairs) {
  const o = base.options;
  const out = { pairs, layout: o.layout, vocab: Math.max(o.vocab, 2 * pairs + 1) };
  if (o.queries === o.pairs) out.queries = pairs;
  if (o.seqLen === 2 * o.pairs + o.queries) out.seqLen = 2 * pairs + (out.queries ?? o.queries);
  return out;
}

/** A stable key for a job: what it is, not where it sits in a list. */
export function jobKey(j) {
  const parts = [j.kind, j.experiment, j.task?.name, j.variant, j.seed, j.lr != null ? `lr${j.lr}` : null,
    j.cell ? `P${j.cell.pairs}D${j.cell.dModel}` : null, j.seqLen != null ? `n${j.seqLen}` : null, j.pretrained ? 'pretrained' : null];
  return parts.filter((x) => x != null && x !== undefined).join('|');
}
