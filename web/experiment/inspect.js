// "What each model learned": one held-out sequence, each trained variant's prediction at every
// answer position (right / wrong marked), and the attention map of every layer × head of every
// model on that sequence, on one colour scale (a BertViz-like grid; click a map to enlarge it,
// labelled with the tokens). For recall, each query's matching pair is outlined in the maps (key
// dashed, value solid) and each map's "lookup" is the mean weight its queries put on that pair.

import { el } from '../dom.js';
import { SEQUENTIAL, drawLegend, fmtTick } from '../colormap.js';
import { drawTokenMap, cellAt } from './token-map.js';
import { variantColor } from './colors.js';
import { SPEC_BY_NAME } from './config.js';

/** Recall: for each query position, where its key and value sit in the pairs. */
function recallMarks(task, tokens, targets) {
  if (task.name !== 'recall') return [];
  const pairs = task.options.pairs;
  const marks = [];
  for (let t = 0; t < tokens.length; t++) {
    if (targets[t] < 0) continue;
    for (let p = 0; p < pairs; p++) {
      if (tokens[2 * p] === tokens[t]) marks.push([t, 2 * p, 'key'], [t, 2 * p + 1, 'value']);
    }
  }
  return marks;
}

function lookupWeight(A, n, marks) {
  const rows = new Map();
  for (const [i, j] of marks) rows.set(i, (rows.get(i) ?? 0) + A[i * n + j]);
  if (!rows.size) return NaN;
  return [...rows.values()].reduce((a, b) => a + b, 0) / rows.size;
}

export class InspectPanel {
  constructor(root, { dialog }) {
    this.root = root;
    this.dialog = dialog;
    this.index = 0;
    this.generation = 0;
    this.results = new Map(); // run name -> inspect reply
    this.status = el('p', { class: 'note', role: 'status' });
    this.indexInput = el('input', { type: 'number', id: 'x-sample', min: '0', step: '1', value: '0', inputmode: 'numeric' });
    this.indexInput.addEventListener('change', () => this.setIndex(Number(this.indexInput.value)));
    const nav = el('div', { class: 'inline x-sample-nav' },
      el('label', { for: 'x-sample', text: 'Held-out sequence #' }), this.indexInput,
      el('button', { type: 'button', class: 'small', text: '◀', 'aria-label': 'Previous sequence', onclick: () => this.setIndex(this.index - 1) }),
      el('button', { type: 'button', class: 'small', text: '▶', 'aria-label': 'Next sequence', onclick: () => this.setIndex(this.index + 1) }));
    this.predictions = el('div', { class: 'table-scroll', id: 'x-predictions', tabindex: '0', role: 'region', 'aria-label': 'Predictions on the held-out sequence' });
    this.narrow = matchMedia('(max-width: 600px)');
    this.narrow.addEventListener('change', () => this.renderPredictions());
    this.last = null;
    this.legend = el('div', { class: 'legend' });
    this.maps = el('div', { id: 'x-maps', class: 'x-maps' });
    root.append(nav, this.status, this.predictions, this.legend, this.maps);
    this.clear('Train first: the maps show what the trained models attend to.');
  }

  /** Forgets the runs too: after a reset their workers are gone, so ◀ / ▶ must not ask them. */
  clear(message) {
    this.runs = null;
    this.task = null;
    this.results.clear();
    this.generation++;
    this.last = null;
    this.predictions.replaceChildren();
    this.maps.replaceChildren();
    this.legend.replaceChildren();
    this.status.textContent = message;
  }

  setIndex(i) {
    this.index = Number.isInteger(i) && i >= 0 ? i : 0;
    this.indexInput.value = String(this.index);
    if (this.runs) this.load(this.runs, this.task);
  }

  /** Asks every trained run's worker for its predictions and maps on the current sequence. */
  async load(runs, task) {
    this.runs = runs;
    this.task = task;
    const gen = ++this.generation;
    if (!runs.length) return this.clear('No trained model yet.');
    this.status.textContent = 'reading the trained models…';
    const replies = await Promise.all(runs.map((r) => r.client.call('inspect', { index: this.index }).then((m) => [r, m], (err) => [r, { error: err }])));
    if (gen !== this.generation) return;
    this.results = new Map(replies.map(([r, m]) => [r.name, m]));
    this.render(replies, task);
  }

