// "Time generation to 2048 positions": the Generate panel's speed measurement. A trained model
// ends at its seqLen (a few dozen positions), where every variant's step costs about the same, so
// softmax's growing key/value cache cannot show. This builds, per variant of the run, an UNTRAINED
// model of the trained one's widths with seqLen 2048 and times model.generate([1], 2047) — what
// `npm run bench` records (bench/results.md, "Generation") — and plots ms per token against
// position, smoothed (the median of each window of 32 steps: single steps are near the timer's
// resolution and jitter).
//
// Variants are timed one after another (in parallel they would share the cores and time each
// other), each in a fresh worker of its own (runner.js's TrainClient, the experiment's build):
// generate() is one synchronous call of a few seconds, so Cancel can only stop it by ending that
// worker, and the trained models' workers must survive (Generate and the maps use them).

import { el } from '../dom.js';
import { lineChart } from './svg-chart.js';
import { variantColor, chartColors } from './colors.js';
import { SPEC_BY_NAME, BUILD_LABELS, modelConfig } from './config.js';
import { TrainClient } from './runner.js';

export const LONG_POSITIONS = 2048;
const WINDOW = 32;

/**
 * Whether a variant's trained widths define a model of any seqLen (config.js's decodesPastSeqLen,
 * from the registry's dims). A Synthesizer head's parameters are sized by seqLen (dense:
 * [hidden, L], dense1: [dh, L], random: L × L, factorized-random: [L, rank]), so it decodes only
 * up to its own seqLen (docs/model.md, "Generation"): a 2048-position copy would be another, far
 * larger model. The mixture here has a random component, so the same holds for it (at 2048
 * positions its r matrices with their gradients and AdamW moments take ~600 MB at the text
 * defaults: too much for a timing demo).
 */
const decodesLong = (name) => SPEC_BY_NAME[name]?.decodesPastSeqLen === true;

const label = (name) => SPEC_BY_NAME[name]?.label ?? name;

/**
 * The median of each window of `w` steps (the last window ends at the last step). msPerToken[g]
 * timed the token at position g + 1 (the prompt is one token), so a point sits at the position of
 * its window's last token.
 */
export function smooth(msPerToken, w = WINDOW) {
  const n = msPerToken.length;
  const out = [];
  for (let end = Math.min(w, n); n > 0; end = Math.min(end + w, n)) {
    const win = Array.from(msPerToken.subarray(Math.max(0, end - w), end)).sort((a, b) => a - b);
    out.push([end, win[win.length >> 1]]);
    if (end === n) break;
  }
  return out;
}

export class LongGenPanel {
  constructor(root) {
    this.positions = LONG_POSITIONS; // a test hook may lower it (index.js: setLongGenerationLength)
    this.button = el('button', { type: 'button', id: 'x-longgen-run', onclick: () => this.run() });
    this.cancelButton = el('button', { type: 'button', id: 'x-longgen-cancel', text: 'Cancel', disabled: true, onclick: () => this.cancel() });
    this.progress = el('progress', { id: 'x-longgen-progress', value: 0, max: 1, hidden: true, 'aria-label': 'Generation timing progress' });
    this.status = el('p', { class: 'note', id: 'x-longgen-status', role: 'status', 'aria-live': 'polite' });
    this.legend = el('ul', { class: 'x-longgen-legend', id: 'x-longgen-legend' });
    this.chart = el('figure', { class: 'x-chart', id: 'x-longgen-chart' });
    this.note = el('p', { class: 'note', id: 'x-longgen-note' });
    root.append(el('div', { class: 'x-longgen' },
      el('h4', { text: 'Speed at long sequences' }),
      this.note,
      el('div', { class: 'x-actions' }, this.button, this.cancelButton),
      this.progress, this.status, this.chart, this.legend));
    this.result = null;
    this.setRuns([], null, null);
  }

  setRuns(runs, task, cfg) {
    this.cancel(true);
    this.runs = runs;
    this.task = task;
    this.cfg = cfg;
    this.result = null;
    this.button.textContent = `Time generation to ${this.positions} positions`;
    this.button.disabled = !runs.length;
    this.note.textContent = `Speed only: untrained models of the same widths; softmax's key/value cache makes each token cost grow with the position, the linear family keeps a constant-size state. Each variant builds a causal model with seqLen ${this.positions} and generates ${this.positions - 1} tokens (a few seconds each, one variant at a time); each point is the median of ${WINDOW} steps.`;
    this.status.textContent = '';
    this.progress.hidden = true;
    this.legend.replaceChildren();
    this.chart.replaceChildren();
  }

