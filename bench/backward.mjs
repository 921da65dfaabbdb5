// The backward pass: lab.attentionGrad (which runs the forward pass too, then the gradients of
// sum(dOutput ⊙ y) with respect to every input array) timed against lab.attention in the same
// interleaved rounds, for every variant on the SIMD and relaxed builds at two sizes a factor 4
// apart (1024 and 4096; 256 and 1024 when --quick); the peak wasm memory of the backward (a fresh
// instance per variant and build, read after the first call at each size); the tfjs-wasm gradient
// of softmax attention in the SIMD build's softmax rounds, checked against attnlab's gradients; and
// softmax's backward at n = 32768 once (8192 when --quick), for its memory.
import { roundRobin } from './measure.mjs';
import { callInputs, callOptions, D, DV, makeInputs, quadratic } from './plan.mjs';
import { fmtBytes, fmtMs, log } from './record.mjs';
import { loadTfjsGrad } from './tfjs-grad.mjs';

export const BACKWARD_BUILDS = ['attnlab-simd', 'attnlab-relaxed']; // the scalar build: time budget
export const GRAD_TOL = 1e-3; // max |diff| / max |reference| of each gradient array
const REF = 'attnlab-simd';
const TFJS_MAX_PREDICTED_MS = 12000; // per call: tfjs at the larger size only if predicted below this
const WARMED_MS = 250; // a first call this long, on an instance that ran the smaller size: no more warm-up

export const backwardSizes = (quick) => (quick ? [256, 1024] : [1024, 4096]);
export const hugeN = (quick) => (quick ? 8192 : 32768);
/** Rounds of one group: fewer with tfjs at the larger size (slow), more for the linear-time variants (calls of a few ms). */
const roundsFor = (n, sq, quick, slow) => (slow ? (quick ? 2 : 3) : !sq ? (quick ? 7 : 15) : n >= 4096 ? (quick ? 3 : 5) : (quick ? 5 : 9));
const half = (s) => ({ median_ms: s.median_ms, q1_ms: s.q1_ms, q3_ms: s.q3_ms, min_ms: s.min_ms, max_ms: s.max_ms, cpu_wall_ratio: s.cpu_wall_ratio, batch: s.batch });
const errorText = (e) => `${e.code ? e.code + ': ' : ''}${e.message}`;

/** max over the arrays of max |a - b| / max |b| (Infinity when one is missing or differs in length). */
export function relDiff(a, b) {
  let worst = 0;
  for (const key of Object.keys(b)) {
    const x = a[key], y = b[key];
    if (!x || x.length !== y.length) return Infinity;
    let scale = 0, diff = 0;
    for (let i = 0; i < y.length; i++) { scale = Math.max(scale, Math.abs(y[i])); diff = Math.max(diff, Math.abs(x[i] - y[i])); }
    const r = scale > 0 ? diff / scale : diff;
    worst = Number.isNaN(r) ? Infinity : Math.max(worst, r);
  }
  return worst;
}

const arrayBytes = (job, grads, output) => 4 * (Object.values(job.ins).reduce((s, x) => s + (x.length ?? 0), 0) + job.dO.length + output.length + Object.values(grads).reduce((s, x) => s + x.length, 0));

/** One variant at one size: the call's inputs, dOutput (uniformArray(n·dv, n, 'dOutput')) and options. */
function jobAt(variant, n, ctx) {
  const inp = ctx.data.get(n) ?? makeInputs(n);
  return { n, ins: callInputs(variant, ctx.registry, inp), dO: inp.get('dOutput', ['n', 'dv']), opt: callOptions(variant) };
}

/**
 * The first attentionGrad at each size of a group (memory, gradients for the checks, and whether it
 * is long enough to need no warm-up), then the interleaved rounds of forward and backward entries.
 */
async function firstCalls(lab, variant, group, ctx, out, build) {
  const entries = [], firsts = [];
  for (const n of group) {
    const job = jobAt(variant, n, ctx);
    const t = performance.now();
    let g;
    try { g = lab.attentionGrad(variant.id, job.ins, job.dO, job.opt); } catch (e) {
      out.rows.push({ variant: variant.id, contender: build.name, n, status: 'n/a', reason: errorText(e) });
      log(`  backward ${variant.id} ${build.name} n=${n}: n/a: ${errorText(e)}`);
      continue;
    }
    const warmed = n > ctx.sizes[0] && performance.now() - t > WARMED_MS;
    firsts.push({ n, job, grads: g.grads, memory: lab.memoryBytes(), array_bytes: arrayBytes(job, g.grads, g.output) });
    entries.push({ key: `${n} forward`, fn: () => lab.attention(variant.id, job.ins, job.opt).output, warmed },
      { key: `${n} backward`, fn: () => lab.attentionGrad(variant.id, job.ins, job.dO, job.opt).grads, warmed });
  }
  return { entries, firsts };
}

