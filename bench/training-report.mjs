// The training benchmark in the report: its goals (computed from results.training, each met / not
// met and by how much) and the "Training" section of results.md.
import { CONTENDED, fmtMs } from './targets.mjs';

const TFJS_GOAL = 3; // ≥ 3× faster per step than tfjs-wasm
const STEP_MS_GOAL = 150; // the reference shape in ≤ 150 ms per step, one thread
const PEAK_GOAL = 0.5; // ≥ 50 % of the measured peak in the step's matrix products
const FLAT_GOAL = 1.5; // linear family: ms/token at the last position ≤ 1.5 × at the first
const LINEAR_FAMILY = ['linear', 'efficient', 'taylor'];
const x2 = (r) => `${r.toFixed(2)}×`;
const pc = (f) => `${(100 * f).toFixed(0)} %`;
const kt = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : `${(x / 1e3).toFixed(1)} k`);
const cell = (s) => (s ? `${fmtMs(s.median_ms)} ±${(50 * (s.q3_ms - s.q1_ms) / s.median_ms).toFixed(0)}%${s.cpu_wall_ratio < CONTENDED ? ' †' : ''}` : '–');
const shapeText = (s) => `dModel ${s.dModel}, ${s.layers} layers, ${s.heads} heads, seqLen ${s.seqLen}, batch ${s.batch}, vocab ${s.vocab}, dFF ${s.dFF}`;

function margin(value, limit, atMost) {
  const over = atMost ? value / limit - 1 : limit / value - 1;
  const p = `${(100 * Math.abs(over)).toFixed(Math.abs(over) < 0.1 ? 1 : 0)} %`;
  return over > 0 ? `${p} ${atMost ? 'over' : 'short'}` : `${p} to spare`;
}

function goal(list, { target, value, shown, limit, atMost, unit = '', detail, also = true }) {
  // also: a further condition of the goal (the same-model check of a tfjs comparison)
  const met = value == null ? null : (atMost ? value <= limit : value >= limit) && also;
  list.push({ group: 'training', target, n: null, value, shown: value == null ? null : shown, required: `${atMost ? '≤' : '≥'} ${unit === '×' ? x2(limit) : unit === '%' ? pc(limit) : limit + unit}`, met, by: value == null ? '' : margin(value, limit, atMost), detail });
}

/** The training goals of results.training. */
export function trainingTargets(results) {
  const t = results.training;
  if (!t || t.error) return [];
  const out = [];
  for (const [label, h] of [['reference shape', t.reference], ['dModel 64, 2 layers, seqLen 32, batch 32', t.small]]) {
    const tf = h?.entries?.['tfjs-wasm'];
    for (const b of t.builds) {
      const a = h?.entries?.[b];
      const r = a && tf ? tf.median_ms / a.median_ms : null;
      const same = h?.check?.ok === true;
      goal(out, { target: `training step, ${label}: tfjs-wasm / ${b} (softmax), the same model (checked)`, value: r, shown: r && x2(r), limit: TFJS_GOAL, atMost: false, unit: '×', also: same,
        detail: a && tf ? `${fmtMs(tf.median_ms)} ms / ${fmtMs(a.median_ms)} ms (interleaved, ${h.rounds} rounds); same-model check ${same ? 'passed' : '**failed or not run: not a comparison of the same model**'}` : h?.tfjs?.error ?? 'not measured' });
    }
  }
  const ref = t.reference?.entries ?? {};
  for (const b of t.builds) {
    const a = ref[b];
    goal(out, { target: `training step, reference shape, ${b} (softmax): ms per step`, value: a?.median_ms, shown: a && `${fmtMs(a.median_ms)} ms`, limit: STEP_MS_GOAL, atMost: true, unit: ' ms',
      detail: a ? `${a.gflops.toFixed(1)} GFLOP/s, ${kt(a.tokens_per_s)} tokens/s${a.cpu_wall_ratio < CONTENDED ? '; contended (CPU/wall ' + a.cpu_wall_ratio.toFixed(2) + ')' : ''}` : 'not measured' });
    const peakKey = b === 'attnlab-relaxed' ? 'peak-relaxed' : 'peak-simd128';
    const p = ref[peakKey];
    const f = a && p ? a.gflops / p.gflops : null;
    goal(out, { target: `training step, reference shape, ${b}: matrix-product flops / step time, as a fraction of the ${peakKey === 'peak-relaxed' ? 'relaxed-FMA' : 'SIMD128'} peak`, value: f, shown: f != null && pc(f), limit: PEAK_GOAL, atMost: false, unit: '%',
      detail: f != null ? `${a.gflops.toFixed(1)} / ${p.gflops.toFixed(1)} GFLOP/s (same rounds); the whole step's time, so the products alone run at least this fast` : 'not measured' });
  }
  for (const v of LINEAR_FAMILY) {
    const g = t.generation?.rows.find((r) => r.variant === v && r.status === 'ok');
    const first = g?.at[0], last = g?.at.at(-1);
    const r = g ? last.median_ms / first.median_ms : null;
    goal(out, { target: `generation, ${v}: ms per token at position ${last?.position ?? '?'} / at ${first?.position ?? '?'} (flat: ≈ 1)`, value: r, shown: r != null && x2(r), limit: FLAT_GOAL, atMost: true, unit: '×',
      detail: g ? `${last.median_ms.toFixed(3)} / ${first.median_ms.toFixed(3)} ms` : 'not measured' });
  }
  return out;
}

