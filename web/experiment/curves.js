// Live learning curves of every run on shared charts: loss (training: the mean over the steps
// since the previous evaluation, solid; held-out, dashed) and held-out accuracy with the task's
// chance level (text: held-out bits per character, with a uniform guess's), against step or
// against wall time (the second shows what a variant's speed buys), and the legend table with
// each run's latest numbers and, once it has ended, its verdict: learned (held-out accuracy
// ≥ 90 %, the study's threshold) or not learned in the run's steps; a stopped run is not judged. Charts are drawn at the width they are shown at, so
// their text keeps its size (a phone included), and again when that width changes.

import { el } from '../dom.js';
import { lineChart } from './svg-chart.js';
import { variantColor, chartColors } from './colors.js';
import { labelOf, LEARNED } from './config.js';

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '–');
const num = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const secs = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '–');

const STATUS_TEXT = { queued: 'queued', loading: 'starting…', training: 'training', paused: 'paused', done: 'done', cancelled: 'stopped', error: 'error' };
const ENDED = new Set(['done', 'cancelled']);

/**
 * A run's verdict once it has ended (null while it trains, for text, or with nothing trained):
 *   'learned'        it ran every step and ends at ≥ 90 % held out
 *   'not learned'    it ran every step and ends below: not learned in the run's steps
 *   'learned early'  it was stopped, and had already crossed 90 %
 *   'stopped'        it was stopped below 90 %: not judged (more steps might have got there)
 */
export function verdictOf(run, isText) {
  const last = run.history.at(-1);
  if (isText || !last || !ENDED.has(run.status) || run.untrained) return null;
  const crossed = last.evalAccuracy >= LEARNED;
  if (run.status === 'cancelled') return crossed ? 'learned early' : 'stopped';
  return crossed ? 'learned' : 'not learned';
}

/** What the legend table says for each verdict. */
export const VERDICT_TEXT = {
  learned: 'learned ✓',
  'not learned': "not learned in the run's steps",
  'learned early': 'learned ✓ before it was stopped',
  stopped: 'stopped: not judged',
};

/** "stopped at step 488 of 1500" for a cancelled run, null for a run that ran every step. */
export function stoppedAt(run, cfg) {
  if (run.status !== 'cancelled' || run.untrained) return null;
  return `stopped at step ${run.result?.steps ?? run.history.at(-1)?.step ?? 0} of ${cfg?.train.steps}`;
}

const runLabel = (r, seeds) => `${labelOf(r.name)}${seeds > 1 ? ` (seed ${r.seed})` : ''}`;

/**
 * The two charts as SVG text, for the page and for export. xAxis: 'step' | 'time'. chance: the
 * task's ({ value, bits }) or null.
 */
export function curveSvgs(runs, cfg, xAxis, width = 480, chance = null) {
  const colors = chartColors();
  const isText = cfg?.task === 'text';
  const seeds = cfg?.seeds ?? 1;
  const x = (p) => (xAxis === 'time' ? p.elapsedMs / 1000 : p.step);
  const xLabel = xAxis === 'time' ? 'wall time (s)' : 'step';
  const xMax = xAxis === 'time' ? undefined : cfg?.train.steps;
  const loss = [];
  const second = [];
  for (const r of runs) {
    const color = variantColor(r.name);
    const label = runLabel(r, seeds);
    const faint = r.first === false ? { width: 1.2, opacity: 0.75 } : {};
    loss.push({ label: `${label}: training loss (mean since the previous evaluation)`, color, ...faint, points: r.history.map((p) => [x(p), p.loss]) });
    loss.push({ label: `${label}: held-out loss`, color, dash: true, ...faint, points: r.history.map((p) => [x(p), p.evalLoss]) });
    second.push(isText
      ? { label: `${label}: held-out bits per character`, color, ...faint, points: r.history.map((p) => [x(p), p.evalBits]) }
      : { label: `${label}: held-out accuracy`, color, ...faint, points: r.history.map((p) => [x(p), p.evalAccuracy * 100]) });
  }
  const firstLoss = Math.max(0.5, ...runs.flatMap((r) => r.history.slice(0, 3).flatMap((p) => [p.loss, p.evalLoss])).filter(Number.isFinite));
  const refs = chance && Number.isFinite(chance.value)
    ? [{ y: chance.bits ? chance.value : chance.value * 100, label: chance.bits ? `uniform guess ${chance.value.toFixed(2)}` : `chance ${(chance.value * 100).toFixed(1)} %` }]
    : [];
  // text on the corpus: the n-gram lines (a model above the 4-gram's has learnt local statistics only)
  for (const o of (chance?.ngram?.orders ?? []).filter((k) => k >= 3)) refs.push({ y: chance.ngram.bits[o], label: `${o}-gram ${chance.ngram.bits[o].toFixed(2)}` });
  return {
    // the y range stops at the first evaluations' loss: an over-fitting held-out loss that keeps
    // rising would otherwise flatten every other curve (the table has the exact numbers)
    loss: lineChart({ width, title: 'Loss: training (solid), held-out (dashed)', subtitle: width < 420 ? 'training: mean since the last evaluation' : 'training: the mean over the steps since the last evaluation', xLabel, yLabel: 'cross-entropy (nats)', series: loss, xMax, yMax: firstLoss * 1.05, colors }),
    accuracy: isText
      ? lineChart({ width, title: 'Held-out bits per character (lower is better)', xLabel, yLabel: 'bits/char', series: second, xMax, colors, refs })
      : lineChart({ width, title: 'Held-out accuracy', xLabel, yLabel: '%', series: second, xMax, yMax: 100, colors, yFormat: (v) => `${v}`, refs }),
  };
}

