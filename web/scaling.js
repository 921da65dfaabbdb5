// The scaling panel: time against n for chosen variants and builds, in a worker of its own that
// Cancel terminates; the chart, crossings, slopes and the table of points. Its run state is its own.

import { $, el, BUILD_LABEL } from './dom.js';
import { fmt } from './explain.js';
import { flopCount, gflops } from '../dist/reference.js';
import { MAX_WIDTH, WASM_MAX_N } from './gen.js';
import { showTooltip, hideTooltip } from './tooltip.js';
import { drawChart, crossings, slopeOf, PALETTE, fmtMs, fmtN } from './chart.js';
import { store, effectiveOpts, on } from './store.js';
import { WorkerClient } from './worker-client.js';

const scaling = { running: false, client: null, points: [], done: false, cancelled: false, error: null, plan: null, hits: [], layout: null, crossings: [] };

/** What the test hook reports about the last scaling run. */
export function scalingReport() {
  return {
    running: scaling.running, done: scaling.done, cancelled: scaling.cancelled, error: scaling.error?.message ?? null,
    points: scaling.points.map((p) => ({ n: p.n, variant: p.variant, build: p.actualBuild ?? p.build, median: p.timing?.median ?? null, timing: p.timing ?? null, dims: p.dims, options: p.options, skipped: p.skipped ?? null, error: p.error ?? null })),
    crossings: scaling.crossings.map((c) => ({ n: c.n, a: c.a.key, b: c.b.key })),
    noisy: (scaling.noisy ?? []).map((c) => ({ a: c.a.key, b: c.b.key, why: c.why })),
    layout: scaling.layout,
  };
}

function buildScalingControls() {
  const { lab } = store;
  const vbox = $('#scale-variants');
  for (const v of lab.variants) {
    const id = `sv-${v.id}`;
    const cb = el('input', { type: 'checkbox', id, checked: v.id === 'softmax' || v.id === 'linear', dataset: { variant: v.id } });
    vbox.append(el('label', { class: 'check', for: id }, cb, ` ${v.label}`));
  }
  const bbox = $('#scale-builds');
  const feats = lab.features ?? { simd: true, relaxedSimd: false };
  const builds = [];
  if (feats.relaxedSimd) builds.push('relaxed');
  if (feats.simd !== false) builds.push('simd');
  builds.push('scalar');
  for (const b of builds) {
    const id = `sb-${b}`;
    // the build the page itself runs, and scalar to compare against
    const cb = el('input', { type: 'checkbox', id, checked: b === lab.build || b === 'scalar', dataset: { build: b } });
    bbox.append(el('label', { class: 'check', for: id }, cb, ` ${BUILD_LABEL[b]}`));
  }
  $('#scale-run').addEventListener('click', startScaling);
  // WebGPU joins the builds once its check answers (controls.js, offerScalingWebGPU)
  for (const k of ['d', 'dv']) $(`#scale-${k}`).addEventListener('input', checkParams);
  $('#scale-cancel').addEventListener('click', cancelScaling);
  const chart = $('#scale-chart');
  chart.addEventListener('mousemove', (ev) => {
    if (!scaling.hits?.length) return;
    const r = chart.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    let best = null, bd = 144;
    for (const h of scaling.hits) {
      const dd = (h.x - x) ** 2 + (h.y - y) ** 2;
      if (dd < bd) {
        bd = dd;
        best = h;
      }
    }
    if (!best) return hideTooltip(chart);
    const p = best.p;
    const t = p.point.timing;
    showTooltip(chart, ev.clientX, ev.clientY, { title: `${best.s.label}: n = ${p.n}`, lines: [`median ${fmtMs(p.ms)} (${t.samples > 1 ? `spread ${fmtMs(t.min)} – ${fmtMs(t.max)}` : 'one sample'})`, `${fmt(p.gflops, 3)} GFLOP/s`] });
  });
  chart.addEventListener('mouseleave', () => hideTooltip(chart));
  const unit = { n: 1, d: 1, dv: 1, h: 8, L: 1, a: 1, b: 1, rank: 4 };
  const f = lab.variants.map((v) => `${v.id}: ${flopCount(v.id, unit, effectiveOpts(v.id)).formula}`);
  $('#flop-note').textContent = `GFLOP/s = flop count / median time (a multiply-add is 2 flop; exp and the causal saving are not counted). Counts: ${f.join('; ')}.`;
}

