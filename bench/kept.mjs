// The kept forward pass (docs/contract.md, "A kept forward pass"): what running the forward pass
// once instead of twice saves, measured as ratios in interleaved rounds of one process.
//
//   node --expose-gc bench/kept.mjs [--old DIR [--old-label TEXT]] [--rounds N] [--train-rounds N] [--out DIR]
//   node bench/kept.mjs --report-only     (kept.md again from kept.json)
//
// 1. Attention, SIMD build, one thread, n = 1024, d = dv = 64 (the inputs and options of the main
//    benchmark, bench/plan.mjs), every softmax-type variant: each round times
//      forward          attention(id, inputs, options)
//      attentionGrad    attentionGrad(id, inputs, dOutput, options)      (runs its own forward pass)
//      forward + grad   attention() then attentionGrad(): a user's forward and backward until now
//      kept forward     attention(id, inputs, { ...options, keep: true })
//      kept backward    result.backward(dOutput) of one kept forward pass
//      kept both        attention(keep) then result.backward(dOutput)
//    and the goal compares (kept both) / forward with (forward + grad) / forward: ≤ 3.2× for
//    softmax. The kept backward's gradients are checked against attentionGrad's, bit for bit.
//    Then softmax alone at n = 4096 (--large; 7 rounds), where the backward pass's share of the
//    time is larger (its five n²-products against the forward's two weigh more than the O(n·d)
//    work around them).
// 2. Training, SIMD build, one thread: a step of a causal softmax model at seqLen 2048 (dModel 64,
//    2 layers, 4 heads, dFF 256, vocab 65, batch 2: 4,096 tokens), and of the same linear model as
//    a control, on the binding of --old (before: each head's backward ran its forward again) and on
//    this checkout's dist/ (after), alternating which runs first each round, together with what
//    the heads' second forward passes cost, in the same rounds: 16 calls (batch 2 × 2 layers × 4
//    heads) at the heads' shape ({ n: 2048, d: 16, dv: 16 }, causal) of attentionGrad, of the kept
//    backward and of attention(); the second forward passes cost attentionGrad's time less the kept
//    backward's (the binding's per-call costs cancel). Goal: the step gets faster by at least that.
//    Both bindings train from the same seed on the same batch, and their losses must be the same
//    bits at every step.
//
// Writes bench/kept.md and bench/kept.json (--out DIR elsewhere); bench/results.md links them.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_DIR, machineInfo } from './cli.mjs';
import { summarize } from './measure.mjs';
import { callInputs, callOptions, D, DV, makeInputs } from './plan.mjs';
import { fmtMs, log } from './record.mjs';
import { mulberry32, uniformArray } from '../src/js/prng.js';

const { values: args } = parseArgs({
  options: {
    old: { type: 'string' }, 'old-label': { type: 'string' }, rounds: { type: 'string', default: '21' }, 'train-rounds': { type: 'string', default: '31' },
    out: { type: 'string', default: BENCH_DIR }, 'report-only': { type: 'boolean', default: false }, n: { type: 'string', default: '1024' }, large: { type: 'string', default: '4096' },
  },
});
const N = Number(args.n), LARGE = Number(args.large), ROUNDS = Number(args.rounds), TRAIN_ROUNDS = Number(args['train-rounds']);
const ATTENTION_GOAL = 3.2; // (kept forward + backward) / forward, softmax
const TRAIN_SHAPE = { vocab: 65, seqLen: 2048, dModel: 64, heads: 4, layers: 2, dFF: 256, batch: 2 };

const newBinding = await import(new URL('../dist/attnlab.js', import.meta.url).href);
const meta = { ...machineInfo(), script: 'bench/kept.mjs', n: N, d: D, dv: DV, rounds: ROUNDS, trainRounds: TRAIN_ROUNDS };

/** Index of the first element whose bits differ, -1 when none. */
function firstDiff(a, b) {
  if (a.length !== b.length) return 0;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length), ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}
const stat = (s) => ({ median_ms: s.median_ms, min_ms: s.min_ms, q1_ms: s.q1_ms, q3_ms: s.q3_ms, wall_median_ms: s.wall_median_ms, cpu_wall_ratio: s.cpu_wall_ratio });

