// "What a full run measured": the recorded experiment (experiments/results.json, written by
// `npm run experiments`: every variant, five tasks, three seeds, the task defaults) for the chosen
// task and variants, next to the user's own run, with the two questions answered in short. A
// missing file (the page served without the repository) is said, not an error.

import { el } from '../dom.js';
import { SPEC_BY_NAME } from './config.js';
import { variantColor } from './colors.js';

const RESULTS_URL = new URL('../../experiments/results.json', import.meta.url);

// Our summary of README.md's "What the experiments say" (experiments/results.md has the detail).
const SUMMARY = [
  ['Is token-to-token attention necessary?', 'Not for copy and reverse: every Synthesizer variant that learns its attention reached 100 % on reverse, and all but trained random on copy (89.2 %: 100 % on 2 seeds of 3, 67.7 % on the third; it needed ~3× the steps); frozen random and the fixed patterns failed. sort separates nothing (even frozen random reached 99.6 %). Recall was learned by softmax only, on 1 seed of 3.'],
  ['Is softmax necessary?', 'Not for the tasks that were learned: linear, efficient and taylor reached 98–100 % on copy, reverse and sort, with 1.3–4.3× softmax\'s steps on copy and reverse. None learned recall, but softmax missed it on 2 seeds of 3. On text no variant differs measurably.'],
];

let recorded = null; // Promise of the parsed file, or of { missing: reason }

function load() {
  recorded ??= fetch(RESULTS_URL).then(async (r) => {
    if (!r.ok) return { missing: `experiments/results.json is not served here (HTTP ${r.status}); run \`npm start\` from the repository to see it` };
    return r.json();
  }).catch((err) => ({ missing: `experiments/results.json could not be read (${err.message})` }));
  return recorded;
}

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '–');
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const firstStepAt = (history, level) => history.find((p) => p.evalAccuracy >= level)?.step;

/** The recorded numbers of one task and variant: mean accuracy, per-seed accuracies, steps to 90 %, ms per step. */
export function recordedRow(data, task, name) {
  const runs = data.runs.filter((r) => r.task === task && r.variant === name && r.final);
  if (!runs.length) return null;
  const reached = runs.map((r) => firstStepAt(r.history, 0.9)).filter((s) => s != null);
  return {
    accuracy: mean(runs.map((r) => r.final.evalAccuracy)),
    seeds: runs.map((r) => r.final.evalAccuracy),
    reached: reached.length, of: runs.length, stepsTo90: mean(reached),
    msPerStep: mean(runs.map((r) => r.msPerStep).filter(Number.isFinite)),
  };
}

export async function renderAnswers(root, cfg, runs) {
  const data = await load();
  const summary = el('dl', { class: 'x-summary' }, ...SUMMARY.flatMap(([q, a]) => [el('dt', { text: q }), el('dd', { text: a })]));
  if (data.missing) {
    root.replaceChildren(el('p', { class: 'note', id: 'x-answers-missing', text: data.missing }), summary);
    return;
  }
  const s = data.tasks[cfg.task]?.settings;
  const yours = `${cfg.model.dModel}/${cfg.model.heads}/${cfg.model.layers}, ${cfg.train.steps} steps, seed ${cfg.seed}`;
  const head = el('tr', {}, ...['variant', 'full run: held-out acc. (mean of seeds)', 'per seed', 'seeds ≥ 90 % (mean step)', 'ms/step', 'your run: held-out acc.'].map((t) => el('th', { scope: 'col', text: t })));
  const rows = cfg.variants.map((name) => {
    const rec = recordedRow(data, cfg.task, name);
    const run = runs.find((r) => r.name === name);
    const mine = run?.history.at(-1);
    const sw = el('i', { class: 'swatch' });
    sw.style.background = variantColor(name);
    return el('tr', { dataset: { variant: name } },
      el('th', { scope: 'row' }, sw, ` ${SPEC_BY_NAME[name]?.label ?? name}`),
      el('td', { class: 'x-recorded', text: rec ? pct(rec.accuracy) : 'not recorded' }),
      el('td', { text: rec ? rec.seeds.map((x) => (x * 100).toFixed(0)).join(' / ') : '' }),
      el('td', { text: rec ? `${rec.reached} of ${rec.of}${rec.reached ? ` (${Math.round(rec.stepsTo90)})` : ''}` : '' }),
      el('td', { text: rec && Number.isFinite(rec.msPerStep) ? rec.msPerStep.toFixed(0) : '' }),
      el('td', { class: 'x-yours', text: run?.untrained ? 'not trained' : mine ? pct(mine.evalAccuracy) : '–' }));
  });
  const note = el('p', { class: 'note' },
    `Recorded ${data.date.slice(0, 10)} on ${data.machine.cpu} (${data.machine.cores} cores), the ${data.build} build, ${data.args.seeds} seeds; `,
    s ? `${cfg.task} at dModel/heads/layers ${s.dModel}/${s.heads}/${s.layers}, ${s.steps} steps. ` : '',
    `Your run: ${yours}. Different sizes or steps give different numbers; the same settings and seed give the same numbers (training is deterministic for a build). `,
    el('a', { href: '../experiments/results.md', text: 'All the numbers' }), '.');
  root.replaceChildren(el('div', { class: 'table-scroll' }, el('table', { class: 'x-table', id: 'x-answers-table' }, el('thead', {}, head), el('tbody', {}, ...rows))), note, summary);
}