/** d or dv of the chart: a whole number from 1 to MAX_WIDTH, or { error }. */
function readWidth(name) {
  const inp = $(`#scale-${name}`);
  const t = inp.value.trim();
  const x = Number(t);
  let error = null;
  if (inp.validity.badInput) error = `${name} is not a number`;
  else if (t === '') error = `${name} is empty: enter a whole number from 1 to ${MAX_WIDTH}`;
  else if (!Number.isInteger(x) || x < 1 || x > MAX_WIDTH) error = `${name} must be a whole number from 1 to ${MAX_WIDTH} (got ${t})`;
  inp.setAttribute('aria-invalid', String(!!error));
  return error ? { error } : { value: x };
}

/** Checks d and dv; shows what is wrong and keeps Run disabled until it is fixed. */
function checkParams() {
  const errors = ['d', 'dv'].map(readWidth).filter((r) => r.error).map((r) => r.error);
  const box = $('#scale-params-error');
  box.textContent = errors.length ? `${errors.join('; ')}. Fix it to run.` : '';
  box.hidden = !errors.length;
  $('#scale-run').disabled = scaling.running || errors.length > 0;
  return !errors.length;
}

function scalePlan() {
  const variants = [...document.querySelectorAll('#scale-variants input:checked')].map((x) => ({ id: x.dataset.variant, opts: effectiveOpts(x.dataset.variant) }));
  const builds = [...document.querySelectorAll('#scale-builds input:checked')].map((x) => x.dataset.build);
  const maxN = Number($('#scale-max').value);
  const ns = [];
  for (let n = 64; n <= maxN; n *= 2) ns.push(n);
  return { variants, builds, ns, d: readWidth('d').value, dv: readWidth('dv').value, seed: store.state.seed, causal: $('#scale-causal').checked };
}

function setRunning(running) {
  scaling.running = running;
  $('#scale-cancel').disabled = !running;
  checkParams();
}

async function startScaling() {
  if (scaling.running || !checkParams()) return;
  const plan = scalePlan();
  if (!plan.variants.length || !plan.builds.length) {
    $('#scale-status').textContent = 'Pick at least one variant and one build.';
    return;
  }
  Object.assign(scaling, { plan, points: [], done: false, cancelled: false, error: null });
  setRunning(true);
  const total = plan.ns.length * plan.variants.length * plan.builds.length;
  const prog = $('#scale-progress');
  prog.max = total;
  prog.value = 0;
  $('#scale-status').textContent = `Running 0 / ${total}…`;
  drawScaling();
  const client = (scaling.client = new WorkerClient());
  try {
    await client.call('scale', { plan }, [], ({ point }) => {
      if (client !== scaling.client) return;
      scaling.points.push(point);
      prog.value = scaling.points.length;
      const tail = point.timing ? `n = ${point.n}, ${point.variant} (${point.actualBuild ?? point.build}): ${fmtMs(point.timing.median)}` : `n = ${point.n}, ${point.variant} (${point.build}): ${point.skipped ?? point.error?.message}`;
      $('#scale-status').textContent = `Running ${scaling.points.length} / ${total} — ${tail}`;
      drawScaling();
    });
    if (client === scaling.client) {
      scaling.done = true;
      $('#scale-status').textContent = `Done: ${scaling.points.filter((p) => p.timing).length} timings${scaling.points.some((p) => p.skipped || p.error) ? ', some sizes skipped (see the table)' : ''}.`;
    }
  } catch (err) {
    if (err.code !== 'CANCELLED' && client === scaling.client) {
      scaling.error = err;
      $('#scale-status').textContent = `Failed: ${err.code ?? ''} ${err.message}`;
    }
  } finally {
    if (client === scaling.client) {
      client.terminate(); // frees the instances' memory
      scaling.client = null;
      setRunning(false);
      drawScaling();
    }
  }
}