/**
 * Interleaved rounds: every round runs each entry once, starting from a different one. An entry's
 * turn is a batch of calls of at least BATCH_MS of CPU time (one call when a call takes longer),
 * timed by the process's CPU time (user + system) as well as by the clock; the statistics are of
 * the CPU time per call. The calls run on one thread, so CPU time is their work, while the clock
 * also counts the time the scheduler gave other processes (this 2-core machine runs others, and
 * this script runs under nice -n 19 beside them). The batch is there because Linux brings a
 * running thread's CPU time up to date only at scheduler ticks (a few ms), too coarse for one call
 * of 10 ms. kept.json also holds each entry's minimum and the clock's median. Entries not marked warmed run for 0.3 s first (V8 tiers WebAssembly up while it runs)
 * and size their batch from it; warmed ones (a training step) run one call a turn.
 */
const BATCH_MS = 150;
function rounds(entries, count) {
  const batch = new Map();
  for (const e of entries) {
    if (e.warmed) { batch.set(e.key, 1); continue; }
    const start = process.cpuUsage();
    let calls = 0;
    for (; calls < 2 || cpuMs(start) < 300; calls++) e.fn();
    batch.set(e.key, Math.max(1, Math.ceil(BATCH_MS / (cpuMs(start) / calls))));
  }
  const cpu = new Map(entries.map((e) => [e.key, []])), wall = new Map(entries.map((e) => [e.key, []]));
  for (let r = 0; r < count; r++) {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[(i + r) % entries.length], k = batch.get(e.key);
      const c0 = process.cpuUsage(), t = performance.now();
      for (let b = 0; b < k; b++) e.fn();
      wall.get(e.key).push((performance.now() - t) / k);
      cpu.get(e.key).push(cpuMs(c0) / k);
    }
  }
  const out = {};
  for (const e of entries) {
    const c = cpu.get(e.key), w = wall.get(e.key), sum = (xs) => xs.reduce((s, x) => s + x, 0);
    out[e.key] = { ...summarize(c.slice()), wall_median_ms: summarize(w.slice()).median_ms, cpu_wall_ratio: sum(c) / sum(w), reps: count, batch: batch.get(e.key) };
  }
  return out;
}
function cpuMs(since) {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1000;
}

/** Part 1: every softmax-type variant at N, then softmax at LARGE, interleaved. */
async function attentionPart() {
  const lab = await newBinding.init({ simd: true, threads: 1, fresh: true });
  const rows = [];
  const jobs = lab.variants.filter((v) => v.keepsLse).map((variant) => ({ variant, n: N }));
  if (LARGE > 0) jobs.push({ variant: lab.variants.find((v) => v.id === 'softmax'), n: LARGE });
  { // V8 compiles WebAssembly with its baseline compiler first and the optimising one in the
    // background once functions are hot: 2 s of softmax's calls first, so that no variant's rounds
    // straddle the switch (one run's first rounds were twice as slow as the rest)
    const inp = makeInputs(N), dO = inp.get('dOutput', ['n', 'dv']), sm = lab.variants.find((v) => v.id === 'softmax');
    const ins = callInputs(sm, lab.variants, inp), start = process.cpuUsage();
    while (cpuMs(start) < 2000) lab.attention('softmax', ins, { keep: true }).backward(dO), lab.attentionGrad('softmax', ins, dO);
  }
  for (const { variant, n } of jobs) {
    const inp = makeInputs(n), dO = inp.get('dOutput', ['n', 'dv']);
    const ins = callInputs(variant, lab.variants, inp), opt = callOptions(variant), keep = { ...opt, keep: true };
    const kept = lab.attention(variant.id, ins, keep);
    const want = lab.attentionGrad(variant.id, ins, dO, opt), got = kept.backward(dO);
    const same = Object.keys(want.grads).every((g) => firstDiff(got.grads[g], want.grads[g]) < 0) && firstDiff(got.output, want.output) < 0;
    const entries = [
      { key: 'forward', fn: () => lab.attention(variant.id, ins, opt).output },
      { key: 'attentionGrad', fn: () => lab.attentionGrad(variant.id, ins, dO, opt).grads },
      { key: 'forward + grad', fn: () => { lab.attention(variant.id, ins, opt); return lab.attentionGrad(variant.id, ins, dO, opt).grads; } },
      { key: 'kept forward', fn: () => lab.attention(variant.id, ins, keep).output },
      { key: 'kept backward', fn: () => kept.backward(dO).grads },
      { key: 'kept both', fn: () => lab.attention(variant.id, ins, keep).backward(dO).grads },
    ];
    const count = n > N ? 7 : variant.id === 'softmax' ? ROUNDS : Math.max(5, Math.round(ROUNDS / 2));
    globalThis.gc?.();
    const st = rounds(entries, count);
    const f = st.forward.median_ms;
    const row = {
      variant: variant.id, n, rounds: count, same_bits: same, ...Object.fromEntries(Object.entries(st).map(([k, s]) => [k, stat(s)])),
      ratio_before: st['forward + grad'].median_ms / f, ratio_after: st['kept both'].median_ms / f,
      attentionGrad_ratio: st.attentionGrad.median_ms / f, kept_backward_ratio: st['kept backward'].median_ms / f,
      kept_forward_ratio: st['kept forward'].median_ms / f,
    };
    rows.push(row);
    log(`  ${variant.id.padEnd(17)} n=${n}: forward ${fmtMs(f)} ms; forward + attentionGrad ${row.ratio_before.toFixed(2)}×, ` +
      `kept forward + backward ${row.ratio_after.toFixed(2)}× (kept forward ${row.kept_forward_ratio.toFixed(2)}×, backward from it ` +
      `${row.kept_backward_ratio.toFixed(2)}×; attentionGrad ${row.attentionGrad_ratio.toFixed(2)}×); gradients ${same ? 'the same bits' : 'DIFFER'}`);
  }
  lab.dispose();
  return rows;
}

