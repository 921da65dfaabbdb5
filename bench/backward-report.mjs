// The backward pass in the report: its goals (computed from results.backward, each met / not met
// and by how much) and the "Backward pass" section of results.md (goals, the tfjs-wasm comparison,
// a table per variant, softmax's memory at large n, the gradient checks).
import { CONTENDED, familyOf, fmtMiB, fmtMs } from './targets.mjs';

const MEMORY_GOAL = 64 * 2 ** 20, HUGE_N = 32768; // the issue's memory goal: softmax backward at n = 32768 within 64 MiB
const RATIO_GOAL = { softmax: 2.5, linear: 3, recurrent: 4 };
const TFJS_GOAL = 8;
const x2 = (r) => `${r.toFixed(2)}×`;
const ms2 = (a, b) => `${fmtMs(a)} ms / ${fmtMs(b)} ms`;
const bRow = (bw, c, v, n) => bw.rows.find((r) => r.contender === c && r.variant === v && r.n === n);
const okB = (bw, c, v, n) => { const r = bRow(bw, c, v, n); return r?.status === 'ok' ? r : null; };
const why = (bw, c, v, n) => bRow(bw, c, v, n)?.reason ?? 'not run';

/** "by how much": the measured value against the limit, as a percentage over (or to spare). */
function margin(value, limit, atMost) {
  if (value == null) return '';
  const over = atMost ? value / limit - 1 : limit / value - 1;
  const pc = `${(100 * Math.abs(over)).toFixed(Math.abs(over) < 0.1 ? 1 : 0)} %`;
  return over > 0 ? `${pc} ${atMost ? 'over' : 'short'}` : `${pc} to spare`;
}

function goal(add, { target, n, value, shown, limit, atMost = true, detail, unit = '×' }) {
  const req = `${atMost ? '≤' : '≥'} ${limit}${unit === '×' ? '×' : unit}`;
  const lim = unit === ' MiB' ? limit * 2 ** 20 : limit;
  const met = value == null ? null : atMost ? value <= lim : value >= lim;
  add({ group: 'backward', target, n, value, shown: value == null ? null : shown ?? x2(value), required: req, met, by: margin(value, lim, atMost), detail });
}

function ratioGoals(bw, add, v, limit) {
  for (const n of bw.sizes) {
    const r = okB(bw, 'attnlab-simd', v, n);
    const d = r ? `${ms2(r.backward.median_ms, r.forward.median_ms)} (interleaved, ${r.rounds} rounds)` : why(bw, 'attnlab-simd', v, n);
    goal(add, { target: `${v} backward (attentionGrad, includes its forward) / forward, SIMD build`, n, value: r?.ratio, limit, detail: d });
    goal(add, { target: `${v} backward only ((attentionGrad − attention) / forward), SIMD build`, n, value: r?.backward_only_ratio, limit, detail: r ? `(${fmtMs(r.backward.median_ms)} − ${fmtMs(r.forward.median_ms)}) ms / ${fmtMs(r.forward.median_ms)} ms` : d });
  }
}

function tfjsGoals(bw, add) {
  for (const n of bw.sizes) {
    const t = bw.tfjs.rows.find((r) => r.n === n);
    const detail = t?.status === 'ok' ? `${ms2(t.grad.median_ms, t.attnlab_backward.median_ms)} (interleaved; tfjs's gradient is ${(t.grad.median_ms / t.attnlab_forward.median_ms).toFixed(0)}× attnlab's forward)` : t?.reason ?? 'not run';
    goal(add, { target: 'softmax backward, SIMD build vs tfjs-wasm gradient (tf.grads): speed-up', n, value: t?.speedup, limit: TFJS_GOAL, atMost: false, detail });
  }
}

function linearGoals(results, add) {
  const bw = results.backward, [n1, n2] = bw.sizes;
  for (const v of familyOf(results, 'linear').filter((x) => bw.rows.some((r) => r.variant === x))) {
    ratioGoals(bw, add, v, RATIO_GOAL.linear);
    const a = okB(bw, 'attnlab-simd', v, n1), b = okB(bw, 'attnlab-simd', v, n2);
    const s = a && b ? b.backward.median_ms / a.backward.median_ms : null;
    goal(add, { target: `${v} backward: time(${n2}) / time(${n1}), SIMD build (linear in n: ≈ ${n2 / n1}; quadratic: ${(n2 / n1) ** 2})`, n: n2, value: s, shown: s?.toFixed(2), limit: 1.125 * (n2 / n1), unit: '', detail: s ? `${ms2(b.backward.median_ms, a.backward.median_ms)} (the two sizes in the same rounds)` : 'not measured at both sizes' });
  }
}