function goalsTable(targets, L) {
  const tr = targets.filter((t) => t.group === 'training');
  L.push('### Goals', '', '| goal | measured | required | status | by | detail |', '|---|---:|---:|---|---|---|');
  for (const t of tr) L.push(`| ${t.target} | ${t.shown ?? '–'} | ${t.required} | ${t.met == null ? '– not measured' : t.met ? '✅ met' : '❌ not met'} | ${t.by} | ${t.detail ?? ''} |`);
  const c = (f) => tr.filter(f).length;
  L.push('', `${c((t) => t.met === true)} met, ${c((t) => t.met === false)} not met, ${c((t) => t.met == null)} not measured.`, '');
}

function headToHeadTable(h, L, title) {
  if (!h) return;
  L.push(`### ${title}`, '', `${shapeText(h.shape)}, causal; ${(h.flops / 1e9).toFixed(2)} GFLOP of matrix products per step (\`stepFlops\` in bench/training.mjs). Interleaved, ${h.rounds} rounds (the peak kernels in the same rounds).`, '');
  L.push('| contender | ms per step (± half IQR) | tokens/s | GFLOP/s |', '|---|---:|---:|---:|');
  for (const [k, s] of Object.entries(h.entries ?? {})) L.push(`| ${k} | ${k.startsWith('peak') ? '' : cell(s)} | ${s.tokens_per_s ? kt(s.tokens_per_s) : ''} | ${s.gflops.toFixed(1)} |`);
  if (h.tfjs?.error) L.push(`| tfjs-wasm | n/a: ${h.tfjs.error} | | |`);
  L.push('');
  const c = h.check;
  if (c) {
    L.push(`Same model, checked: tfjs started from attnlab's initial parameters (seed 1) and both trained ${c.steps} steps on the same batch at lr ${c.lr} with weight decay ${c.weight_decay} (1 % of each matrix a step, so decay is checked too). Losses attnlab ${c.attnlab.map((x) => x.toPrecision(6)).join(', ')} / tfjs ${c.tfjs.map((x) => x.toPrecision(6)).join(', ')}: relative difference ${c.loss_rel_diff.toExponential(1)} (tolerance ${c.tolerance.loss}). After the steps, max |diff| / max |attnlab| of ${Object.entries(c.param_rel_diff).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ')} (tolerance ${c.tolerance.params}: Adam amplifies float32 rounding in tiny gradients to ~1e-3, while a model without decay is off by ~1e-1). ${c.ok ? 'Passed' : '**Failed: not the same model**'}. Gradient norms ${c.grad_norms.map((g) => g.toFixed(2)).join(', ')}: clipping at 1 ${c.clipped ? 'took part' : 'did not take part (it is not checked by this)'}.`, '');
  }
  const p = h.tfjs_profile;
  if (p) {
    L.push(`Where tfjs's step goes (\`tf.profile\` of one step, its per-kernel times: ${fmtMs(p.total_ms)} ms in ${p.kernel_calls} kernel calls):`, '');
    L.push('| kernel | ms | calls |', '|---|---:|---:|');
    for (const k of p.kernels.filter((x) => x.ms >= 1)) L.push(`| ${k.name} | ${fmtMs(k.ms)} | ${k.calls} |`);
    L.push('', '| BatchMatMul operands | ms | calls | GFLOP/s |', '|---|---:|---:|---:|');
    for (const m of p.matmuls) L.push(`| ${m.shapes} | ${fmtMs(m.ms)} | ${m.calls} | ${m.gflops.toFixed(1)} |`);
    L.push('');
  }
}