/** A row per size from the rounds, and the check of the gradients against the SIMD build's. */
function rowsOf(variant, build, firsts, stats, rounds, ctx, out) {
  for (const f of firsts) {
    const fw = stats[`${f.n} forward`], bw = stats[`${f.n} backward`];
    const row = {
      variant: variant.id, contender: build.name, n: f.n, d: D, dv: DV, status: 'ok', rounds,
      forward: half(fw), backward: half(bw), ratio: bw.median_ms / fw.median_ms, backward_only_ratio: (bw.median_ms - fw.median_ms) / fw.median_ms,
      peak_memory_bytes: f.memory, array_bytes: f.array_bytes, initial_memory_bytes: ctx.initial,
    };
    out.rows.push(row);
    log(`  backward ${variant.id.padEnd(17)} ${build.name.padEnd(16)} n=${String(f.n).padEnd(5)} forward ${fmtMs(fw.median_ms)} ms, backward ${fmtMs(bw.median_ms)} ms: ${row.ratio.toFixed(2)}× (backward only ${row.backward_only_ratio.toFixed(2)}×), mem ${fmtBytes(f.memory)}`);
    const key = `${variant.id} ${f.n}`;
    if (build.name === REF) ctx.refGrads.set(key, f.grads);
    else if (ctx.refGrads.has(key)) pushCheck(out, { variant: variant.id, n: f.n, contender: build.name }, relDiff(f.grads, ctx.refGrads.get(key)));
  }
}

function pushCheck(out, what, diff) {
  const ok = diff <= GRAD_TOL;
  out.checks.push({ ...what, against: REF, diff, tol: GRAD_TOL, kind: 'max |diff| / max |reference| over the gradient arrays', ok });
  log(`  check gradients ${what.variant} n=${what.n} ${what.contender} vs ${REF}: ${diff.toExponential(2)} ${ok ? 'ok' : `FAIL (> ${GRAD_TOL})`}`);
}

/** Every size of one variant on one build, on a fresh instance: sizes apart for softmax-type variants, in the same rounds for the linear-time ones. */
async function variantOnBuild(variant, build, ctx, out) {
  const lab = await build.fresh();
  ctx.initial = lab.memoryBytes();
  const sq = quadratic(variant), groups = sq ? ctx.sizes.map((n) => [n]) : [ctx.sizes];
  for (const group of groups) {
    const { entries, firsts } = await firstCalls(lab, variant, group, ctx, out, build);
    if (!firsts.length) continue;
    const extra = variant.id === 'softmax' && build.name === REF ? tfjsEntry(group[0], firsts[0], ctx, out) : null;
    if (extra) entries.push(extra.entry);
    globalThis.gc?.();
    const rounds = roundsFor(group[group.length - 1], sq, ctx.quick, extra?.slow);
    const stats = await roundRobin(entries, rounds);
    rowsOf(variant, build, firsts, stats, rounds, ctx, out);
    if (extra) extra.done(stats);
  }
}

/**
 * The tfjs gradient at n as one more entry of the SIMD build's softmax rounds (prepared, run once
 * and checked here), or null when tfjs is n/a or would take too long (recorded in out.tfjs).
 */