  async run() {
    const runs = this.runs;
    const job = (this.job = { cancelled: false, client: null });
    const series = [];
    const na = [];
    this.button.disabled = true;
    this.cancelButton.disabled = false;
    this.progress.hidden = false;
    this.progress.max = runs.length;
    this.progress.value = 0;
    this.result = null;
    this.draw(series, na);
    for (const [i, r] of runs.entries()) {
      if (job.cancelled) break;
      const step = `Timing ${label(r.name)} (${i + 1} of ${runs.length})`;
      this.status.textContent = `${step}: starting…`;
      if (!decodesLong(r.name)) {
        na.push({ name: r.name, reason: `${r.name === 'mixture' ? 'its random component\'s parameters are' : 'its parameters are'} sized by seqLen, so it decodes only up to its own seqLen (${this.task.seqLen})` });
      } else {
        // the trained model's widths, vocab and seed; a long seqLen; nothing frozen (it never trains)
        const { freeze, ...config } = modelConfig(this.cfg, this.task, r.name);
        Object.assign(config, { seqLen: this.positions, causal: true });
        job.client = new TrainClient((e) => {
          if (e.type === 'generating' && this.job === job) this.status.textContent = `${step}: generating ${this.positions - 1} tokens…`;
        });
        try {
          const m = await job.client.call('timeGeneration', { build: this.cfg.build, config, count: this.positions - 1 });
          series.push({ name: r.name, label: label(r.name), color: variantColor(r.name), points: smooth(m.msPerToken) });
        } catch (err) {
          if (job.cancelled) break;
          na.push({ name: r.name, reason: `${err.code ?? ''} ${err.message}`.trim() });
        } finally {
          job.client.terminate(); // its model and instance are disposed already; the worker goes too
          job.client = null;
        }
      }
      if (job.cancelled) break;
      this.progress.value = i + 1;
      this.draw(series, na);
    }
    if (this.job !== job) return; // a reset or a new run took over
    this.job = null;
    this.result = { positions: this.positions, series, na, cancelled: job.cancelled };
    this.button.disabled = !this.runs.length;
    this.cancelButton.disabled = true;
    this.progress.hidden = true;
    this.status.textContent = job.cancelled
      ? `Cancelled: ${series.length ? 'the variants timed so far are shown' : 'nothing was timed'}.`
      : `Timed ${series.length} of ${runs.length} variant${runs.length === 1 ? '' : 's'} on the ${BUILD_LABELS[this.cfg.build] ?? this.cfg.build} build.`;
  }

  /** Stops the timing: ends the worker of the variant being timed. quiet: a reset, no message. */
  cancel(quiet = false) {
    const job = this.job;
    if (!job) return;
    job.cancelled = true;
    job.client?.terminate();
    if (quiet) this.job = null;
  }

  draw(series, na) {
    const width = Math.round(Math.min(720, Math.max(300, this.chart.clientWidth || 560)));
    this.chart.innerHTML = lineChart({
      width, title: `Time per token (median of ${WINDOW} steps)`, xLabel: 'position', yLabel: 'ms per token',
      series, xMax: this.positions, colors: chartColors(), empty: 'timing…',
    });
    this.legend.replaceChildren(
      ...series.map((s) => this.legendItem(s.name, el('span', { text: `${s.label}: ${s.points[0][1].toFixed(3)} ms per token at position ${s.points[0][0]}, ${s.points.at(-1)[1].toFixed(3)} ms at ${s.points.at(-1)[0]}` }))),
      ...na.map((x) => this.legendItem(x.name, el('span', { text: `${label(x.name)}: ` }), el('span', { class: 'muted', text: `n/a: ${x.reason}` }))));
  }

  legendItem(name, ...kids) {
    const sw = el('i', { class: 'swatch' });
    sw.style.background = variantColor(name);
    return el('li', { dataset: { variant: name } }, sw, ' ', ...kids);
  }

  /** The timing as plain data (the tests read it): { positions, series: [{ name, points }], na, cancelled }. */
  data() {
    return this.result && { ...this.result, series: this.result.series.map(({ name, points }) => ({ name, points })) };
  }
}
