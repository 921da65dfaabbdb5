// The recorded study (experiments/summary.json, written by `npm run experiments`: every variant
// on the headline tasks, five seeds each at its own learning rate; scripts/study/report.mjs's
// summarize() gives its shape). Fetched once, the first time the Experiment view needs it — never
// on a page that stays in Explore. A missing file (the page served without the repository) is
// said, not an error. Also: the chance level of a task, and how a run's setup differs from the
// study's, so a verdict never compares unlike with unlike without saying so.

import { tasks } from '../../dist/tasks.js';
import { chanceOf as chanceRule } from '../../dist/experiment.js';
import { MODEL_FIELDS, lrOf, labelOf, defaultKnobs, knobsOf, LEARNED } from './config.js';

export const SUMMARY_URL = new URL('../../experiments/summary.json', import.meta.url);

let recorded = null; // Promise of the parsed file, or of { missing: reason }
let data = null; // the file once it came

export function loadSummary() {
  recorded ??= fetch(SUMMARY_URL).then(async (r) => {
    if (!r.ok) return { missing: `experiments/summary.json is not served here (HTTP ${r.status}): the recorded study is not available; run \`npm start\` from the repository to see it` };
    return r.json();
  }).catch((err) => ({ missing: `experiments/summary.json could not be read (${err.message})` })).then((d) => (data = d));
  return recorded;
}

/** The summary if it has come (null before, or { missing }). */
export const summaryNow = () => data;
export const headlineOf = (task) => (data && !data.missing ? data.headline?.[task] ?? null : null);

const pct0 = (x) => `${Math.round(100 * x)}`;

/**
 * The character n-gram lines of the corpus's test chapters, scored as the study scores its models
 * (64-character windows; experiments/ngram.json through the summary): { orders, bits: { order:
 * bits } } for the text task on the corpus at seqLen 64, else null (another text, or windows of
 * another length, would have other lines).
 */
export function ngramOf(task) {
  const n = data && !data.missing ? data.ngram : null;
  if (!n || task?.name !== 'text' || !task.options?.corpus || task.seqLen !== 64) return null;
  return { orders: n.orders, bits: n.windows };
}

/**
 * The chance level of a task: the summary's when the run is the study's task, else the study's
 * rule (dist/experiment.js's chanceOf) on the run's own task. Accuracy tasks: { value (a
 * fraction), why }; text: { value (bits per character of a uniform guess), why, bits: true,
 * ngram (ngramOf) }.
 */
export function chanceOf(task, sameTask = false) {
  const h = headlineOf(task.name);
  if (sameTask && h?.chance && Number.isFinite(h.chance.value)) return { ...h.chance, bits: task.name === 'text' };
  const chance = chanceRule(task);
  if (!chance) return null;
  // text: the verdict says "a uniform guess scores N bits per character (why)", so why is shorter
  return task.name === 'text' ? { ...chance, why: `a uniform guess over ${task.vocab} characters`, bits: true, ngram: ngramOf(task) } : chance;
}

/**
 * How a run's setup differs from the recorded study's for its task and variant: a list of
 * phrases ("steps 300, the study 400"); empty when they are the same runs (then the same seed
 * and build give the study's numbers). null when the study did not record the task. (The text
 * itself — the corpus or another — is the caller's to say: it decides whether numbers compare.)
 */
export function differences(cfg, name, knobsUsed) {
  const h = headlineOf(cfg.task);
  if (!h) return null;
  const out = [];
  const study = cfg.task === 'text' ? defaultKnobs('text', 'corpus') : knobsOf(tasks[cfg.task]());
  for (const k of new Set([...Object.keys(study), ...Object.keys(knobsUsed)])) {
    if (knobsUsed[k] !== study[k]) out.push(`${k} ${knobsUsed[k]}, the study ${study[k]}`);
  }
  const s = h.settings ?? {};
  for (const k of [...MODEL_FIELDS, 'steps', 'batch', 'warmup']) if (s[k] != null && (cfg.model[k] ?? cfg.train[k]) !== s[k]) out.push(`${k} ${cfg.model[k] ?? cfg.train[k]}, the study ${s[k]}`);
  if ((h.evalBatch ?? s.evalBatch) != null && cfg.train.evalBatch !== (h.evalBatch ?? s.evalBatch)) out.push(`${cfg.train.evalBatch} held-out sequences, the study ${h.evalBatch ?? s.evalBatch}`);
  const e = h.variants?.[name];
  if (e && Number.isFinite(e.lr) && lrOf(cfg, name) !== e.lr) out.push(`learning rate ${lrOf(cfg, name)}, the study ${e.lr}`);
  if (cfg.build !== (data?.build ?? 'simd')) out.push(`the ${cfg.build} build, the study ${data?.build ?? 'simd'}`);
  return out;
}

/**
 * The recorded study's verdict for a task and variant, in words: "in the recorded study softmax
 * learned this on 5 of 5 seeds (95 % CI 57–100 %)", or for text its bits per character. null
 * when it was not recorded.
 */
export function recordedVerdict(task, name) {
  const e = headlineOf(task)?.variants?.[name];
  if (!e || !e.n || (task === 'text' ? !Number.isFinite(e.mean) : !Number.isFinite(e.learned))) return null;
  const label = labelOf(name);
  if (task === 'text') {
    const ci = Number.isFinite(e.lo) && Number.isFinite(e.hi) ? `, 95 % CI ${e.lo.toFixed(2)}–${e.hi.toFixed(2)}` : '';
    return { text: `in the recorded study ${label} reached ${e.mean.toFixed(2)} bits per character on every test character (mean of ${e.n} seeds${ci})`, entry: e };
  }
  const w = e.wilson ? ` (95 % CI ${pct0(e.wilson.lo)}–${pct0(e.wilson.hi)} %)` : '';
  return { text: `in the recorded study ${label} learned this on ${e.learned} of ${e.n} seeds${w}`, entry: e };
}

/** The recorded value of one seed (held-out accuracy, or bits per character for text), or null. */
export function recordedSeedValue(task, name, seed) {
  const e = headlineOf(task)?.variants?.[name];
  const i = e?.seeds?.indexOf(seed) ?? -1;
  return i >= 0 && Number.isFinite(e.values[i]) ? e.values[i] : null;
}

/**
 * The estimated run time of a config from the summary's ms per step (measured alone on the
 * study's machine), or null when it has none for a variant.
 */
export const recordedMsPerStep = (task, name) => {
  const x = headlineOf(task)?.variants?.[name]?.msPerStep;
  return Number.isFinite(x) && x > 0 ? x : null;
};

export { LEARNED };