/** Tokens uniform over the vocabulary, targets the next token (a stream one longer). */
function randomBatch({ vocab, seqLen, batch }, seed = 1) {
  const rnd = mulberry32(seed);
  const stream = Int32Array.from({ length: batch * seqLen + 1 }, () => Math.floor(rnd() * vocab));
  return { tokens: stream.subarray(0, batch * seqLen), targets: stream.subarray(1) };
}

/** Part 2: a training step before (--old) and after (this dist/), alternating, with the rerun's cost alone. */
async function trainingPart(oldDir) {
  const oldBinding = await import(pathToFileURL(path.resolve(oldDir, 'attnlab.js')).href);
  const labs = { before: await oldBinding.init({ simd: true, threads: 1, fresh: true }), after: await newBinding.init({ simd: true, threads: 1, fresh: true }) };
  const s = TRAIN_SHAPE, { tokens, targets } = randomBatch(s);
  const config = (variant) => ({ variant, vocab: s.vocab, seqLen: s.seqLen, dModel: s.dModel, heads: s.heads, layers: s.layers, dFF: s.dFF, causal: true, seed: 1 });
  const out = { shape: s, variants: {} };
  // what the backward passes before this change ran again: every head's forward pass of every sequence
  const dh = s.dModel / s.heads, calls = s.batch * s.layers * s.heads;
  const x = { n: s.seqLen, d: dh, dv: dh, q: uniformArray(s.seqLen * dh, 7, 'q'), k: uniformArray(s.seqLen * dh, 7, 'k'), v: uniformArray(s.seqLen * dh, 7, 'v') };
  const dO = uniformArray(s.seqLen * dh, 7, 'dOutput'), keptX = labs.after.attention('softmax', x, { causal: true, keep: true });
  const heads = {
    forward: () => { for (let i = 0; i < calls; i++) labs.after.attention('softmax', x, { causal: true }); },
    attentionGrad: () => { for (let i = 0; i < calls; i++) labs.after.attentionGrad('softmax', x, dO, { causal: true }); },
    'kept backward': () => { for (let i = 0; i < calls; i++) keptX.backward(dO); },
  };
  for (const variant of ['softmax', 'linear']) {
    const models = { before: labs.before.model(config(variant)), after: labs.after.model(config(variant)) };
    const losses = { before: [], after: [] };
    const step = (which) => () => losses[which].push(models[which].trainStep(tokens, targets, { lr: 1e-3 }).loss);
    const entries = [{ key: 'before', fn: step('before'), warmed: true }, { key: 'after', fn: step('after'), warmed: true }];
    if (variant === 'softmax') for (const [key, fn] of Object.entries(heads)) entries.push({ key: `heads: ${key}`, fn });
    for (let w = 0; w < 3; w++) step('before')(), step('after')(); // warm-up (as many steps each, so the two models stay in step)
    if (variant === 'softmax') for (const fn of Object.values(heads)) fn();
    globalThis.gc?.();
    const st = rounds(entries, TRAIN_ROUNDS);
    const same = losses.before.length === losses.after.length && losses.before.every((l, i) => Object.is(l, losses.after[i]));
    const r = { before: stat(st.before), after: stat(st.after), steps: losses.after.length, same_losses: same };
    r.saved_ms = st.before.median_ms - st.after.median_ms;
    r.speedup = st.before.median_ms / st.after.median_ms;
    if (st['heads: forward']) {
      // what each head's backward pass ran again: attentionGrad's time less the kept backward's, at
      // the heads' shape, through the same binding (its per-call costs cancel)
      r.heads = { calls, shape: `attention('softmax', { n: ${s.seqLen}, d: ${dh}, dv: ${dh} }, { causal: true })`,
        ...Object.fromEntries(Object.keys(heads).map((k) => [k.replace(' ', '_'), stat(st[`heads: ${k}`])])) };
      r.rerun_ms = st['heads: attentionGrad'].median_ms - st['heads: kept backward'].median_ms;
    }
    out.variants[variant] = r;
    log(`  training step ${variant} seqLen ${s.seqLen}: before ${fmtMs(r.before.median_ms)} ms, after ${fmtMs(r.after.median_ms)} ms ` +
      `(${r.speedup.toFixed(3)}×, ${fmtMs(r.saved_ms)} ms saved)${r.heads ? `; the heads' ${calls} attentionGrad − kept backward ${fmtMs(r.rerun_ms)} ms ` +
        `(their forward passes ${fmtMs(r.heads.forward.median_ms)} ms)` : ''}; ` +
      `losses ${same ? 'the same bits' : 'DIFFER'} over ${r.steps} steps`);
    models.before.dispose(), models.after.dispose();
  }
  labs.before.dispose(), labs.after.dispose();
  out.old = args['old-label'] ?? path.resolve(oldDir);
  return out;
}

const pct = (x) => `${(Math.abs(x) * 100).toFixed(x === 0 ? 0 : Math.abs(x) < 0.1 ? 1 : 0)} %`;

/** What the numbers say, from the numbers: why a goal was met or missed. */
function explain(res) {
  const notes = [];
  const sm = res.attention.find((r) => r.variant === 'softmax' && r.n === res.meta.n);
  const cheap = res.attention.filter((r) => r.n === res.meta.n && r.kept_backward_ratio <= ATTENTION_GOAL - 1 + 0.05).map((r) => r.variant);
  if (sm) {
    notes.push(`softmax at n = ${sm.n}: the kept forward pass costs ${sm.kept_forward_ratio.toFixed(2)}× the forward pass (the binding also copies the inputs, y and lse into JavaScript memory) ` +
      `and the backward from it ${sm.kept_backward_ratio.toFixed(2)}× (attentionGrad ${sm.attentionGrad_ratio.toFixed(2)}×: the difference, ` +
      `${(sm.attentionGrad_ratio - sm.kept_backward_ratio).toFixed(2)}×, is the forward pass it no longer runs). The backward alone does five n²-sized products (the logits again, ` +
      'dP = dO·vᵀ, dV = Pᵀ·dO, dQ = dS·k, dK = dSᵀ·q) against the forward\'s two, on the same 4×8 micro-kernel at the same rate (natively 87 % of its time is that kernel), ' +
      `so kept forward + backward ≈ 1 + ${sm.kept_backward_ratio.toFixed(1)} ≈ ${sm.ratio_after.toFixed(1)}×: a goal of ${ATTENTION_GOAL}× needs a backward of about ` +
      `${(ATTENTION_GOAL - 1).toFixed(1)}× or less, which this run measured for ${cheap.length ? cheap.join(', ') + ' (logits without a product of width d, or a cheap one)' : 'no variant'}. ` +
      'Going below needs a faster backward kernel, not less repetition.');
  }
  const big = res.attention.find((r) => r.variant === 'random');
  if (big && big.kept_forward_ratio > 1.15) {
    notes.push(`random's kept forward pass costs ${big.kept_forward_ratio.toFixed(2)}× its forward pass: its input r is n×n (4 MiB at n = ${big.n}), which the kept result copies; the other variants' inputs are O(n·d).`);
  }
  const t = res.training?.variants?.softmax;
  if (t?.heads) {
    notes.push(`The softmax training step saves ${fmtMs(t.saved_ms)} ms of ${fmtMs(t.before.median_ms)} (${pct(t.saved_ms / t.before.median_ms)}), and the heads' second forward passes cost ` +
      `${fmtMs(t.rerun_ms)} ms at the attention level (their plain forward passes ${fmtMs(t.heads.forward.median_ms)} ms): the step saves the whole second forward pass, no more ` +
      '(nothing else in the step changed), to within the noise of these medians, a few ms each way between runs.');
  }
  return notes;
}

