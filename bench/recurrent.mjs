// The recurrent family (docs/contract.md, "The recurrent family") against linear attention, as
// ratios from interleaved rounds of one process: SIMD build, one thread, d = dv = 64, n = 256,
// 1024, 4096 and 16384 (256 and 1024 with --quick). Each round calls, once each and starting from
// a different one:
//   forward        attention(id, inputs) of linear (the main benchmark's: not causal), linear
//                  causal (the same causal recurrence with elu+1 features and a normaliser) and
//                  every recurrent variant (causal by construction)
//   kept backward  result.backward(dOutput) of one kept forward pass (which kept the state's
//                  checkpoints: the backward recomputes chunk by chunk, no scan of its own first)
//   attentionGrad  attentionGrad(id, inputs, dOutput), which runs the forward pass too
// so load from other processes hits them alike. Then, at n = 4096 and d = dv = 16 … 256,
// plain-linear (the scan below d = dv = 64, its chunked form from there) and gla (chunked from 128) against
// linear attention's chunked form of the same causal sum (linear causal: chunks of rows through
// the GEMM micro-kernel, with elu+1 features and a normaliser on top), with each one's kept
// backward; and every variant's accuracy against the float64 reference from n = 1024, on every
// build. Goals: plain-linear and gla within 1.5× of
// linear's forward time; the kept backward within 4× of the forward. The delta rules' ratio to
// linear is recorded, not held to a bound: they sweep the state twice a token (u needs S̃ᵀk
// before the write), where the other rules sweep it once.
//
//   node --experimental-wasm-relaxed-simd bench/recurrent.mjs [--quick] [--out DIR]
//
// Writes recurrent.md and recurrent.json (recurrent-quick.* with --quick) into DIR (bench/).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { commitText, machineInfo, respawnWithFlags } from './cli.mjs';
import { CONTENDED, roundRobin } from './measure.mjs';
import { callInputs, D, dimsFor, DV, makeInputs } from './plan.mjs';
import { fmtMs, writeRecorded } from './record.mjs';
import { ACCURACY_BAR, definitions } from '../src/js/reference.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BINDING = new URL('../dist/attnlab.js', import.meta.url).href;
export const FORWARD_GOAL = 1.5; // plain-linear and gla / linear
export const BACKWARD_GOAL = 4; // kept backward / forward
const { abs: ABS_BAR, rel: REL_BAR } = ACCURACY_BAR; // the contract's (docs/contract.md §3)
const roundsFor = (n, quick) => (quick ? 5 : n >= 16384 ? 9 : 15);
const x2 = (r) => (r == null ? '–' : `${r.toFixed(2)}×`);
const cell = (s) => `${fmtMs(s.median_ms)} ±${(50 * (s.q3_ms - s.q1_ms) / s.median_ms).toFixed(0)}%${s.cpu_wall_ratio < CONTENDED ? ' †' : ''}`;