function memoryGoals(bw, add) {
  const n = HUGE_N, h = bw.huge?.n === n ? bw.huge : null;
  const elsewhere = bw.huge && !h ? `this run measured n = ${bw.huge.n} (a quick run): ${fmtMiB(bw.huge.peak_memory_bytes)} MiB, of which ${fmtMiB(bw.huge.working_bytes)} MiB beyond the arrays` : null;
  const detail = elsewhere ?? (h ? `${fmtMiB(h.peak_memory_bytes)} MiB = inputs, dOutput, output and gradients ${fmtMiB(h.array_bytes)} MiB + module's initial memory ${fmtMiB(h.initial_memory_bytes)} MiB + workspace and layout ${fmtMiB(h.working_bytes)} MiB; n×n floats would be ${fmtMiB(h.nn_bytes)} MiB; the call took ${(h.ms / 1000).toFixed(1)} s on ${h.contender}` : 'not measured');
  goal(add, { target: 'softmax backward: peak wasm memory (everything: arrays, module, workspace)', n, value: h?.peak_memory_bytes, shown: h && `${fmtMiB(h.peak_memory_bytes)} MiB`, limit: MEMORY_GOAL / 2 ** 20, unit: ' MiB', detail });
  goal(add, { target: 'softmax backward: working memory beyond the arrays it reads and returns and the module\'s initial memory', n, value: h?.working_bytes, shown: h && `${fmtMiB(h.working_bytes)} MiB`, limit: MEMORY_GOAL / 2 ** 20, unit: ' MiB', detail: elsewhere ?? (h ? `n×n floats would be ${fmtMiB(h.nn_bytes)} MiB` : 'not measured') });
  const n2 = bw.sizes.at(-1);
  const rows = bw.rows.filter((r) => r.status === 'ok' && r.n === n2 && r.contender === 'attnlab-simd' && r.variant !== 'random');
  const worst = rows.reduce((w, r) => { const x = r.peak_memory_bytes - r.array_bytes - r.initial_memory_bytes; return !w || x > w.x ? { x, v: r.variant } : w; }, null);
  goal(add, { target: `no n×n: largest backward working memory of any variant (random excepted: its input r is L×L), SIMD build, < n² floats (${fmtMiB(4 * n2 * n2)} MiB)`, n: n2, value: worst?.x, shown: worst && `${fmtMiB(worst.x)} MiB (${worst.v})`, limit: (4 * n2 * n2) / 2 ** 20, unit: ' MiB', detail: 'peak wasm memory − the arrays − the module\'s initial memory' });
}

/** The recurrent family: attentionGrad (the forward pass, its recomputation from the checkpoints
 * and the walk back) within 4× the forward pass. */
function recurrentGoals(results, add) {
  const bw = results.backward;
  for (const v of familyOf(results, 'recurrent').filter((x) => bw.rows.some((r) => r.variant === x)))
    ratioGoals(bw, add, v, RATIO_GOAL.recurrent);
}

/** The backward-pass goals (group 'backward'), met / not met and by how much; [] without a backward pass. */
export function backwardTargets(results) {
  const bw = results.backward, T = [];
  if (!bw) return T;
  const add = (t) => T.push(t);
  const softmax = bw.rows.some((r) => r.variant === 'softmax');
  if (softmax) { ratioGoals(bw, add, 'softmax', RATIO_GOAL.softmax); tfjsGoals(bw, add); }
  linearGoals(results, add);
  recurrentGoals(results, add);
  if (softmax) memoryGoals(bw, add);
  return T;
}

const mark = (met) => (met === true ? '✅ met' : met === false ? '❌ not met' : '– not measured');
const spread = (s) => `±${(50 * (s.q3_ms - s.q1_ms) / s.median_ms).toFixed(0)}%`;
const cell = (s) => `${fmtMs(s.median_ms)} ${spread(s)}${s.cpu_wall_ratio < CONTENDED ? ' †' : ''}`;

function goalsTable(targets, L) {
  const ts = targets.filter((t) => t.group === 'backward');
  L.push('### Goals', '', '| goal | n | measured | required | status | by | detail |', '|---|---:|---:|---:|---|---|---|');
  for (const t of ts) L.push(`| ${t.target} | ${t.n} | ${t.shown ?? '–'} | ${t.required} | ${mark(t.met)} | ${t.by} | ${t.detail ?? ''} |`);
  const c = (f) => ts.filter(f).length;
  L.push('', `${c((t) => t.met === true)} met, ${c((t) => t.met === false)} not met, ${c((t) => t.met == null)} not measured.`, '');
}