  render(replies, task) {
    const ok = replies.filter(([, m]) => !m.error);
    const first = ok[0]?.[1];
    if (!first) {
      this.status.textContent = `could not read the models: ${replies[0]?.[1].error.message ?? ''}`;
      return;
    }
    this.index = first.index;
    this.indexInput.value = String(first.index);
    this.indexInput.max = String(first.count - 1);
    const n = first.tokens.length;
    const names = Array.from(first.tokens, (t) => task.tokenName(t));
    const marks = recallMarks(task, first.tokens, first.targets);
    this.status.textContent = `Sequence ${first.index} of the ${first.count} held out${task.name === 'recall' ? '. Outlined: each query\'s key (dashed) and value (solid) in the pairs.' : ''}`;

    this.last = { replies, task, first, names };
    this.renderPredictions();

    // one colour scale for every map of every variant
    let vmax = 0;
    for (const [, m] of ok) for (const layer of m.maps) for (const A of layer) for (const x of A) if (x > vmax) vmax = x;
    vmax = vmax || 1;
    drawLegend(this.legend, { lut: SEQUENTIAL, width: 160, vmin: 0, vmax, label: 'attention weight, every map', shared: true });
    this.maps.replaceChildren(...ok.map(([r, m]) => this.variantGrid(r, m, n, names, marks, vmax)));
  }

  /**
   * The predictions: on a wide screen one row of tokens, one of answers and one per model; on a
   * narrow one (a phone) the same table turned: a row per position, a column per model, so every
   * ✓ and ✗ is on screen without scrolling sideways.
   */
  renderPredictions() {
    if (!this.last) return;
    const { replies, task, first, names } = this.last;
    const n = first.tokens.length;
    const positions = [...Array(n).keys()];
    const ok = replies.filter(([, m]) => !m.error);
    const cell = (m, t) => {
      if (m.targets[t] < 0) return el('td', { class: 'tok' });
      const good = m.predictions[t] === m.targets[t];
      return el('td', { class: `tok ${good ? 'right' : 'wrong'}`, title: good ? 'right' : `wrong: the answer is ${task.tokenName(m.targets[t])}`, text: `${task.tokenName(m.predictions[t])}${good ? '✓' : '✗'}` });
    };
    const score = (m) => {
      let right = 0, asked = 0;
      for (const t of positions) if (m.targets[t] >= 0) { asked++; if (m.predictions[t] === m.targets[t]) right++; }
      return { right, asked };
    };
    const head = (r, m) => {
      const sw = el('i', { class: 'swatch', 'aria-hidden': 'true' });
      sw.style.background = variantColor(r.name);
      const { right, asked } = score(m);
      return [sw, ` ${SPEC_BY_NAME[r.name]?.label ?? r.name} `, el('span', { class: 'muted', text: `${right}/${asked}` })];
    };
    let table;
    if (this.narrow.matches) {
      const cols = el('tr', {}, el('th', { scope: 'col', text: '#' }), el('th', { scope: 'col', text: 'input' }), el('th', { scope: 'col', text: 'answer' }),
        ...ok.map(([r, m]) => el('th', { scope: 'col', dataset: { variant: r.name } }, ...head(r, m))));
      // positions with nothing to answer are kept (the input is what the model reads)
      const rows = positions.map((t) => el('tr', {}, el('th', { scope: 'row', class: 'muted', text: String(t) }), el('td', { class: 'tok', text: names[t] }),
        el('td', { class: 'tok', text: first.targets[t] >= 0 ? task.tokenName(first.targets[t]) : '' }), ...ok.map(([, m]) => cell(m, t))));
      table = el('table', { class: 'x-tokens x-tokens-narrow' }, el('thead', {}, cols), el('tbody', {}, ...rows));
    } else {
      const rows = [
        el('tr', {}, el('th', { scope: 'row', text: 'input' }), ...positions.map((t) => el('td', { class: 'tok', text: names[t] }))),
        el('tr', {}, el('th', { scope: 'row', text: 'answer' }), ...positions.map((t) => el('td', { class: 'tok', text: first.targets[t] >= 0 ? task.tokenName(first.targets[t]) : '' }))),
      ];
      for (const [r, m] of replies) {
        if (m.error) {
          rows.push(el('tr', {}, el('th', { scope: 'row', text: r.name }), el('td', { class: 'error-text', colspan: String(n), text: m.error.message })));
          continue;
        }
        const { right, asked } = score(m);
        rows.push(el('tr', { dataset: { variant: r.name, right: String(right), asked: String(asked) } }, el('th', { scope: 'row' }, ...head(r, m)), ...positions.map((t) => cell(m, t))));
      }
      table = el('table', { class: 'x-tokens' }, el('tbody', {}, ...rows));
    }
    const errors = replies.filter(([, m]) => m.error).map(([r, m]) => el('p', { class: 'error-text', text: `${r.name}: ${m.error.message}` }));
    this.predictions.replaceChildren(table, ...(this.narrow.matches ? errors : []));
  }