function markdown(res) {
  const m = res.meta, L = [];
  res.notes = [...res.notes.filter((n) => n.startsWith('The training step was not measured')), ...explain(res)];
  L.push('# The kept forward pass', '');
  L.push(`\`node bench/kept.mjs${res.training ? ' --old DIR' : ''}\` (see its header). ${m.cpu} (${m.cores} cores), Node ${m.node}, ${m.platform}; ${m.date.slice(0, 16).replace('T', ' ')} UTC; ` +
    `commit ${m.commit ?? '?'}${m.uncommitted?.length ? ` with uncommitted changes to ${m.uncommitted.join(', ')}` : ''}. ` +
    `Load average (1 min) at the start / end: ${m.loadavg_start.toFixed(2)} / ${m.loadavg_end.toFixed(2)}${Math.max(m.loadavg_start, m.loadavg_end) > 0.5 ? ' — other processes were running (this machine has 2 cores): absolute times are noisy; the ratios, from interleaved rounds, much less' : ''}.`, '');
  L.push('## Goals', '', '| goal | measured | required | status | by |', '|---|---:|---:|---|---|');
  for (const g of res.goals) L.push(`| ${g.what} | ${g.measured} | ${g.required} | ${g.met ? '✅ met' : '❌ not met'} | ${g.by} |`);
  L.push('');
  L.push(`## Attention, SIMD build, one thread, d = dv = ${m.d}`, '',
    'Medians over interleaved rounds (each round gives every entry a turn, starting from a different one) of the CPU time per call (the process\'s user + system time over a turn\'s ' +
    'batch of calls of at least 0.15 s: the calls run on one thread, and CPU time leaves out the time the scheduler gave other processes), as multiples of the forward pass ' +
    'measured in the same rounds; kept.json also has the clock\'s medians. ' +
    '"forward + attentionGrad" is what a forward and a backward cost until now (attentionGrad runs the forward pass again); "kept" is attention() with keep: true, then result.backward(dOutput).', '',
    '| variant | n | rounds | forward ms | attentionGrad | forward + attentionGrad | kept forward | backward from kept | kept forward + backward | saved | gradients |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of res.attention) {
    L.push(`| ${r.variant} | ${r.n} | ${r.rounds} | ${fmtMs(r.forward.median_ms)} | ${r.attentionGrad_ratio.toFixed(2)}× | ${r.ratio_before.toFixed(2)}× | ${r.kept_forward_ratio.toFixed(2)}× | ` +
      `${r.kept_backward_ratio.toFixed(2)}× | **${r.ratio_after.toFixed(2)}×** | ${pct(1 - r.ratio_after / r.ratio_before)} | ${r.same_bits ? 'attentionGrad\'s bits' : '**differ**'} |`);
  }
  L.push('');
  if (res.training) {
    const t = res.training, s = t.shape;
    L.push(`## Training step, SIMD build, one thread`, '',
      `A causal model of dModel ${s.dModel}, ${s.layers} layers, ${s.heads} heads, dFF ${s.dFF}, vocab ${s.vocab}, seqLen ${s.seqLen}, batch ${s.batch} (${s.batch * s.seqLen} tokens a step), ` +
      `on the binding of ${t.old} (before: every head's backward pass runs its forward pass again) and this checkout's dist/ (after), alternating, ${m.trainRounds} rounds, CPU time medians as above. ` +
      'Each model trains from the same seed on the same batch, one step per round, so the two take the same steps; "second forward passes" times, in the same rounds, what the backward passes before ran again.', '',
      '| variant | before ms | after ms | speed-up | saved ms | the heads\' second forward passes: attentionGrad − kept backward, ms | losses |', '|---|---:|---:|---:|---:|---:|---|');
    for (const [v, r] of Object.entries(t.variants)) {
      L.push(`| ${v} | ${fmtMs(r.before.median_ms)} | ${fmtMs(r.after.median_ms)} | ${r.speedup.toFixed(3)}× | ${fmtMs(r.saved_ms)} | ${r.heads ? `${fmtMs(r.rerun_ms)} (${fmtMs(r.heads.attentionGrad.median_ms)} − ${fmtMs(r.heads.kept_backward.median_ms)}); forward passes ${fmtMs(r.heads.forward.median_ms)}` : '–'} | ${r.same_losses ? `the same bits (${r.steps} steps)` : '**differ**'} |`);
    }
    L.push('');
  }
  if (res.notes.length) L.push('## Notes', '', ...res.notes.map((n) => `- ${n}`), '');
  return L.join('\n');
}