function cancelScaling() {
  if (!scaling.running || !scaling.client) return;
  const client = scaling.client;
  scaling.client = null;
  client.terminate();
  scaling.cancelled = true;
  setRunning(false);
  $('#scale-status').textContent = `Cancelled after ${scaling.points.length} point${scaling.points.length === 1 ? '' : 's'}; the worker was stopped.`;
  drawScaling();
}

/** The WebGPU build as a choice of the scaling run (not checked: a run on it is asked for, not assumed). */
export function offerScalingWebGPU(label) {
  if ($('#sb-webgpu')) return;
  const cb = el('input', { type: 'checkbox', id: 'sb-webgpu', checked: false, dataset: { build: 'webgpu' } });
  $('#scale-builds').append(el('label', { class: 'check', for: 'sb-webgpu', title: label }, cb, ` ${BUILD_LABEL.webgpu}`));
  // the GPU goes further: sizes past the WebAssembly builds' largest are run on WebGPU alone
  $('#scale-max').append(el('option', { value: String(WASM_MAX_N * 4), text: `${WASM_MAX_N * 4} (WebGPU past ${WASM_MAX_N})` }));
}

function scalingSeries() {
  const plan = scaling.plan;
  if (!plan) return [];
  const series = [];
  plan.variants.forEach((v, vi) => {
    const colorIdx = store.lab.variants.findIndex((x) => x.id === v.id);
    for (const b of plan.builds) {
      const pts = scaling.points.filter((p) => p.variant === v.id && p.build === b && p.timing);
      const actual = pts[0]?.actualBuild ?? b;
      const f = (p) => flopCount(v.id, p.dims, p.options).flops;
      series.push({
        key: `${v.id}/${b}`, variant: v.id, family: store.byId[v.id]?.family, build: actual, label: `${v.id} · ${BUILD_LABEL[actual] ?? actual}`,
        color: PALETTE[(colorIdx >= 0 ? colorIdx : vi) % PALETTE.length], dashed: actual === 'scalar',
        points: pts.map((p) => ({ n: p.n, ms: p.timing.median, gflops: gflops(f(p), p.timing.median), point: p })),
      });
    }
  });
  return series;
}

/** The largest n the form offers. */
const largestN = () => Math.max(...[...$('#scale-max').options].map((o) => Number(o.value)));

/** The legend's words for a series' slope (chart.js's slopeOf): the fit, its spread and range, or why there is none. */
function slopeText(fit) {
  if (!Number.isFinite(fit.slope)) {
    return /disagree|falls/.test(fit.why) ? `no slope: the timings are too noisy (${fit.why})` : `no slope (${fit.why})`;
  }
  const range = `n = ${fmtN(fit.from)}–${fmtN(fit.to)}`;
  const spread = fit.hi - fit.lo > 0.005 ? `, local slopes ${fit.lo.toFixed(2)}–${fit.hi.toFixed(2)}` : '';
  const left = (fit.left.length ? `; n = ${fit.left.join(', ')} left out, ${fit.left.length > 1 ? 'their' : 'its'} repeats disagree` : '')
    + (fit.offLine ? `; n = ${fit.offLine} left out, off the line of the sizes around it` : '');
  return fit.settled
    ? `slope ${fit.slope.toFixed(2)} (over ${range}${spread}${left}; 1 = O(n), 2 = O(n²))`
    : `slope ${fit.slope.toFixed(2)} over the largest sizes (${range}${spread}), still changing there: the curve has not settled by n = ${fmtN(fit.to)}`;
}