function tfjsTable(bw, L) {
  const m = bw.tfjs.meta;
  L.push('### softmax: attnlab against the tfjs-wasm gradient', '');
  L.push(m ? `@tensorflow/tfjs-backend-wasm ${m.version}, one thread (SIMD ${m.simd}): \`${m.op}\`. tfjs-core's Node build ships no gradients; the bench registers those of the kernels used (${m.gradients_registered_by_bench.join(', ') || 'none needed'}), written as tfjs-core's gradients/*_grad.js. Timed in the same interleaved rounds as attnlab's SIMD build; its gradients are checked against attnlab's (max |diff| / max |attnlab| ≤ 1e-3).` : 'tfjs-wasm did not load.', '');
  L.push('| n | attnlab forward ms | attnlab backward ms | tfjs-wasm gradient ms | tfjs / attnlab backward | tfjs / attnlab forward | check | tfjs wasm heap MiB |', '|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of bw.tfjs.rows) {
    if (t.status !== 'ok') { L.push(`| ${t.n} | | | n/a: ${t.reason} | | | | |`); continue; }
    L.push(`| ${t.n} | ${cell(t.attnlab_forward)} | ${cell(t.attnlab_backward)} | ${cell(t.grad)} | ${x2(t.speedup)} | ${x2(t.grad.median_ms / t.attnlab_forward.median_ms)} | ${t.check.toExponential(1)} | ${fmtMiB(t.memory_bytes)} |`);
  }
  L.push('');
}

function variantTables(bw, L) {
  L.push('### Time and memory by variant', '', 'Median ms over the interleaved rounds ± half the IQR. *backward* is `attentionGrad`, which runs the forward pass too; *ratio* = backward / forward (includes the forward); *backward only* = (backward − forward) / forward. Peak memory: `lab.memoryBytes()` of a fresh instance after the first `attentionGrad` at that n (arrays: the inputs, dOutput, output and gradients it lays out, included in the peak).', '');
  for (const v of [...new Set(bw.rows.map((r) => r.variant))]) {
    L.push(`#### ${v}`, '', '| n | build | forward ms | backward ms | ratio | backward only | peak memory MiB (arrays) |', '|---:|---|---:|---:|---:|---:|---:|');
    for (const n of bw.sizes) {
      for (const r of bw.rows.filter((x) => x.variant === v && x.n === n)) {
        if (r.status !== 'ok') { L.push(`| ${n} | ${r.contender} | n/a: ${r.reason} | | | | |`); continue; }
        L.push(`| ${n} | ${r.contender} | ${cell(r.forward)} | ${cell(r.backward)} | ${x2(r.ratio)} | ${x2(r.backward_only_ratio)} | ${fmtMiB(r.peak_memory_bytes)} (${fmtMiB(r.array_bytes)}) |`);
      }
    }
    L.push('');
  }
}

function checksPart(bw, L) {
  const bad = bw.checks.filter((c) => !c.ok);
  L.push('### Gradient checks', '', `Each build's gradients against the SIMD build's, and tfjs-wasm's against the SIMD build's, at each n: max |diff| / max |reference| over the gradient arrays ≤ 1e-3. ${bw.checks.length} checks, ${bad.length ? `**${bad.length} failed**` : 'all passed'}${bw.checks.length ? `; largest ${Math.max(...bw.checks.map((c) => c.diff)).toExponential(1)}` : ''}.`, '');
  for (const c of bad) L.push(`- FAILED: ${c.variant} n = ${c.n} ${c.contender}: ${c.diff.toExponential(2)}`);
  for (const note of bw.notes) L.push(`- ${note}`);
  if (bad.length || bw.notes.length) L.push('');
}

/** The "Backward pass" section of results.md. */
export function backwardSection(results, targets, L) {
  const bw = results.backward;
  if (!bw) return;
  L.push('## Backward pass', '');
  L.push(`\`lab.attentionGrad(id, inputs, dOutput, options)\` (the forward pass, then the gradients of sum(dOutput ⊙ y) with respect to every input array) against \`lab.attention\`, timed side by side in interleaved rounds (each round calls both once, starting from a different one; a linear-time variant's two sizes share the rounds), on ${bw.builds.join(' and ')} (the scalar build is not run: time budget), at n = ${bw.sizes.join(' and ')}, d = dv = ${results.meta.d} and the other dimensions of the forward tables; dOutput = uniformArray(n·dv, n, 'dOutput'). **Every "backward" time includes the forward pass** that attentionGrad runs; "backward only" subtracts the forward time measured in the same rounds. † marks a cell with less than ${CONTENDED * 100} % CPU/wall.`, '');
  goalsTable(targets, L);
  tfjsTable(bw, L);
  variantTables(bw, L);
  if (bw.huge) L.push(`### softmax at n = ${bw.huge.n}`, '', `One attentionGrad on ${bw.huge.contender}: ${(bw.huge.ms / 1000).toFixed(1)} s${bw.huge.cpu_wall_ratio < CONTENDED ? ' (contended)' : ''}; peak wasm memory ${fmtMiB(bw.huge.peak_memory_bytes)} MiB, of which the inputs, dOutput, output and gradients are ${fmtMiB(bw.huge.array_bytes)} MiB and the module's initial memory ${fmtMiB(bw.huge.initial_memory_bytes)} MiB; the rest, ${fmtMiB(bw.huge.working_bytes)} MiB, is the workspace (and 64-byte alignment, page rounding). n×n floats would be ${fmtMiB(bw.huge.nn_bytes)} MiB.`, '');
  checksPart(bw, L);
}
