// The training benchmark: how fast lab.model trains and generates.
//
//   1. The reference shape (dModel 96, 4 layers, 4 heads, seqLen 64, batch 16, vocab 65, dFF 384,
//      causal; ~0.46 M parameters): softmax on the SIMD and relaxed builds, the same model trained
//      with tfjs-core + tfjs-backend-wasm (tfjs-train.mjs, one thread, AdamW) and the SIMD128 and
//      relaxed-FMA peak kernels in the same interleaved rounds (so ratios and fractions of peak
//      divide numbers measured side by side); then every experiment variant on both builds.
//      tfjs starts from attnlab's initial parameters and trains on the same batch: the two loss
//      curves over the first steps are compared, so "the same model" is checked, not assumed.
//   2. The smaller shape tfjs was first measured at (dModel 64, 2 layers, seqLen 32, batch 32):
//      softmax against tfjs again, interleaved.
//   3. Every experiment variant at every task's defaults (src/js/tasks.js), SIMD build, on a real
//      batch of the task: ms per step and tokens per second.
//   4. Generation: model.generate() of a causal model at the reference widths with seqLen 4096,
//      ms per token against position for softmax (a key/value cache: O(t) per token) and linear,
//      efficient, taylor (a constant-size state: O(1)).
//
// A step is model.trainStep(tokens, targets, { lr }) on one fixed batch (the numbers a step
// computes do not change its cost). Flops: the matrix products of the step only (stepFlops).
import { flopCount } from '../src/js/reference.js';
import { factorA } from '../src/js/reference-model.js';
import { tasks } from '../src/js/tasks.js';
import { mulberry32 } from '../src/js/prng.js';
import { modelConfig, experimentVariants } from '../src/js/experiment.js';
import { relDiff } from './backward.mjs';
import { roundRobin } from './measure.mjs';
import { peakRunner } from './peak.mjs';
import { fmtMs, log } from './record.mjs';
import { tfjsTrainer } from './tfjs-train.mjs';

export const REFERENCE_SHAPE = { vocab: 65, seqLen: 64, dModel: 96, heads: 4, layers: 4, dFF: 384, batch: 16 };
export const TFJS_SMALL_SHAPE = { vocab: 65, seqLen: 32, dModel: 64, heads: 4, layers: 2, dFF: 256, batch: 32 };
// generate([1], seqLen - 1): step g reads position g (0-based), so position t (1-based: t tokens
// read) is step t - 1 and the last is t = seqLen - 1. Each t's figure: the window of steps t - window
// … t - 1, its median; the lowest over `runs` generations.
export const GENERATION = { seqLen: 4096, positions: [16, 64, 256, 1024, 4095], window: 16, runs: 3, variants: ['softmax', 'linear', 'efficient', 'taylor'] };
const TRAIN_BUILDS = ['attnlab-simd', 'attnlab-relaxed'];
const LR = 1e-3;
const CHECK_STEPS = 4; // steps of the tfjs / attnlab same-model check
const CHECK_LR = 1e-2;
// Weight decay 1 in the check: it shrinks the matrices by lr·1 = 1 % a step, far above the ~1e-3
// by which float32 rounding, amplified by Adam's normalisation of tiny gradients, lets two correct
// implementations' parameters drift apart in 4 steps (measured: without decay on the tfjs side the
// arrays differ by 6e-2 to 2e-1). So a tfjs model without (or with wrong) decay fails the
// parameter check, and a correct one passes it.
const CHECK_DECAY = 1;
const CHECK_TOL = { loss: 1e-5, params: 1e-2 }; // relative; measured: ~1e-7 and ~1e-3 when right, parameters ~1e-1 without decay
const CHECK_PARAMS = ['tok_emb', 'pos_emb', 'l0.wo', 'l0.fc1', 'l0.fc2b', 'lnf.g', 'out', 'outb']; // same names and layout in both
const errorText = (e) => `${e.code ? e.code + ': ' : ''}${e.message}`;

/**
 * Flops of the matrix products of one training step (2 per multiply-add): forward F = tokens ·
 * (layers · (4·d² + 2·d·dFF) + d·vocab) · 2 for the projections (q, k, v, W_o, the MLP, the output
 * layer) plus batch · layers · heads · the attention's count (src/js/reference.js flopCount, at
 * n = seqLen, d = dv = dh and the model's h, L, a, b, rank: docs/model.md). The backward pass
 * computes two products per forward product (the input's gradient and the weight's), so a step is
 * 3·F. Causal: the kernels that stream softmax over tiles of logits (the variants whose
 * lab.variants entry says keepsLse: softmax and the Synthesizers) skip the tiles above the diagonal, so their count is scaled by (n+1)/2n, the pairs a causal row reads (for
 * softmax exactly batch · layers · heads · T(T+1)/2 · dh · 2 · 2; dense's and factorized-dense's
 * O(n) logit parts are scaled too, which understates their count slightly at short lengths).
 * Element-wise work (LayerNorm, GELU, softmax, feature maps, AdamW) is not counted.
 */
