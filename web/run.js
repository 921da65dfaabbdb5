// The run loop: debounced runs of the chosen variant in the worker, then the comparison (in its
// own worker); where an AttnError is shown (next to the control it names) and the stale state of
// the outputs. A change cancels the comparison at once, and a long call it made stale is stopped
// (its worker is replaced) rather than waited for.

import { $, el, elapsedIndicator } from './dom.js';
import { WEIGHTS_MAX_N } from './gen.js';
import { EXTRA_DIMS } from './state.js';
import { store, info, requestFor, validateDims, subscribe } from './store.js';
import { WorkerClient, cloneInputs } from './worker-client.js';
import { renderOutputs } from './outputs.js';
import { runCompare, cancelCompare, compareBusy } from './compare.js';

const DEBOUNCE_MS = 150;
const STALE_STOP_MS = 250; // a stale call running longer than this is stopped, not waited for
const loop = { worker: null, timer: null, inflight: false, queued: false, seq: 0, started: 0 };

export function scheduleRun(delay = DEBOUNCE_MS) {
  cancelCompare(); // its inputs are about to change
  clearTimeout(loop.timer);
  loop.timer = setTimeout(() => {
    loop.timer = null;
    startRun();
  }, delay);
}

async function startRun() {
  if (loop.inflight) {
    loop.queued = true;
    if (performance.now() - loop.started > STALE_STOP_MS) {
      loop.worker.terminate(); // the call in flight rejects with CANCELLED
      loop.worker = new WorkerClient();
    }
    return;
  }
  loop.inflight = true;
  loop.started = performance.now();
  try {
    const seq = await runMain();
    if (seq && !loop.queued) runCompare(() => seq === loop.seq && !loop.queued).catch((err) => console.warn(err));
  } catch (err) {
    console.warn(err);
  } finally {
    loop.inflight = false;
    if (loop.queued) {
      loop.queued = false;
      startRun();
    }
  }
}

/** True while a run is pending (debounce, in flight or queued) or a comparison computes. */
export function busy() {
  return !!loop.timer || loop.inflight || loop.queued || compareBusy();
}

/** Which control an AttnError message is about: the first input, option or dimension it names. */
function errorTarget(message) {
  const { variants, options } = store.lab;
  const arrays = new Set(variants.flatMap((v) => v.inputs.map((x) => x.name)));
  const opts = new Set([...variants.flatMap((v) => v.options), ...Object.keys(options ?? {}), 'causal', 'weights']);
  const dims = new Set(['n', 'd', 'dv', ...EXTRA_DIMS, ...Object.keys(store.lab.dims ?? {})]);
  for (const m of message.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const w = m[0];
    if (arrays.has(w)) return { target: 'inputs', name: w };
    if (opts.has(w)) return { target: 'options', name: w };
    if (dims.has(w)) return { target: 'dims', name: w };
  }
  return { target: 'run', name: null };
}

function clearInlineErrors() {
  for (const id of ['#dims-error', '#options-error', '#inputs-error', '#run-error']) {
    const e = $(id);
    e.hidden = true;
    e.textContent = '';
  }
  document.querySelectorAll('.tab.invalid').forEach((t) => t.classList.remove('invalid'));
}

function showError(err, where) {
  clearInlineErrors();
  store.lastError = { code: err.code ?? 'ERROR', message: err.message };
  const t = where ?? errorTarget(err.message);
  // a cell typed as no number: the page's own message under the inputs (#cell-error) names it in
  // the editor's notation; the binding's refusal of the same cell would say it twice more
  const typed = t.target === 'inputs' && t.name && Object.keys(store.ui.badCells ?? {}).some((k) => k.startsWith(`${t.name}:`));
  const text = typed ? `a cell of ${t.name} is not a number (named under the inputs).` : `${err.code ? err.code + ': ' : ''}${err.message}`;
  const box = typed ? null : { inputs: '#inputs-error', options: '#options-error', dims: '#dims-error' }[t.target];
  if (box) {
    $(box).textContent = text;
    $(box).hidden = false;
  }
  if (t.target === 'inputs' && t.name) $(`#tab-${t.name}`)?.classList.add('invalid');
  const banner = $('#run-error');
  banner.replaceChildren(el('strong', { text: store.last ? 'Showing the last good output (stale). ' : 'No output yet. ' }), el('span', { text }));
  banner.hidden = false;
  setStale(true);
}

function setStale(s) {
  store.stale = s && !!store.last;
  $('#outputs').classList.toggle('stale', store.stale);
  $('#stale-badge').hidden = !store.stale;
  $('#outputs').dataset.stale = String(store.stale);
}

/** Runs the chosen variant; returns its sequence number, or 0 when it failed or was superseded. */
async function runMain() {
  const seq = ++loop.seq;
  const v = info();
  const dimErr = validateDims();
  if (dimErr) {
    showError({ code: 'SIZE', message: dimErr.message }, { target: 'dims' });
    return 0;
  }
  let req;
  try {
    req = requestFor(v.id);
  } catch (err) {
    showError({ code: 'SIZE', message: err.message }, { target: 'dims' });
    return 0;
  }
  const { inputs, transfer } = cloneInputs(req.inputs);
  let res;
  const stop = elapsedIndicator($('#computing'));
  try {
    res = await loop.worker.call('run', {
      variant: v.id, inputs, options: req.options, weights: req.dims.n <= WEIGHTS_MAX_N, build: store.state.build,
      timing: { budgetMs: 80, minSamples: 3, maxSamples: 25 }, extras: true,
    }, transfer);
  } catch (err) {
    if (seq !== loop.seq || err.code === 'CANCELLED') return 0;
    showError(err);
    return 0;
  } finally {
    stop();
  }
  if (seq !== loop.seq) return 0;
  store.last = {
    seq, id: v.id, info: v, req, inputs: req.inputs, options: req.options, dims: req.dims, output: res.output, weights: res.weights ?? null,
    timing: res.timing, build: res.build, simd: res.simd, adapter: res.adapter ?? null, intermediates: res.intermediates ?? [],
  };
  store.lastError = null;
  clearInlineErrors();
  setStale(false);
  renderOutputs();
  return seq;
}

export function initRunLoop(client) {
  loop.worker = client;
  subscribe((what) => {
    if (!what.all) scheduleRun(what.now ? 0 : DEBOUNCE_MS);
  });
}