if (args['report-only']) {
  const res = JSON.parse(fs.readFileSync(path.join(args.out, 'kept.json'), 'utf8'));
  fs.writeFileSync(path.join(args.out, 'kept.md'), markdown(res));
  log(`wrote ${path.join(args.out, 'kept.md')} from kept.json`);
  process.exit(0);
}
log(`== kept forward pass: attention at n = ${N} (SIMD build, one thread, ${ROUNDS} rounds for softmax)`);
const res = { meta, attention: await attentionPart(), training: null, goals: [], notes: [] };
if (args.old) {
  log(`== training step at seqLen ${TRAIN_SHAPE.seqLen}: ${args.old} (before) against dist/ (after), ${TRAIN_ROUNDS} rounds`);
  res.training = await trainingPart(args.old);
} else {
  res.notes.push('The training step was not measured: it needs --old DIR, the dist/ of a build before this change.');
}
meta.loadavg_end = (await import('node:os')).default.loadavg()[0];

const sm = res.attention.find((r) => r.variant === 'softmax' && r.n === N);
if (sm) {
  const after = sm.ratio_after, by = after <= ATTENTION_GOAL ? `${pct(1 - after / ATTENTION_GOAL)} to spare` : `${pct(after / ATTENTION_GOAL - 1)} over`;
  res.goals.push({ what: `softmax n = ${N}: (kept forward + backward from it) / forward (before: (forward + attentionGrad) / forward = ${sm.ratio_before.toFixed(2)}×)`,
    measured: `${after.toFixed(2)}×`, required: `≤ ${ATTENTION_GOAL}×`, met: after <= ATTENTION_GOAL, by });
}
for (const r of res.attention) {
  res.goals.push({ what: `${r.variant} n = ${r.n}: backward from the kept forward pass gives attentionGrad's gradients and output`, measured: r.same_bits ? 'the same bits' : 'differ',
    required: 'the same bits', met: r.same_bits, by: '–' });
}
if (res.training) {
  const r = res.training.variants.softmax;
  const saved = r.saved_ms, rerun = r.rerun_ms, met = saved >= rerun;
  res.goals.push({ what: `softmax training step, seqLen ${TRAIN_SHAPE.seqLen}: time saved ≥ what the heads' second forward passes cost (${fmtMs(rerun)} ms: ${r.heads.calls} × attentionGrad − kept backward at the heads' shape, timed in the same rounds)`,
    measured: `${fmtMs(saved)} ms (${fmtMs(r.before.median_ms)} → ${fmtMs(r.after.median_ms)} ms)`, required: `≥ ${fmtMs(rerun)} ms`, met,
    by: met ? `${pct(saved / rerun - 1)} more` : `${pct(1 - saved / rerun)} short` });
  for (const [v, t] of Object.entries(res.training.variants)) {
    res.goals.push({ what: `${v} training: the same losses before and after, bit for bit`, measured: t.same_losses ? 'the same bits' : 'differ', required: 'the same bits', met: t.same_losses, by: '–' });
  }
}

fs.mkdirSync(args.out, { recursive: true });
fs.writeFileSync(path.join(args.out, 'kept.json'), JSON.stringify(res, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? +v.toPrecision(6) : v), 2) + '\n');
fs.writeFileSync(path.join(args.out, 'kept.md'), markdown(res));
log(`wrote ${path.join(args.out, 'kept.md')} and kept.json`);
for (const g of res.goals) log(`  ${g.met ? 'met' : 'NOT met'}: ${g.what}: ${g.measured} (${g.required}; ${g.by})`);