function drawScaling() {
  const canvas = $('#scale-chart');
  const plan = scaling.plan;
  const series = scalingSeries();
  const range = { nMin: 64, nMax: plan ? plan.ns[plan.ns.length - 1] : 16384 };
  // crossings between different variants on the same build
  const byBuild = {};
  for (const s of series) (byBuild[s.build] ??= []).push(s);
  const found = Object.values(byBuild).map((list) => crossings(list));
  const cross = found.flat();
  const noisy = found.flatMap((f) => f.noisy);
  scaling.crossings = cross;
  scaling.noisy = noisy;
  ({ hits: scaling.hits, layout: scaling.layout } = drawChart(canvas, series, range, { crossList: cross }));
  canvas.setAttribute('aria-label', series.length ? `Scaling chart: ${series.map((s) => `${s.label} ${s.points.length} points`).join('; ')}` : 'Scaling chart: no data yet');
  const lg = $('#scale-legend');
  lg.replaceChildren();
  for (const s of series) {
    const fit = slopeOf(s.points);
    lg.append(el('li', { dataset: { series: s.key, ...(Number.isFinite(fit.slope) ? { slope: String(fit.slope) } : {}) } },
      el('span', { class: `line-swatch${s.dashed ? ' dashed' : ''}`, style: `--c:${s.color}` }), ` ${s.label}`,
      el('span', { class: 'muted', text: s.points.length >= 2 ? ` — ${slopeText(fit)}` : '' })));
  }
  if (series.length) lg.append(el('li', { class: 'muted' }, el('span', { class: 'line-swatch dotted', style: '--c:var(--muted)' }), ' reference slopes ∝ n and ∝ n²'));
  // advise only what the form offers: a larger n when the chosen one is not already the largest
  const larger = plan && plan.ns.at(-1) < largestN() ? ', or to a larger n' : '';
  const noisyText = noisy.length ? ` No crossing is stated for ${noisy.map((x) => `${x.a.label} and ${x.b.label}`).join('; ')}: the timings are too noisy (${noisy.map((x) => x.why).join('; ')}); run again${larger}.` : '';
  $('#scale-crossings').textContent = cross.length
    ? 'Crossings: ' + cross.map((c) => `${c.a.label} and ${c.b.label} cross near n ≈ ${Math.round(c.n)} (${fmtMs(c.ms)}); above it ${c.faster} is faster`).join('; ') + '.' + noisyText
    : noisy.length ? noisyText.trim() : series.some((s) => s.points.length > 1) ? 'No crossings between different variants in this range.' : '';
  renderTable();
}

function renderTable() {
  const box = $('#scale-table');
  if (!scaling.points.length) {
    box.replaceChildren();
    return;
  }
  const table = el('table', { class: 'stats', id: 'scale-results' },
    el('thead', {}, el('tr', {}, ['n', 'variant', 'build', 'median', 'spread (min – max)', 'GFLOP/s', 'flop count'].map((t) => el('th', { scope: 'col', text: t })))));
  const tb = el('tbody');
  for (const p of scaling.points) {
    if (p.timing) {
      const f = flopCount(p.variant, p.dims, p.options);
      tb.append(el('tr', { dataset: { n: String(p.n), variant: p.variant, build: p.actualBuild ?? p.build, median: String(p.timing.median) } },
        el('td', { text: fmtN(p.n) }), el('td', { text: p.variant }), el('td', { text: BUILD_LABEL[p.actualBuild ?? p.build] ?? p.build }),
        el('td', { text: fmtMs(p.timing.median) }), el('td', { text: p.timing.samples > 1 ? `${fmtMs(p.timing.min)} – ${fmtMs(p.timing.max)} (${p.timing.samples}×${p.timing.batch ?? 1})` : 'one sample' }),
        el('td', { text: fmt(gflops(f.flops, p.timing.median), 3) }), el('td', { text: `${f.formula} = ${f.flops.toExponential(2)}` })));
    } else {
      tb.append(el('tr', { dataset: { n: String(p.n), variant: p.variant, build: p.build } },
        el('td', { text: fmtN(p.n) }), el('td', { text: p.variant }), el('td', { text: BUILD_LABEL[p.build] ?? p.build }),
        el('td', { colspan: '4', class: p.error ? 'error-text' : 'muted', text: p.error ? `${p.error.code}: ${p.error.message}` : `skipped: ${p.skipped}` })));
    }
  }
  table.append(tb);
  box.replaceChildren(table);
}

/**
 * Shows given points as if a run had measured them (the test hook's replay: a run's real
 * timings cannot be made noisy on purpose). plan: { variants: [{ id }], builds, ns }.
 */
export function replayScaling(plan, points) {
  Object.assign(scaling, { plan, points, done: true, cancelled: false, error: null });
  drawScaling();
}

export function initScaling() {
  buildScalingControls();
  drawScaling();
  on('theme', drawScaling);
  let rt = null;
  window.addEventListener('resize', () => {
    clearTimeout(rt);
    rt = setTimeout(drawScaling, 150);
  });
}