export function stepFlops(c, variant = 'softmax', options = {}, info = variant === 'softmax' ? { keepsLse: true } : undefined) {
  // the variant's entry of lab.variants decides whether the masked half is skipped: required for any other variant
  if (typeof info?.keepsLse !== 'boolean') throw new Error(`stepFlops: the lab.variants entry of ${variant} (its keepsLse) is required`);
  const tokens = c.batch * c.seqLen, dh = c.dModel / c.heads, T = c.seqLen;
  const projections = tokens * (c.layers * (4 * c.dModel ** 2 + 2 * c.dModel * c.dFF) + c.dModel * c.vocab) * 2;
  const a = factorA(T);
  const dims = { n: T, d: dh, dv: dh, h: c.hidden ?? dh, L: T, a, b: T / a, rank: c.rank ?? Math.min(8, T) };
  const perHead = flopCount(variant, dims, options).flops;
  const skipsMasked = c.causal !== false && info.keepsLse;
  const attention = c.batch * c.layers * c.heads * perHead * (skipsMasked ? (T + 1) / (2 * T) : 1);
  return 3 * (projections + attention);
}

/** A batch of uniform tokens in [0, vocab), targets the next token of the same stream. */
function randomBatch({ vocab, seqLen, batch }, seed = 1) {
  const rnd = mulberry32(seed);
  const stream = Int32Array.from({ length: batch * seqLen + 1 }, () => Math.floor(rnd() * vocab));
  return { tokens: stream.subarray(0, batch * seqLen), targets: stream.subarray(1) };
}

const shapeConfig = (s, variant = 'softmax') => ({ variant, vocab: s.vocab, seqLen: s.seqLen, dModel: s.dModel, heads: s.heads, layers: s.layers, dFF: s.dFF, causal: true, seed: 1 });
const perStep = (st, s) => ({ ...st, tokens_per_s: (s.batch * s.seqLen) / (st.median_ms / 1000) });

/**
 * tfjs (made from the initial parameters of shapeConfig(shape), seed 1) and a fresh attnlab model of
 * that config train CHECK_STEPS steps on the same batch at CHECK_LR with weight decay CHECK_DECAY:
 * their losses, and then CHECK_PARAMS (max |diff| / max |attnlab| per array), must agree within
 * CHECK_TOL. The gradient norms say whether clipping (at 1) took part.
 */
function sameModelCheck(lab, tfjs, shape, batch) {
  const model = lab.model({ ...shapeConfig(shape), weightDecay: CHECK_DECAY });
  try {
    const ours = [], theirs = [], gradNorms = [];
    for (let i = 0; i < CHECK_STEPS; i++) {
      theirs.push(tfjs.step(batch.tokens, batch.targets, CHECK_LR, CHECK_DECAY));
      const r = model.trainStep(batch.tokens, batch.targets, { lr: CHECK_LR });
      ours.push(r.loss);
      gradNorms.push(r.gradNorm);
    }
    const lossDiff = Math.max(...ours.map((x, i) => Math.abs(x - theirs[i]) / Math.abs(x)));
    const mine = model.parameters(), other = tfjs.parameters(CHECK_PARAMS);
    // max |diff| / max |attnlab| per array (the backward pass's gradient-check measure)
    const params = Object.fromEntries(CHECK_PARAMS.map((name) => [name, relDiff({ [name]: other[name] }, { [name]: mine[name] })]));
    const paramDiff = Math.max(...Object.values(params));
    return { steps: CHECK_STEPS, lr: CHECK_LR, weight_decay: CHECK_DECAY, attnlab: ours, tfjs: theirs, grad_norms: gradNorms, clipped: gradNorms.some((g) => g > 1),
      loss_rel_diff: lossDiff, param_rel_diff: params, max_param_rel_diff: paramDiff, tolerance: CHECK_TOL,
      ok: lossDiff <= CHECK_TOL.loss && paramDiff <= CHECK_TOL.params };
  } finally { model.dispose(); }
}

/**
 * softmax on each build against tfjs (and the peak kernels) at one shape, interleaved. Returns
 * { shape, flops, rounds, entries: { name: stats + tokens_per_s + gflops }, check (sameModelCheck),
 *   tfjs (its version and parameter count, or { error }), tfjs_profile (when ctx.profileTfjs) }.
 */
