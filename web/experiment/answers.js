// The recorded study in the Experiment view: the two short answers at the top (study-answers.js),
// "What a full run measured" — the recorded numbers for the chosen task and variants next to the
// user's run — and "All the numbers": experiments/results.md, rendered in a dialog over the page
// (so the trained models stay). Nothing is fetched until the view needs it (study.js).

import { el } from '../dom.js';
import { labelOf } from './config.js';
import { variantColor } from './colors.js';
import { loadSummary } from './study.js';
import { STUDY_ANSWERS } from './study-answers.js';
import { renderMarkdown } from './markdown.js';

const RESULTS_URL = new URL('../../experiments/results.md', import.meta.url);
const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '–');
const fixed = (x, d) => (Number.isFinite(x) ? x.toFixed(d) : '–');

/** The two questions and their short answers, with the way to every number. */
export function renderStudyAnswers(root, dialog) {
  root.replaceChildren(
    el('dl', { class: 'x-summary' }, ...STUDY_ANSWERS.map(({ question, answer }) => el('div', {}, el('dt', { text: question }), el('dd', { text: answer })))),
    el('p', { class: 'x-answers-actions' },
      el('button', { type: 'button', class: 'small', id: 'x-all-numbers', text: 'All the numbers (experiments/results.md)', onclick: () => openResults(dialog) })));
}

let resultsNodes = null;

/** experiments/results.md rendered in a dialog: the page and its trained models stay. */
export async function openResults(dialog) {
  const body = dialog.querySelector('.x-dialog-body');
  if (!dialog.open) dialog.showModal();
  if (resultsNodes) return;
  body.replaceChildren(el('p', { class: 'note', role: 'status', text: 'Loading experiments/results.md…' }));
  try {
    const r = await fetch(RESULTS_URL);
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    resultsNodes = renderMarkdown(await r.text(), RESULTS_URL);
    body.replaceChildren(...resultsNodes);
  } catch (err) {
    body.replaceChildren(el('p', { class: 'error-text', role: 'alert', text: `experiments/results.md could not be read (${err.message}); it is in the repository next to the page.` }));
  }
}

/** The recorded numbers of one task and variant: mean, per-seed values, seeds learned, steps to 90 %, ms per step. */
export function recordedRow(data, task, name) {
  const e = data.headline?.[task]?.variants?.[name];
  if (!e) return null;
  const reached = (e.stepsTo ?? []).filter((x) => x != null);
  return {
    accuracy: e.mean, seeds: e.values, reached: e.learned ?? reached.length, of: e.n,
    stepsTo90: e.medianSteps ?? (reached.length ? reached.reduce((a, b) => a + b, 0) / reached.length : NaN), msPerStep: e.msPerStep ?? NaN,
    lr: e.lr, bits: task === 'text',
  };
}

/** "What a full run measured": the recorded study for the chosen task and variants, beside the user's runs. */
export async function renderAnswers(root, cfg, runs) {
  const data = await loadSummary();
  if (data.missing) {
    root.replaceChildren(el('p', { class: 'note', id: 'x-answers-missing', text: data.missing }));
    return;
  }
  const isText = cfg.task === 'text';
  const s = data.headline?.[cfg.task]?.settings;
  const head = el('tr', {}, ...['variant', isText ? 'recorded: bits/char (mean of seeds)' : 'recorded: held-out acc. (mean of seeds)', 'per seed',
    isText ? null : 'seeds ≥ 90 % (median step)', 'its learning rate', 'ms/step', isText ? 'your run: bits/char' : 'your run: held-out acc.'].filter(Boolean).map((t) => el('th', { scope: 'col', text: t })));
  const rows = cfg.variants.map((name) => {
    const rec = recordedRow(data, cfg.task, name);
    const mine = runs.filter((r) => r.name === name);
    const sw = el('i', { class: 'swatch', 'aria-hidden': 'true' });
    sw.style.background = variantColor(name);
    const yours = !mine.length ? '–' : mine.every((r) => r.untrained) ? 'not trained'
      : mine.filter((r) => r.history.length).map((r) => {
        const f = r.history.at(-1);
        const value = isText ? fixed(f.evalBits, 3) : pct(f.evalAccuracy);
        // a stopped run's number is not a full run's: it says where it stopped
        return r.status === 'cancelled' ? `${value} (stopped at step ${f.step} of ${cfg.train.steps})` : value;
      }).join(' / ') || '–';
    return el('tr', { dataset: { variant: name } },
      el('th', { scope: 'row' }, sw, ` ${labelOf(name)}`),
      el('td', { class: 'x-recorded', text: rec ? (rec.bits ? fixed(rec.accuracy, 3) : pct(rec.accuracy)) : 'not recorded' }),
      el('td', { text: rec ? rec.seeds.map((x) => (rec.bits ? fixed(x, 2) : fixed(x * 100, 0))).join(' / ') : '' }),
      isText ? null : el('td', { text: rec ? `${rec.reached} of ${rec.of}${rec.reached && Number.isFinite(rec.stepsTo90) ? ` (${Math.round(rec.stepsTo90)})` : ''}` : '' }),
      el('td', { text: rec?.lr != null ? String(rec.lr) : '' }),
      el('td', { text: rec && Number.isFinite(rec.msPerStep) ? rec.msPerStep.toFixed(0) : '' }),
      el('td', { class: 'x-yours', text: yours }));
  });
  const scaled = data.stepsScale != null && data.stepsScale !== 1 ? `Steps scaled by ${data.stepsScale}: a trial of the pipeline, not a result. ` : '';
  const note = el('p', { class: 'note' },
    scaled,
    `Recorded ${String(data.date).slice(0, 10)} on ${data.machine?.cpu} (${data.machine?.cores} cores), the ${data.build} build, ${data.protocol?.reportSeeds?.length ?? '?'} seeds, each variant at the learning rate its own sweep chose; `,
    s ? `${cfg.task} at dModel/heads/layers ${s.dModel}/${s.heads}/${s.layers}, ${s.steps} steps${isText ? '; bits per character on every test character (your run: 128 windows of them)' : ''}. ` : '',
    'The presets train with these settings and rates; the same seed and build then give the same numbers.');
  root.replaceChildren(el('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'The recorded study' }, el('table', { class: 'x-table', id: 'x-answers-table' }, el('thead', {}, head), el('tbody', {}, ...rows))), note);
}
