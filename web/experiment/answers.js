// "What a full run measured": the recorded study (experiments/summary.json, written by
// `npm run experiments`: every variant on the headline tasks, five seeds each at its own learning
// rate) for the chosen task and variants, next to the user's own run, with the two questions
// answered in short. A missing file (the page served without the repository) is said, not an error.

import { el } from '../dom.js';
import { SPEC_BY_NAME } from './config.js';
import { variantColor } from './colors.js';

const SUMMARY_URL = new URL('../../experiments/summary.json', import.meta.url);

// Our summary of README.md's "What the experiments say" (experiments/results.md has the detail).
const SUMMARY = [
  ['Is token-to-token attention necessary?', 'See experiments/results.md: the recorded study gives, per task, how many of five seeds each variant learned, with intervals.'],
  ['Is softmax necessary?', 'See experiments/results.md: recall (content lookup) and text (bits per character) separate the linear family from softmax.'],
];

let recorded = null; // Promise of the parsed file, or of { missing: reason }

function load() {
  recorded ??= fetch(SUMMARY_URL).then(async (r) => {
    if (!r.ok) return { missing: `experiments/summary.json is not served here (HTTP ${r.status}); run \`npm start\` from the repository to see it` };
    return r.json();
  }).catch((err) => ({ missing: `experiments/summary.json could not be read (${err.message})` }));
  return recorded;
}

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '–');

/** The recorded numbers of one task and variant: mean, per-seed values, seeds learned, steps to 90 %, ms per step. */
export function recordedRow(data, task, name) {
  const e = data.headline?.[task]?.variants?.[name];
  if (!e) return null;
  const reached = (e.stepsTo ?? []).filter((x) => x != null);
  return {
    accuracy: e.mean, seeds: e.values, reached: e.learned ?? reached.length, of: e.n,
    stepsTo90: reached.length ? reached.reduce((a, b) => a + b, 0) / reached.length : NaN, msPerStep: e.msPerStep ?? NaN,
    bits: task === 'text',
  };
}

export async function renderAnswers(root, cfg, runs) {
  const data = await load();
  const summary = el('dl', { class: 'x-summary' }, ...SUMMARY.flatMap(([q, a]) => [el('dt', { text: q }), el('dd', { text: a })]));
  if (data.missing) {
    root.replaceChildren(el('p', { class: 'note', id: 'x-answers-missing', text: data.missing }), summary);
    return;
  }
  const s = data.headline?.[cfg.task]?.settings;
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
      el('td', { class: 'x-recorded', text: rec ? (rec.bits ? `${rec.accuracy.toFixed(3)} bits/char` : pct(rec.accuracy)) : 'not recorded' }),
      el('td', { text: rec ? rec.seeds.map((x) => (rec.bits ? x.toFixed(2) : (x * 100).toFixed(0))).join(' / ') : '' }),
      el('td', { text: rec ? `${rec.reached} of ${rec.of}${rec.reached ? ` (${Math.round(rec.stepsTo90)})` : ''}` : '' }),
      el('td', { text: rec && Number.isFinite(rec.msPerStep) ? rec.msPerStep.toFixed(0) : '' }),
      el('td', { class: 'x-yours', text: run?.untrained ? 'not trained' : mine ? pct(mine.evalAccuracy) : '–' }));
  });
  const note = el('p', { class: 'note' },
    `Recorded ${String(data.date).slice(0, 10)} on ${data.machine?.cpu} (${data.machine?.cores} cores), the ${data.build} build, ${data.protocol?.reportSeeds?.length ?? '?'} seeds, each variant at the learning rate its own sweep chose; `,
    s ? `${cfg.task} at dModel/heads/layers ${s.dModel}/${s.heads}/${s.layers}, ${s.steps} steps. ` : '',
    `Your run: ${yours}. Different sizes or steps give different numbers; the same settings and seed give the same numbers (training is deterministic for a build). `,
    el('a', { href: '../experiments/results.md', text: 'All the numbers' }), '.');
  root.replaceChildren(el('div', { class: 'table-scroll' }, el('table', { class: 'x-table', id: 'x-answers-table' }, el('thead', {}, head), el('tbody', {}, ...rows))), note, summary);
}