async function headToHead(shape, builds, ctx) {
  const batch = randomBatch(shape);
  const entries = [], cleanup = [];
  for (const b of builds) {
    const model = b.lab.model(shapeConfig(shape));
    cleanup.push(() => model.dispose());
    entries.push({ key: b.name, fn: () => model.trainStep(batch.tokens, batch.targets, { lr: LR }) });
  }
  const out = { shape, flops: stepFlops(shape), rounds: ctx.quick ? 3 : 7, check: null, tfjs: null };
  let tfjs = null;
  if (ctx.want('tfjs-wasm')) {
    try {
      const simd = builds.find((b) => b.name === 'attnlab-simd') ?? builds[0];
      const start = simd.lab.model(shapeConfig(shape));
      let checker = null;
      try {
        checker = await tfjsTrainer(shape, start.parameters());
        out.check = sameModelCheck(simd.lab, checker, shape, batch);
      } finally { start.dispose(); checker?.dispose(); }
      tfjs = await tfjsTrainer(shape);
      cleanup.push(() => tfjs.dispose());
      out.tfjs = { ...tfjs.meta, parameters: tfjs.parameterCount };
      entries.push({ key: 'tfjs-wasm', fn: () => tfjs.step(batch.tokens, batch.targets, LR) });
    } catch (e) {
      out.tfjs = { error: errorText(e) };
      log(`  tfjs-wasm training: n/a: ${errorText(e)}`);
    }
  }
  const simdPeak = peakRunner(ctx.peakCfg ?? undefined);
  const relaxedPeak = ctx.relaxedPeakCfg ? peakRunner(ctx.relaxedPeakCfg, { relaxed: true }) : null;
  entries.push({ key: 'peak-simd128', fn: simdPeak.fn });
  if (relaxedPeak) entries.push({ key: 'peak-relaxed', fn: relaxedPeak.fn });
  globalThis.gc?.();
  try {
    out.entries = await roundRobin(entries, out.rounds);
    // where tfjs's step spends its time (one step, tf.profile's per-kernel times)
    if (tfjs && ctx.profileTfjs) out.tfjs_profile = await tfjs.profile(batch.tokens, batch.targets, LR);
  } finally { for (const f of cleanup) f(); }
  for (const [k, st] of Object.entries(out.entries)) {
    if (k.startsWith('peak')) st.gflops = (k === 'peak-simd128' ? simdPeak : relaxedPeak).flops / (st.median_ms * 1e6);
    else Object.assign(st, perStep(st, shape), { gflops: out.flops / (st.median_ms * 1e6) });
  }
  log(`  training step, dModel ${shape.dModel}, ${shape.layers} layers, seqLen ${shape.seqLen}, batch ${shape.batch} (${out.rounds} rounds): ` +
    Object.entries(out.entries).map(([k, v]) => `${k} ${fmtMs(v.median_ms)} ms`).join(', ') +
    (out.check ? `; same-model check ${out.check.ok ? 'passed' : 'FAILED'} (losses ${out.check.loss_rel_diff.toExponential(1)}, parameters ${out.check.max_param_rel_diff.toExponential(1)})` : ''));
  return out;
}

/** One model per build, timed in the same rounds; rows { variant, contender, ...stats } or n/a. */
async function variantSteps(name, config, batch, shape, builds, rounds) {
  const rows = [], entries = [], models = [];
  for (const b of builds) {
    try {
      const m = b.lab.model(config);
      models.push(m);
      entries.push({ key: b.name, fn: () => m.trainStep(batch.tokens, batch.targets, { lr: LR }) });
    } catch (e) { rows.push({ variant: name, contender: b.name, status: 'n/a', reason: errorText(e) }); }
  }
  try {
    if (entries.length) {
      const st = await roundRobin(entries, rounds);
      for (const [k, s] of Object.entries(st)) rows.push({ variant: name, contender: k, status: 'ok', parameters: models[0].parameterCount, ...perStep(s, shape) });
    }
  } catch (e) {
    for (const x of entries) rows.push({ variant: name, contender: x.key, status: 'n/a', reason: errorText(e) });
  } finally { for (const m of models) m.dispose(); }
  return rows;
}

async function everyVariant(shape, builds, ctx) {
  const rows = [];
  const batch = randomBatch(shape);
  for (const v of experimentVariants(builds[0].lab.variants)) {
    const config = modelConfig({ vocab: shape.vocab, seqLen: shape.seqLen, causal: true }, v, shape, 1);
    rows.push(...await variantSteps(v.name, config, batch, shape, builds, ctx.quick ? 2 : 4));
  }
  log(`  every variant at the reference shape: ${rows.filter((r) => r.contender === 'attnlab-simd').map((r) => `${r.variant} ${r.status === 'ok' ? fmtMs(r.median_ms) : 'n/a'}`).join(', ')} ms (SIMD build)`);
  return rows;
}