export class CurvesPanel {
  constructor(root) {
    this.root = root;
    this.xAxis = 'step';
    this.chance = null;
    this.charts = el('div', { class: 'x-charts' });
    this.loss = el('figure', { class: 'x-chart', id: 'x-chart-loss' });
    this.acc = el('figure', { class: 'x-chart', id: 'x-chart-accuracy' });
    this.charts.append(this.loss, this.acc);
    this.table = el('div', { class: 'table-scroll', id: 'x-legend', tabindex: '0', role: 'region', 'aria-label': 'Each run\'s latest numbers' });
    const axis = el('div', { class: 'inline x-axis-switch', role: 'radiogroup', 'aria-label': 'Horizontal axis' },
      el('span', { class: 'muted small-text', text: 'against' }),
      ...['step', 'time'].map((v) => el('label', { class: 'check' },
        el('input', { type: 'radio', name: 'x-axis', value: v, checked: v === 'step', onchange: () => { this.xAxis = v; this.render(this.runs, this.cfg); } }),
        v === 'step' ? 'step' : 'wall time')));
    root.append(axis, this.charts, this.table);
    this.runs = [];
    this.width = 0;
    // drawn at the width shown: again whenever that changes (a view shown, a phone turned)
    new ResizeObserver(() => {
      const w = this.chartWidth();
      if (w && w !== this.width && this.cfg) this.render(this.runs, this.cfg);
    }).observe(this.charts);
  }

  chartWidth() {
    return Math.round(Math.min(640, this.loss.clientWidth || 0));
  }

  /** cfg: the config the runs trained with (or the form's, before any run); chance: the task's. */
  render(runs, cfg, chance = this.chance) {
    this.runs = runs;
    this.cfg = cfg;
    this.chance = chance;
    const w = this.chartWidth();
    if (w) this.width = w;
    const svgs = curveSvgs(runs, cfg, this.xAxis, Math.max(240, w || 480), chance);
    this.loss.innerHTML = svgs.loss;
    this.acc.innerHTML = svgs.accuracy;
    this.renderTable(runs, cfg);
  }

  renderTable(runs, cfg) {
    if (!runs.length) {
      this.table.replaceChildren(el('p', { class: 'note', text: 'Press Train to start: each variant trains in a worker of its own.' }));
      return;
    }
    const isText = cfg?.task === 'text';
    const seeds = cfg?.seeds ?? 1;
    // the held-out measure and the verdict come first: on a phone they are what shows
    const heads = ['variant', ...(seeds > 1 ? ['seed'] : []), isText ? 'held-out bits/char' : 'held-out acc.', isText ? null : 'verdict', 'status', 'step', 'train loss (nats)', 'held-out loss (nats)', 'ms/step', 'time', 'parameters'].filter(Boolean);
    const head = el('tr', {}, ...heads.map((t) => el('th', { scope: 'col', text: t })));
    const rows = runs.map((r) => {
      const last = r.history.at(-1);
      const sw = el('i', { class: 'swatch', 'aria-hidden': 'true' });
      sw.style.background = variantColor(r.name);
      const status = r.error ? `error: ${r.error.message}` : r.untrained ? 'cancelled before training: not trained' : STATUS_TEXT[r.status];
      const verdict = verdictOf(r, isText);
      return el('tr', { dataset: { variant: r.name, seed: String(r.seed), status: r.status, ...(verdict ? { verdict } : {}) } },
        el('th', { scope: 'row' }, sw, ` ${labelOf(r.name)}`),
        seeds > 1 ? el('td', { text: String(r.seed) }) : null,
        isText
          ? el('td', { class: 'x-acc', dataset: { value: last ? String(last.evalBits) : '' }, text: num(last?.evalBits) })
          : el('td', { class: 'x-acc', dataset: { value: last ? String(last.evalAccuracy) : '' }, text: pct(last?.evalAccuracy) }),
        isText ? null : el('td', { class: `x-verdict${verdict === 'learned' || verdict === 'learned early' ? ' learned' : ''}`, text: VERDICT_TEXT[verdict] ?? '–' }),
        el('td', { class: r.error ? 'x-status error-text' : 'x-status', text: status }),
        el('td', { text: last ? String(last.step) : '0' }),
        el('td', { text: num(last?.loss) }),
        el('td', { text: num(last?.evalLoss) }),
        el('td', { text: num(last?.msPerStep, 1) }),
        el('td', { text: secs(last?.elapsedMs) }),
        el('td', { text: r.parameterCount != null ? r.parameterCount.toLocaleString('en') : '–' }));
    });
    this.table.replaceChildren(el('table', { class: 'x-table' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  }
}