function tfjsEntry(n, first, ctx, out) {
  const t = ctx.tfjs, prev = out.tfjs.rows.filter((r) => r.status === 'ok').at(-1);
  const skip = (reason) => { out.tfjs.rows.push({ n, status: 'n/a', reason }); log(`  backward softmax tfjs-wasm n=${n}: n/a: ${reason}`); return null; };
  if (t.error) return skip(t.error);
  const predicted = prev ? prev.grad.median_ms * (n / prev.n) ** 2 : 0;
  if (predicted > TFJS_MAX_PREDICTED_MS) return skip(`time budget: one call would take about ${(predicted / 1000).toFixed(0)} s (∝ n² from ${fmtMs(prev.grad.median_ms)} ms at n = ${prev.n})`);
  const { ins, dO } = first.job;
  let p;
  try {
    p = t.prepare(n, ins.d, ins.dv, ins.q, ins.k, ins.v, dO);
    const s = performance.now();
    const g = p.run();
    const check = relDiff(g, first.grads);
    pushCheck(out, { variant: 'softmax', n, contender: 'tfjs-wasm-grad' }, check);
    const slow = performance.now() - s > 2000;
    return {
      slow,
      entry: { key: 'tfjs-wasm grad', fn: () => p.run(), warmed: slow },
      done(stats) {
        const row = { n, status: 'ok', grad: half(stats['tfjs-wasm grad']), attnlab_forward: half(stats[`${n} forward`]), attnlab_backward: half(stats[`${n} backward`]), memory_bytes: p.memoryBytes(), check };
        row.speedup = row.grad.median_ms / row.attnlab_backward.median_ms;
        out.tfjs.rows.push(row);
        log(`  backward softmax tfjs-wasm gradient n=${n}: ${fmtMs(row.grad.median_ms)} ms = ${row.speedup.toFixed(1)}× attnlab-simd's backward (${(row.grad.median_ms / row.attnlab_forward.median_ms).toFixed(0)}× its forward)`);
        p.dispose();
      },
    };
  } catch (e) {
    p?.dispose();
    return skip(errorText(e));
  }
}

/** softmax's backward at n = hugeN once on the SIMD build: its time and its peak wasm memory. */
async function hugeSoftmax(build, ctx) {
  const n = hugeN(ctx.quick);
  const softmax = ctx.registry.find((v) => v.id === 'softmax');
  const lab = await build.fresh();
  const initial = lab.memoryBytes();
  const job = jobAt(softmax, n, ctx);
  globalThis.gc?.();
  const t = performance.now(), c0 = process.cpuUsage();
  const g = lab.attentionGrad('softmax', job.ins, job.dO, {});
  const ms = performance.now() - t, c = process.cpuUsage(c0);
  const r = { variant: 'softmax', contender: build.name, n, ms, cpu_wall_ratio: (c.user + c.system) / 1000 / ms, peak_memory_bytes: lab.memoryBytes(), initial_memory_bytes: initial, array_bytes: arrayBytes(job, g.grads, g.output), nn_bytes: 4 * n * n };
  r.working_bytes = r.peak_memory_bytes - r.initial_memory_bytes - r.array_bytes;
  log(`  backward softmax n=${n} (${build.name}, once): ${(ms / 1000).toFixed(1)} s, peak wasm memory ${fmtBytes(r.peak_memory_bytes)} (inputs, dOutput, output and gradients ${fmtBytes(r.array_bytes)}; module's initial memory ${fmtBytes(initial)}; the rest ${fmtBytes(r.working_bytes)}; n×n floats would be ${fmtBytes(r.nn_bytes)})`);
  build.dispose();
  return r;
}

/**
 * ctx: { builds, registry, variants, quick, want }. Returns results.backward:
 * { sizes, builds, rows, checks, tfjs: { meta, rows }, huge, notes }.
 */
export async function backwardPhase(ctx) {
  const sizes = backwardSizes(ctx.quick);
  const builds = ctx.builds.filter((b) => BACKWARD_BUILDS.includes(b.name) && !b.error);
  const out = { sizes, builds: builds.map((b) => b.name), rows: [], checks: [], tfjs: { meta: null, rows: [] }, huge: null, notes: [] };
  log(`\n== backward pass (attentionGrad against attention, interleaved) at n = ${sizes.join(', ')} at ${(performance.now() / 1000).toFixed(0)} s`);
  let tfjs = { error: 'skipped (--skip tfjs-wasm-grad)' };
  if (ctx.want('tfjs-wasm-grad')) try { tfjs = await loadTfjsGrad(); out.tfjs.meta = tfjs.meta; } catch (e) { tfjs = { error: e.message }; }
  const c = { ...ctx, sizes, tfjs, refGrads: new Map(), data: new Map(sizes.map((n) => [n, makeInputs(n)])) };
  for (const v of ctx.variants) {
    for (const b of builds) await variantOnBuild(v, b, c, out);
    c.refGrads.clear();
  }
  const simd = builds.find((b) => b.name === REF);
  if (!simd) out.notes.push('No SIMD build: the large-n softmax memory measurement needs it.');
  else if (ctx.variants.some((v) => v.id === 'softmax')) out.huge = await hugeSoftmax(simd, c);
  return out;
}