async function taskDefaults(simd, ctx) {
  const out = [];
  for (const name of Object.keys(tasks)) {
    const task = tasks[name]();
    const d = task.defaults;
    const shape = { vocab: task.vocab, seqLen: task.seqLen, dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF, batch: d.batch };
    const batch = task.sample(d.batch, 1, 'train');
    const rows = [];
    for (const v of experimentVariants(simd.lab.variants)) rows.push(...await variantSteps(v.name, modelConfig(task, v, d, 1), batch, shape, [simd], ctx.quick ? 3 : 5));
    out.push({ task: name, shape: { ...shape, causal: task.causal }, rows });
    log(`  ${name} defaults (SIMD build): ${rows.map((r) => `${r.variant} ${r.status === 'ok' ? fmtMs(r.median_ms) : 'n/a'}`).join(', ')} ms`);
  }
  return out;
}

/** ms per token of generate() against position, for the GENERATION variants. */
function generation(simd, ctx) {
  const seqLen = ctx.quick ? 1024 : GENERATION.seqLen;
  const positions = [...GENERATION.positions.filter((p) => p < seqLen - 1), seqLen - 1];
  const rows = [];
  for (const variant of GENERATION.variants) {
    let model;
    try {
      model = simd.lab.model({ ...shapeConfig({ ...REFERENCE_SHAPE, seqLen }, variant) });
      model.generate([1], 255, { temperature: 0 }); // warm-up (255 steps): the first steps also compile and grow memory
      // the lowest of `runs` generations: a burst of load from another process lifts one run's window, rarely all
      const runs = Array.from({ length: GENERATION.runs }, () => model.generate([1], seqLen - 1, { temperature: 0 }).msPerToken);
      const windowMedian = (ms, t) => {
        const w = Array.from(ms.slice(t - GENERATION.window, t)).sort((a, b) => a - b);
        return w[w.length >> 1];
      };
      const at = positions.map((p) => ({ position: p, median_ms: Math.min(...runs.map((ms) => windowMedian(ms, p))) }));
      const total = Math.min(...runs.map((ms) => ms.reduce((s, x) => s + x, 0)));
      rows.push({ variant, status: 'ok', seqLen, at, total_ms: total });
      log(`  generate ${variant}: ${at.map((x) => `t=${x.position} ${x.median_ms.toFixed(3)}`).join(', ')} ms/token`);
    } catch (e) {
      rows.push({ variant, status: 'n/a', reason: errorText(e) });
      log(`  generate ${variant}: n/a: ${errorText(e)}`);
    } finally { model?.dispose(); }
  }
  return { seqLen, window: GENERATION.window, runs: GENERATION.runs, rows };
}

/**
 * ctx: { builds (loaded attnlab contenders), quick, want, machine (machineInfo()), peakCfg and relaxedPeakCfg (the best
 * peak-kernel shapes of peaksBefore; relaxedPeakCfg null when relaxed SIMD is unsupported) }.
 * Returns results.training.
 */
export async function trainingPhase(ctx) {
  log(`\n== training at ${(performance.now() / 1000).toFixed(0)} s`);
  const builds = ctx.builds.filter((b) => TRAIN_BUILDS.includes(b.name) && !b.error);
  const simd = builds.find((b) => b.name === 'attnlab-simd');
  if (!simd) return { error: 'the SIMD build did not load' };
  // an earlier part may have disposed of a build's instance (the backward pass's memory probe
  // does): each build trains on an instance of its own
  for (const b of builds) if (!b.lab) await b.fresh();
  const t0 = performance.now();
  const m = ctx.machine;
  const out = { date: new Date().toISOString(), builds: builds.map((b) => b.name), lr: LR,
    meta: m && { cpu: m.cpu, cores: m.cores, node: m.node, commit: m.commit, uncommitted: m.uncommitted, loadavg_start: m.loadavg_start } };
  out.reference = await headToHead(REFERENCE_SHAPE, builds, { ...ctx, profileTfjs: true });
  out.small = await headToHead(TFJS_SMALL_SHAPE, builds, ctx);
  out.variants = await everyVariant(REFERENCE_SHAPE, builds, ctx);
  out.tasks = await taskDefaults(simd, ctx);
  out.generation = generation(simd, ctx);
  out.elapsed_s = (performance.now() - t0) / 1000;
  return out;
}
