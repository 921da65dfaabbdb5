// Text task: every trained model continues a prompt, character by character (model.generate in
// its worker), and the time of each step is plotted against the position. Softmax keeps a
// key/value cache and does O(t) work at position t; linear, efficient and taylor keep a
// constant-size state, so their line stays flat. Models end at seqLen (their position embeddings
// end there), and at a few dozen positions the projections and the MLP dominate each step, so
// the lines are flat within the timer's noise; the panel says so rather than overclaim, and
// long-generate.js times untrained models of the same widths to 2048 positions, where it shows.

import { el } from '../dom.js';
import { lineChart } from './svg-chart.js';
import { variantColor, chartColors } from './colors.js';
import { SPEC_BY_NAME } from './config.js';
import { LongGenPanel } from './long-generate.js';

export class GeneratePanel {
  constructor(root) {
    this.root = root;
    this.prompt = el('input', { type: 'text', id: 'x-gen-prompt', value: 'Attention ', spellcheck: 'false' });
    this.temperature = el('input', { type: 'number', id: 'x-gen-temp', min: '0', step: '0.1', value: '0' });
    this.button = el('button', { type: 'button', id: 'x-gen-run', class: 'primary', text: 'Generate', onclick: () => this.run() });
    this.error = el('p', { class: 'inline-error', role: 'alert', hidden: true });
    this.out = el('div', { id: 'x-gen-out' });
    this.chart = el('figure', { class: 'x-chart', id: 'x-gen-chart' });
    root.append(
      el('div', { class: 'x-gen-controls' },
        el('div', { class: 'field' }, el('label', { for: 'x-gen-prompt', text: 'Prompt' }), this.prompt),
        el('div', { class: 'field' }, el('label', { for: 'x-gen-temp', text: 'Temperature (0: most likely)' }), this.temperature),
        this.button),
      this.error, this.out, this.chart);
    this.long = new LongGenPanel(root);
    this.runs = [];
    this.series = null;
  }

  /** The trained runs (their workers answer generate), the task and the run's config (widths, build). */
  setRuns(runs, task, cfg = null) {
    this.runs = runs;
    this.task = task;
    this.root.hidden = !task || task.name !== 'text';
    this.button.disabled = !runs.length;
    this.series = null;
    this.out.replaceChildren();
    this.chart.replaceChildren();
    this.long.setRuns(task?.name === 'text' ? runs : [], task, cfg);
  }

  /** Redraws the charts (a theme change: the colours are baked into the SVG). */
  redraw() {
    if (this.series) this.drawChart();
    if (this.long.result) this.long.draw(this.long.result.series.map((s) => ({ ...s, color: variantColor(s.name) })), this.long.result.na);
  }

  drawChart() {
    const width = Math.round(Math.min(560, Math.max(300, this.chart.clientWidth || 480)));
    this.chart.innerHTML = lineChart({ width, title: 'Time per character (mean of repeats)', xLabel: 'position', yLabel: 'ms', series: this.series.map((s) => ({ ...s, color: variantColor(s.label) })), xMax: this.task.seqLen, colors: chartColors() });
  }

  async run() {
    const task = this.task;
    this.error.hidden = true;
    let prompt;
    try {
      prompt = task.encode(this.prompt.value);
      if (!prompt.length) throw new Error('type a prompt of at least one character');
      if (prompt.length >= task.seqLen) throw new Error(`the prompt must be shorter than seqLen = ${task.seqLen}`);
    } catch (err) {
      this.error.textContent = err.message;
      this.error.hidden = false;
      return;
    }
    const count = task.seqLen - prompt.length;
    const temperature = Math.max(0, Number(this.temperature.value) || 0);
    this.button.disabled = true;
    const runs = this.runs;
    // one model after another: generated at once, they would share the cores and each one's
    // per-character times would include the others' work (long-generate.js does the same)
    const replies = [];
    for (const r of runs) {
      replies.push(await r.client.call('generate', { prompt, count, temperature, seed: 1 }).then((m) => [r, m], (err) => [r, { error: err }]));
      if (this.runs !== runs) return; // reset or trained again meanwhile: these models are gone
    }
    this.button.disabled = false;
    this.out.replaceChildren(...replies.map(([r, m]) => {
      const sw = el('i', { class: 'swatch' });
      sw.style.background = variantColor(r.name);
      const text = m.error ? m.error.message : Array.from(m.tokens.slice(prompt.length), (t) => task.tokenName(t)).join('');
      return el('p', { class: 'x-gen-line', dataset: { variant: r.name } }, sw, ` ${SPEC_BY_NAME[r.name]?.label ?? r.name}: `,
        el('span', { class: 'mono muted', text: this.prompt.value }), el('span', { class: m.error ? 'error-text' : 'mono', text }));
    }));
    this.series = replies.filter(([, m]) => !m.error).map(([r, m]) => ({
      label: r.name,
      points: Array.from(m.msPerToken, (ms, g) => [prompt.length + g, ms]),
    }));
    this.drawChart();
  }
}