  variantGrid(run, m, n, names, marks, vmax) {
    const cell = Math.max(2, Math.floor(132 / n));
    const grid = el('div', { class: 'x-map-grid' });
    grid.style.gridTemplateColumns = `repeat(${m.maps[0].length}, auto)`;
    m.maps.forEach((layer, l) => layer.forEach((A, h) => {
      const canvas = el('canvas', { class: 'x-map', tabindex: '0', role: 'button', dataset: { variant: run.name, layer: String(l), head: String(h) } });
      drawTokenMap(canvas, A, n, { cell, vmax, marks });
      const lookup = marks.length ? lookupWeight(A, n, marks) : NaN;
      const title = `layer ${l} · head ${h}${Number.isFinite(lookup) ? ` · lookup ${fmtTick(lookup)}` : ''}`;
      canvas.setAttribute('aria-label', `${run.name}: attention map of ${title}. Press Enter to enlarge.`);
      const open = () => this.enlarge(run, A, n, names, marks, vmax, title);
      canvas.addEventListener('click', open);
      canvas.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(); } });
      grid.append(el('figure', { class: 'x-map-cell' }, canvas, el('figcaption', { text: title })));
    }));
    const sw = el('i', { class: 'swatch' });
    sw.style.background = variantColor(run.name);
    return el('section', { class: 'x-variant-maps', dataset: { variant: run.name } },
      el('h4', {}, sw, ` ${SPEC_BY_NAME[run.name]?.label ?? run.name}`), grid);
  }

  enlarge(run, A, n, names, marks, vmax, title) {
    const d = this.dialog;
    const canvas = el('canvas', { class: 'x-map-large' });
    const layout = drawTokenMap(canvas, A, n, { cell: Math.max(14, Math.min(22, Math.floor(560 / n))), vmax, labels: names, marks });
    const readout = el('p', { class: 'note', 'aria-live': 'polite', text: 'Hover a cell: which position (row) looks at which (column), and how much.' });
    canvas.addEventListener('mousemove', (e) => {
      const c = cellAt(canvas, e, n, layout);
      if (c) readout.textContent = `position ${c[0]} (${names[c[0]]}) → position ${c[1]} (${names[c[1]]}): ${fmtTick(A[c[0] * n + c[1]])}`;
    });
    // the colours' scale, as beside the grid: the enlarged map shares it with every other map
    const legend = el('div', { class: 'legend x-map-large-legend' });
    drawLegend(legend, { lut: SEQUENTIAL, width: 160, vmin: 0, vmax, label: 'attention weight, every map', shared: true });
    d.querySelector('.x-dialog-title').textContent = `${SPEC_BY_NAME[run.name]?.label ?? run.name} — ${title}`;
    d.querySelector('.x-dialog-body').replaceChildren(legend, el('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'The map, enlarged' }, canvas), readout);
    d.showModal();
  }
}