export async function recurrentPhase({ quick = false, dir = HERE, log = console.log } = {}) {
  const { init } = await import(BINDING);
  const lab = await init({ simd: true, threads: 1, fresh: true });
  const sizes = quick ? [256, 1024] : [256, 1024, 4096, 16384];
  const family = lab.variants.filter((v) => v.family === 'recurrent');
  const linear = lab.variants.find((v) => v.id === 'linear');
  const delta = (v) => v.inputs.some((i) => i.name === 'beta'); // the delta rules read beta
  const machine = machineInfo();
  log(`\nrecurrent: SIMD build, one thread, d = dv = ${D}, n = ${sizes.join(', ')}; ${family.map((v) => v.id).join(', ')} against linear`);
  const rows = [];
  for (const n of sizes) {
    const data = makeInputs(n); // the main benchmark's arrays; callInputs moves the family's into range
    const dOutput = data.get('dOutput', ['n', 'dv']);
    const linearInputs = callInputs(linear, lab.variants, data);
    const entries = [
      { key: 'linear', fn: () => lab.attention('linear', linearInputs) },
      { key: 'linear causal', fn: () => lab.attention('linear', linearInputs, { causal: true }) },
    ];
    for (const v of family) {
      const inputs = callInputs(v, lab.variants, data), kept = lab.attention(v.id, inputs, { keep: true });
      entries.push({ key: `${v.id} forward`, fn: () => lab.attention(v.id, inputs) });
      entries.push({ key: `${v.id} kept backward`, fn: () => kept.backward(dOutput) });
      entries.push({ key: `${v.id} attentionGrad`, fn: () => lab.attentionGrad(v.id, inputs, dOutput) });
    }
    const rounds = roundsFor(n, quick);
    const t = await roundRobin(entries, rounds);
    const lin = t.linear.median_ms, linCausal = t['linear causal'].median_ms;
    for (const v of family) {
      const f = t[`${v.id} forward`], b = t[`${v.id} kept backward`], g = t[`${v.id} attentionGrad`];
      rows.push({
        n, variant: v.id, delta: delta(v), rounds, forward: f, kept_backward: b, attention_grad: g, linear: t.linear, linear_causal: t['linear causal'],
        vs_linear: f.median_ms / lin, vs_linear_causal: f.median_ms / linCausal,
        kept_backward_ratio: b.median_ms / f.median_ms, attention_grad_ratio: g.median_ms / f.median_ms,
      });
      log(`  n=${n} ${v.id}: forward ${fmtMs(f.median_ms)} ms (${x2(f.median_ms / lin)} linear, ${x2(f.median_ms / linCausal)} linear causal); kept backward ${x2(b.median_ms / f.median_ms)}, attentionGrad ${x2(g.median_ms / f.median_ms)} the forward`);
    }
  }
  // by width: plain-linear (chunked from d = dv = 64, gla from 128: chunked_form in src/c/recurrent.c)
  // against the chunked form of the same causal sum; each kept backward too
  const widths = quick ? [16, 64, 128] : [16, 32, 64, 128, 256], widthN = 4096, byWidth = [];
  for (const w of widths) {
    const data = makeInputs(widthN, { ...dimsFor(widthN), d: w, dv: w }), dOut = data.get('dOutput', ['n', 'dv']);
    const arrays = (v) => callInputs(v, lab.variants, data);
    const scans = family.filter((v) => !delta(v));
    const entries = [{ key: 'linear causal', fn: ((x) => () => lab.attention('linear', x, { causal: true }))(arrays(linear)) }];
    for (const v of scans) {
      const x = arrays(v), kept = lab.attention(v.id, x, { keep: true });
      entries.push({ key: v.id, fn: () => lab.attention(v.id, x) });
      entries.push({ key: `${v.id} kept backward`, fn: () => kept.backward(dOut) });
    }
    const t = await roundRobin(entries, quick ? 5 : 9);
    const row = {
      d: w, dv: w, n: widthN, chunked: t['linear causal'], scans: Object.fromEntries(scans.map((v) => [v.id, t[v.id]])),
      kept_backward: Object.fromEntries(scans.map((v) => [v.id, t[`${v.id} kept backward`]])),
    };
    byWidth.push(row);
    log(`  d = dv = ${w}: linear causal (chunked) ${fmtMs(row.chunked.median_ms)} ms; ${scans.map((v) => `${v.id} ${x2(t[v.id].median_ms / row.chunked.median_ms)} of it, kept backward ${x2(t[`${v.id} kept backward`].median_ms / t[v.id].median_ms)} its forward`).join('; ')}`);
  }
  // accuracy against the float64 reference at length: the worst error in units of the bar
  const accuracy = [];
  const accuracyLabs = [];
  for (const simd of [false, true, 'relaxed']) accuracyLabs.push({ build: simd === 'relaxed' ? 'relaxed' : simd ? 'simd' : 'scalar', lab: await init({ simd, threads: 1, fresh: true }) });
  // at d = dv = 64 (where plain-linear, deltanet and gated-deltanet run their chunked forms), and
  // gla at 128 (where it runs its own)
  const accuracyCases = [...family.map((v) => ({ v, width: D })), { v: family.find((v) => v.id === 'gla'), width: 128 }];
  for (const n of sizes.filter((x) => x >= 1024)) {
    for (const { v, width } of accuracyCases) {
      const data = makeInputs(n, { ...dimsFor(n), d: width, dv: width });
      const inputs = callInputs(v, lab.variants, data), ref = definitions[v.id].output(inputs, {});
      for (const { build, lab: l } of accuracyLabs) {
        const y = l.attention(v.id, inputs).output;
        let worst = 0, over = 0;
        for (let i = 0; i < y.length; i++) {
          const e = Math.abs(y[i] - ref[i]) / (ABS_BAR + REL_BAR * Math.abs(ref[i]));
          worst = Math.max(worst, e);
          if (e > 1) over++;
        }
        accuracy.push({ n, variant: v.id, d: width, dv: width, build, worst, over_share: over / y.length });
      }
    }
  }
  for (const { lab: l } of accuracyLabs) l.dispose();
  lab.dispose();
  const goals = [];
  for (const r of rows) {
    if (!r.delta) goals.push({ goal: `${r.variant} forward / linear forward`, n: r.n, value: r.vs_linear, limit: FORWARD_GOAL, met: r.vs_linear <= FORWARD_GOAL });
    goals.push({ goal: `${r.variant} kept backward / forward`, n: r.n, value: r.kept_backward_ratio, limit: BACKWARD_GOAL, met: r.kept_backward_ratio <= BACKWARD_GOAL });
  }
  const L = [];
  L.push('# The recurrent family against linear attention', '');
  L.push(`${machine.cpu} (${machine.cores} cores), Node ${machine.node}, ${machine.platform}; ${machine.date.slice(0, 10)}; commit ${commitText(machine)}. ` +
    `SIMD build, one thread, d = dv = ${D}; inputs uniform in [−1, 1) (the main benchmark's), moved into the family's range (g = −softplus, β = sigmoid, unit keys for the delta rules: \`recurrentRange\` of src/js/reference.js); no s0. ` +
    `Load average (1 min) at the start / end: ${machine.loadavg_start.toFixed(2)} / ${os.loadavg()[0].toFixed(2)}. Written by \`node bench/recurrent.mjs\`${quick ? ' --quick' : ''} (a part of \`npm run bench\`).`, '');
  L.push('Every time is the median over interleaved rounds (each round calls every entry of its n once, starting from a different one, so load from other processes hits them alike) ± half the IQR; † marks less than 90 % CPU/wall. Ratios are of medians from the same rounds.', '');
  L.push('## Goals', '', '| goal | n | measured | required | status |', '|---|---:|---:|---:|---|');
  for (const g of goals) L.push(`| ${g.goal} | ${g.n} | ${x2(g.value)} | ≤ ${g.limit}× | ${g.met ? '✅ met' : '❌ not met'} |`);
  L.push('', `${goals.filter((g) => g.met).length} met, ${goals.filter((g) => !g.met).length} not met.`, '');
  L.push('## Forward', '', '*linear* is the main benchmark\'s (not causal: a state, then one read-out per row); *linear causal* is the same family\'s causal form, the closer kin of a scan.', '');
  L.push('| n | variant | forward ms | / linear | / linear causal | linear ms | linear causal ms |', '|---:|---|---:|---:|---:|---:|---:|');
  for (const r of rows) L.push(`| ${r.n} | ${r.variant} | ${cell(r.forward)} | ${x2(r.vs_linear)} | ${x2(r.vs_linear_causal)} | ${cell(r.linear)} | ${cell(r.linear_causal)} |`);
  L.push('', '## Backward', '', '*kept backward* is `backward(dOutput)` of a kept forward pass (from its checkpoints); *attentionGrad* runs the forward pass first, so it includes one.', '');
  L.push('| n | variant | kept backward ms | / forward | attentionGrad ms | / forward |', '|---:|---|---:|---:|---:|---:|');
  for (const r of rows) L.push(`| ${r.n} | ${r.variant} | ${cell(r.kept_backward)} | ${x2(r.kept_backward_ratio)} | ${cell(r.attention_grad)} | ${x2(r.attention_grad_ratio)} |`);
  L.push('', '## By width: the scan, the chunked form and their backward', '',
    `n = ${widthN}, d = dv as given. *linear causal* is linear attention's chunked form of the same causal sum (chunks of rows through the GEMM micro-kernel; elu+1 features and a normaliser on top, a small share of its work); each variant's forward time is given as a ratio to it, in the form it runs in at that width (chunks of 16 tokens, src/c/recurrent_chunked.c, for plain-linear from d = dv = 64 and gla from 128; the scan below), and its kept backward as a ratio to its forward (gla\'s backward is always the scan\'s).`, '');
  const scanIds = Object.keys(byWidth[0]?.scans ?? {});
  L.push(`| d = dv | state KiB | linear causal ms | ${scanIds.map((id) => `${id} / linear causal | ${id} kept backward / forward`).join(' | ')} |`,
    `|---:|---:|---:|${scanIds.map(() => '---:|---:').join('|')}|`);
  for (const r of byWidth) {
    L.push(`| ${r.d} | ${(4 * r.d * r.dv / 1024).toFixed(0)} | ${cell(r.chunked)} | ${scanIds.map((id) => `${x2(r.scans[id].median_ms / r.chunked.median_ms)} | ${x2(r.kept_backward[id].median_ms / r.scans[id].median_ms)}`).join(' | ')} |`);
  }
  L.push('', 'The scan loads and stores the whole state every token, and is bound by that; a chunked form touches it twice a chunk of C tokens but adds C·(d + dv) multiply-adds a token (the chunk\'s own triangle). For plain-linear the chunked form (and its backward, the same products in reverse) won from d = dv = 64 on in the measurements that set the switch (src/c/recurrent.c, chunked_form); below that the scan is as fast or faster. gla\'s chunks carry its decays as per-feature factors e^±G, which cost more: its chunked forward wins from d = dv = 128. The delta rules run the WY form (their corrections by forward substitution a chunk; gated-deltanet with gla\'s factors) from 64 (not in this table; their backward is the scan\'s).', '');
  L.push('## Accuracy at length', '',
    `Each output against the float64 reference (src/js/reference.js, the recurrences from the math), in units of the bar (${ABS_BAR} + ${REL_BAR}·|ref|): the worst element and the share of elements over 1, the inputs of the tables above, one thread of each build; d = dv = ${D} (plain-linear, deltanet and gated-deltanet in their chunked forms, gla in its scan) and gla at 128 (its chunked form).`, '');
  L.push('| n | variant | d = dv | scalar worst | simd worst | relaxed worst | share over the bar (scalar / simd / relaxed) |', '|---:|---|---:|---:|---:|---:|---|');
  for (const n of [...new Set(accuracy.map((a) => a.n))]) {
    for (const { v, width } of accuracyCases) {
      const by = (b) => accuracy.find((a) => a.n === n && a.variant === v.id && a.d === width && a.build === b);
      const bs = ['scalar', 'simd', 'relaxed'].map(by);
      L.push(`| ${n} | ${v.id} | ${width} | ${bs.map((a) => a.worst.toFixed(2)).join(' | ')} | ${bs.map((a) => `${(100 * a.over_share).toFixed(3)} %`).join(' / ')} |`);
    }
  }
  L.push('', 'plain-linear forgets nothing: its state is a plain sum of n outer products, whose float32 rounding grows with n while an output that cancels to near 0 does not, so past n ≈ 1,024 some of its outputs leave the bar; the gated and delta rules forget, and stay inside it.', '');
  L.push('## Why the delta rules take longer', '',
    'In the scan, a token of plain-linear or gla is one sweep over the rows of S: decay the row, add k_i·u, add q_i times the row to y. The delta rule needs u = β(v − S̃ᵀk) before it can write, and S̃ᵀk reads every row of the decayed state, so a token is two sweeps (the first decays and reads, the second writes and reads out): about twice the loads and stores of S, which is what bounds the scan (S, 16 KiB at d = dv = 64, stays in the L1 cache). gated-deltanet adds the d exponentials of its decay to that. At d = dv = 64 plain-linear and the delta rules run their chunked forms (src/c/recurrent_chunked.c): there a delta rule\'s chunk adds a third product with the state (K·S, for u) and the forward substitution of its corrections to plain-linear\'s two products (gated-deltanet: and its decays\' factors).', '');
  const md = L.join('\n');
  const results = { meta: { ...machine, loadavg_end: os.loadavg()[0], quick, sizes, d: D, dv: DV }, rows, goals, byWidth, accuracy };
  writeRecorded(dir, 'recurrent', quick, md, results);
  return results;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain) {
  // the main benchmark's allocator settings (cli.mjs ALLOCATOR_ENV): a child process with them
  const status = respawnWithFlags(fileURLToPath(import.meta.url), () => true);
  if (status != null) process.exit(status);
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } } });
  recurrentPhase({ quick: values.quick, dir: values.out ? path.resolve(values.out) : HERE })
    .catch((e) => { console.error(e?.stack ?? e); process.exit(1); });
}
