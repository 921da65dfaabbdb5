// Live learning curves of every run on shared charts: loss (training solid, held-out dashed) and
// held-out accuracy, against step or against wall time (the second shows what a variant's speed
// buys), and the legend table with each run's latest numbers.

import { el } from '../dom.js';
import { lineChart } from './svg-chart.js';
import { variantColor, chartColors } from './colors.js';
import { SPEC_BY_NAME } from './config.js';

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '–');
const num = (x, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const secs = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '–');

const STATUS_TEXT = { queued: 'queued', loading: 'starting…', training: 'training', paused: 'paused', done: 'done', cancelled: 'stopped', error: 'error' };

/** The two charts as SVG text, for the page and for export. xAxis: 'step' | 'time'. */
export function curveSvgs(runs, cfg, xAxis, width = 480) {
  const colors = chartColors();
  const x = (p) => (xAxis === 'time' ? p.elapsedMs / 1000 : p.step);
  const xLabel = xAxis === 'time' ? 'wall time (s)' : 'step';
  const xMax = xAxis === 'time' ? undefined : cfg?.train.steps;
  const loss = [];
  const acc = [];
  for (const r of runs) {
    const color = variantColor(r.name);
    const label = SPEC_BY_NAME[r.name]?.label ?? r.name;
    loss.push({ label: `${label}: training loss`, color, points: r.history.map((p) => [x(p), p.loss]) });
    loss.push({ label: `${label}: held-out loss`, color, dash: true, points: r.history.map((p) => [x(p), p.evalLoss]) });
    acc.push({ label: `${label}: held-out accuracy`, color, points: r.history.map((p) => [x(p), p.evalAccuracy * 100]) });
  }
  const firstLoss = Math.max(0.5, ...runs.flatMap((r) => r.history.slice(0, 3).flatMap((p) => [p.loss, p.evalLoss])).filter(Number.isFinite));
  return {
    // the y range stops at the first evaluations' loss: an over-fitting held-out loss that keeps
    // rising would otherwise flatten every other curve (the table has the exact numbers)
    loss: lineChart({ width, title: 'Loss (solid: training, dashed: held-out)', xLabel, yLabel: 'cross-entropy', series: loss, xMax, yMax: firstLoss * 1.05, colors }),
    accuracy: lineChart({ width, title: 'Held-out accuracy', xLabel, yLabel: '%', series: acc, xMax, yMax: 100, colors, yFormat: (v) => `${v}` }),
  };
}

export class CurvesPanel {
  constructor(root) {
    this.root = root;
    this.xAxis = 'step';
    this.charts = el('div', { class: 'x-charts' });
    this.loss = el('figure', { class: 'x-chart', id: 'x-chart-loss' });
    this.acc = el('figure', { class: 'x-chart', id: 'x-chart-accuracy' });
    this.charts.append(this.loss, this.acc);
    this.table = el('div', { class: 'table-scroll', id: 'x-legend' });
    const axis = el('div', { class: 'inline x-axis-switch', role: 'radiogroup', 'aria-label': 'Horizontal axis' },
      el('span', { class: 'muted small-text', text: 'against' }),
      ...['step', 'time'].map((v) => el('label', { class: 'check' },
        el('input', { type: 'radio', name: 'x-axis', value: v, checked: v === 'step', onchange: () => { this.xAxis = v; this.render(this.runs, this.cfg); } }),
        v === 'step' ? 'step' : 'wall time')));
    root.append(axis, this.charts, this.table);
    this.runs = [];
  }

  render(runs, cfg) {
    this.runs = runs;
    this.cfg = cfg;
    // drawn at the width shown, so the text keeps its size (the viewBox still scales on resize)
    const width = Math.round(Math.min(640, Math.max(300, this.loss.clientWidth || 480)));
    const svgs = curveSvgs(runs, cfg, this.xAxis, width);
    this.loss.innerHTML = svgs.loss;
    this.acc.innerHTML = svgs.accuracy;
    this.renderTable(runs);
  }

  renderTable(runs) {
    if (!runs.length) {
      this.table.replaceChildren(el('p', { class: 'note', text: 'Press Train to start: each variant trains in a worker of its own.' }));
      return;
    }
    const head = el('tr', {}, ...['variant', 'status', 'step', 'train loss', 'held-out loss', 'held-out acc.', 'ms/step', 'time', 'parameters'].map((t) => el('th', { scope: 'col', text: t })));
    const rows = runs.map((r) => {
      const last = r.history.at(-1);
      const sw = el('i', { class: 'swatch' });
      sw.style.background = variantColor(r.name);
      const status = r.error ? `error: ${r.error.message}` : r.untrained ? 'cancelled before training: not trained' : STATUS_TEXT[r.status];
      return el('tr', { dataset: { variant: r.name, status: r.status } },
        el('th', { scope: 'row' }, sw, ` ${SPEC_BY_NAME[r.name]?.label ?? r.name}`),
        el('td', { class: r.error ? 'x-status error-text' : 'x-status', text: status }),
        el('td', { text: last ? String(last.step) : '0' }),
        el('td', { text: num(last?.loss) }),
        el('td', { text: num(last?.evalLoss) }),
        el('td', { class: 'x-acc', dataset: { value: last ? String(last.evalAccuracy) : '' }, text: pct(last?.evalAccuracy) }),
        el('td', { text: num(last?.msPerStep, 1) }),
        el('td', { text: secs(last?.elapsedMs) }),
        el('td', { text: r.parameterCount != null ? r.parameterCount.toLocaleString('en') : '–' }));
    });
    this.table.replaceChildren(el('table', { class: 'x-table' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  }
}