function variantsTable(t, L) {
  const builds = t.builds;
  L.push('### Every variant at the reference shape', '', `${shapeText(t.reference.shape)}, causal; the experiment variants (mixture = softmax + random with learned α; random-frozen = random with r frozen). Interleaved per variant across the builds. ms per step (± half IQR) and tokens/s.`, '');
  L.push(`| variant | parameters | ${builds.map((b) => `${b} ms | ${b} tokens/s`).join(' | ')} |`, `|---|---:|${builds.map(() => '---:|---:').join('|')}|`);
  for (const v of [...new Set(t.variants.map((r) => r.variant))]) {
    const rs = builds.map((b) => t.variants.find((r) => r.variant === v && r.contender === b));
    const params = rs.find((r) => r?.parameters)?.parameters;
    L.push(`| ${v} | ${params ?? ''} | ${rs.map((r) => (r?.status === 'ok' ? `${cell(r)} | ${kt(r.tokens_per_s)}` : `n/a${r?.reason ? ': ' + r.reason : ''} | `)).join(' | ')} |`);
  }
  L.push('');
}

function tasksTable(t, L) {
  L.push('### Every variant at each task\'s defaults', '', 'SIMD build; the model and batch of `tasks[name]().defaults` (src/js/tasks.js) on a real training batch of the task; ms per step (± half IQR) / thousands of tokens per second. These are the models `npm run experiments` trains.', '');
  L.push(`| variant | ${t.tasks.map((x) => x.task).join(' | ')} |`, `|---|${t.tasks.map(() => '---:').join('|')}|`);
  L.push(`| *shape* | ${t.tasks.map((x) => `d ${x.shape.dModel}, ${x.shape.layers}×${x.shape.heads}h, T ${x.shape.seqLen}, B ${x.shape.batch}`).join(' | ')} |`);
  for (const v of [...new Set(t.tasks.flatMap((x) => x.rows.map((r) => r.variant)))]) {
    L.push(`| ${v} | ${t.tasks.map((x) => { const r = x.rows.find((y) => y.variant === v); return r?.status === 'ok' ? `${cell(r)} / ${(r.tokens_per_s / 1e3).toFixed(0)}k` : `n/a${r?.reason ? ': ' + r.reason : ''}`; }).join(' | ')} |`);
  }
  L.push('');
}

function generationTable(g, L) {
  if (!g) return;
  const positions = g.rows.find((r) => r.status === 'ok')?.at.map((x) => x.position) ?? [];
  L.push('### Generation', '', `\`model.generate([1], ${g.seqLen - 1}, { temperature: 0 })\` of a causal model at the reference widths with seqLen ${g.seqLen}, SIMD build; step g reads position g (0-based), so "t" is the number of tokens read and the figure at t is the median of steps t − ${g.window} … t − 1, the lowest of ${g.runs ?? 1} generations (after a 255-step warm-up). softmax keeps a key/value cache (O(t) work per token); linear, efficient and taylor a constant-size state per head (O(1)).`, '');
  L.push(`| variant | ${positions.map((p) => `t = ${p}`).join(' | ')} | whole run s |`, `|---|${positions.map(() => '---:').join('|')}|---:|`);
  for (const r of g.rows) {
    if (r.status !== 'ok') { L.push(`| ${r.variant} | n/a: ${r.reason} |`); continue; }
    L.push(`| ${r.variant} | ${r.at.map((x) => x.median_ms.toFixed(3)).join(' | ')} | ${(r.total_ms / 1000).toFixed(2)} |`);
  }
  L.push('');
}

/** The "Training" section of results.md. */
export function trainingSection(results, targets, L) {
  const t = results.training;
  if (!t) return;
  L.push('## Training', '');
  if (t.error) { L.push(`Not measured: ${t.error}.`, ''); return; }
  const m = t.meta;
  L.push(`\`model.trainStep\` (forward, backward, AdamW on one batch) of \`lab.model\` against the same model trained with tfjs-core + tfjs-backend-wasm ${t.reference?.tfjs?.version ?? ''} (one thread, SIMD; bench/tfjs-train.mjs: plain 2-D matMuls, explicit transposes, AdamW written with tf ops), measured ${t.date.slice(0, 16).replace('T', ' ')} UTC${m ? ` on ${m.cpu}, ${m.cores} cores, Node ${m.node}, commit ${m.commit}${m.uncommitted?.length ? ' + uncommitted ' + m.uncommitted.join(', ') : ''}, load average ${m.loadavg_start.toFixed(2)} at the start` : ''}; ${t.elapsed_s.toFixed(0)} s. † marks a cell with less than ${CONTENDED * 100} % CPU/wall (another process took the CPU).`, '');
  goalsTable(targets, L);
  headToHeadTable(t.reference, L, 'The reference shape: attnlab against tfjs-wasm');
  headToHeadTable(t.small, L, 'A smaller shape: attnlab against tfjs-wasm');
  variantsTable(t, L);
  tasksTable(t, L);
  generationTable(t.generation, L);
}
