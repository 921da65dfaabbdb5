// Turns the rows a run measured into results.json, results.md (the targets, targets.mjs, then a
// table per variant, peak memory, the backward pass (backward-report.mjs), training
// (training-report.mjs), the checks and the notes) and scaling.svg (svg.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { backwardSection, backwardTargets } from './backward-report.mjs';
import { threadGoals } from './threads.mjs';
import { trainingSection, trainingTargets } from './training-report.mjs';
import { svg } from './svg.mjs';
import { computeTargets, CONTENDED, CONTENDERS, fmtG, fmtMiB, fmtMs, okRow, PEAK, rowOf } from './targets.mjs';

const mark = (met) => (met === true ? '✅ met' : met === false ? '❌ not met' : '– not measured');
const contendersOf = (results, variant) => CONTENDERS.filter((c) => results.rows.some((r) => r.contender === c && r.variant === variant));
const variantsOf = (results) => [...new Set(results.rows.map((r) => r.variant))];

function header(results, L) {
  const m = results.meta, p = results.peak;
  L.push(`# attnlab benchmark${m.quick ? ' (quick run)' : ''}`, '');
  L.push(`${m.cpu} (${m.cores} cores${m.cpu_mhz ? `, ${Math.round(m.cpu_mhz)} MHz` : ''}), Node ${m.node} (V8 ${m.v8}), ${m.platform}; ${m.date.slice(0, 10)}. `
    + `One thread; d = dv = ${m.d}, dense h = ${m.h}, factorized-random rank = ${m.rank}, L = n, factorized-dense a·b = n with a, b near √n, `
    + `mixture = ${m.mixture.components.join(' + ')} with α = [${m.mixture.alpha.join(', ')}]; inputs uniform in [−1, 1). `
    + `Each time is the median over repeats after a warm-up (≥ ${m.policy.minReps} repeats and ≥ ${m.policy.minTimeMs / 1000} s; 2–3 repeats when one call takes over 0.5 s); `
    + `± is half the interquartile range; min/max are in \`results${m.quick ? '-quick' : ''}.json\`. The run took ${Math.round(m.elapsed_s)} s.`, '');
  if (m.commit) L.push(`Commit ${m.commit}${m.uncommitted?.length ? ` with uncommitted changes to ${m.uncommitted.join(', ')}` : ''}; the WebAssembly builds' sha256 and build time are under Contenders and notes.`, '');
  if (m.allocator_env) {
    const set = Object.entries(m.allocator_env).filter(([, v]) => v != null);
    L.push(set.length ? `glibc allocator: ${set.map(([k, v]) => `${k}=${v}`).join(', ')} (bench/cli.mjs ALLOCATOR_ENV: freed result arrays stay in the process instead of coming back as new pages, a page fault each, on every call).`
      : 'glibc allocator: its defaults (freed result arrays go back to the kernel; each call\'s new arrays then fault their pages in).', '');
  }
  if (m.loadavg_start != null) {
    const busy = Math.max(m.loadavg_start, m.loadavg_end ?? 0) > 0.5;
    L.push(`Load average (1 min) at the start / end of the run: ${m.loadavg_start.toFixed(2)} / ${m.loadavg_end?.toFixed(2)}${busy ? ' — **other processes were running: absolute times are noisy; the ratios are less affected**' : ''}.`, '');
  }
  L.push(`**Measured peaks** (micro-kernel, \`bench/peak.mjs\`): WebAssembly SIMD128 **${p.simd128?.gflops?.toFixed(1) ?? 'n/a'} GFLOP/s** (independent f32x4.mul + f32x4.add chains; before/after the run: ${p.simd128?.before?.toFixed(1)} / ${p.simd128?.after?.toFixed(1)}), `
    + `relaxed-SIMD FMA **${p.relaxed?.gflops ? p.relaxed.gflops.toFixed(1) + ' GFLOP/s' : 'n/a: ' + (p.relaxed?.error ?? '')}**.`, '');
}

function targetsSection(results, targets, L) {
  const m = results.meta;
  L.push('## Targets', '', 'Computed from this run (ratios and fractions, so they do not depend on how fast the machine was today).', '');
  L.push('| target | n | measured | required | status | detail |', '|---|---:|---:|---:|---|---|');
  const shown = targets.filter((t) => t.group !== 'backward' && t.group !== 'training' && m.sizes.includes(t.n) && (t.group !== 'linear' || m.sizes.includes(1024)));
  // 'recorded': a ratio the report keeps without a bound (the delta rules' against linear)
  const recorded = (t) => t.required === 'recorded' && t.value != null;
  for (const t of shown) L.push(`| ${t.target} | ${t.n} | ${t.shown ?? '–'} | ${t.required} | ${recorded(t) ? 'recorded' : mark(t.met)} | ${t.detail ?? ''} |`);
  const count = (f) => shown.filter(f).length;
  const missingSizes = [...new Set(targets.filter((t) => t.group !== 'backward' && t.group !== 'training' && !shown.includes(t)).map((t) => t.n))];
  L.push('', `${count((t) => t.met === true)} met, ${count((t) => t.met === false)} not met, ${count(recorded)} recorded, ${count((t) => t.met == null && !recorded(t))} not measured.${missingSizes.length ? ` The targets at n = ${missingSizes.join(', ')} need sizes this run did not measure (the full run).` : ''}`, '');
  const bw = targets.filter((t) => t.group === 'backward');
  if (bw.length) L.push(`The backward-pass goals (${bw.filter((t) => t.met === true).length} met, ${bw.filter((t) => t.met === false).length} not met) are in [Backward pass](#backward-pass).`, '');
  const tr = targets.filter((t) => t.group === 'training');
  if (tr.length) L.push(`The training goals (${tr.filter((t) => t.met === true).length} met, ${tr.filter((t) => t.met === false).length} not met) are in [Training](#training).`, '');
  if (!results.paired?.length) return;
  L.push('The softmax targets and the linear-family targets use **interleaved** timings: each round calls every contender (or both sizes) once, and the SIMD128 peak kernel (about 20 ms), starting from a different one each round, so load from other processes hits them alike; the fractions of peak divide by the peak measured in those same rounds. Medians over the rounds:', '');
  L.push('| measurement | rounds | median ms (± half IQR) · GFLOP/s |', '|---|---:|---|');
  for (const p of results.paired) {
    const label = p.variant === 'softmax' ? `softmax n = ${p.n}` : `${p.variant}, SIMD build, n = 1024 / 16384`;
    const cells = Object.entries(p.entries).map(([k, v]) => `${p.variant === 'softmax' || k === PEAK ? k : 'n = ' + k}: ${fmtMs(v.median_ms)} ±${(50 * (v.q3_ms - v.q1_ms) / v.median_ms).toFixed(0)}% · ${fmtG(v.gflops)}${v.cpu_wall_ratio < CONTENDED ? ' †' : ''}`);
    L.push(`| ${label} | ${p.rounds} | ${cells.join('; ')} |`);
  }
  L.push('');
}

/** One variant's table; returns how many cells were contended. */
function variantTable(results, v, L) {
  const cs = contendersOf(results, v);
  L.push(`### ${v}`, '', `flops = ${results.meta.flops?.[v] ?? '?'}`, '');
  L.push(`| n | ${cs.join(' | ')} |`, `|---:|${cs.map(() => '---:').join('|')}|`);
  const reasons = new Map();
  let contended = 0;
  for (const n of results.meta.sizes) {
    const cells = cs.map((c) => {
      const r = rowOf(results, c, v, n);
      if (!r) return '';
      if (r.status !== 'ok') {
        const key = `${c}: ${r.reason}`;
        reasons.set(key, [...(reasons.get(key) ?? []), n]);
        return 'n/a';
      }
      const half = r.q3_ms != null ? (r.q3_ms - r.q1_ms) / 2 / r.median_ms : null;
      const busy = r.cpu_wall_ratio != null && r.cpu_wall_ratio < CONTENDED;
      if (busy) contended++;
      return `${fmtMs(r.median_ms)} ms${half != null ? ` ±${(100 * half).toFixed(half < 0.01 ? 1 : 0)}%` : ''} · ${fmtG(r.gflops)} GF/s${busy ? ' †' : ''}`;
    });
    L.push(`| ${n} | ${cells.join(' | ')} |`);
  }
  if (reasons.size) L.push('', ...[...reasons].map(([k, ns]) => `- n/a at n = ${ns.join(', ')}: ${k}`));
  L.push('');
  return contended;
}

function timeSection(results, L) {
  L.push('## Time by variant', '');
  L.push('Median time per call (ms) ± half the IQR, and GFLOP/s with the flop count given for each variant (a multiply-add is 2 flops; exp, max and divisions are not counted). '
    + '`native` is the same C compiled with gcc -O3 -march=native: a reference, not a competitor.', '');
  let contended = 0;
  for (const v of variantsOf(results)) contended += variantTable(results, v, L);
  if (contended) L.push(`† ${contended} measurement(s) where the process got less than ${CONTENDED * 100} % of the wall time as CPU time: other processes competed for the CPU and the time is inflated (\`cpu_median_ms\` and \`cpu_wall_ratio\` in the JSON).`, '');
}

function memorySection(results, L) {
  const m = results.meta;
  L.push('## Peak memory (MiB)', '');
  L.push('attnlab: WebAssembly memory of a fresh instance after the measurement (`lab.memoryBytes()`: the module\'s initial memory, which is the floor at small n, and the inputs, output and workspace the binding lays out in it; the three builds match, so only the SIMD build is listed). '
    + 'native: bytes allocated (inputs + output + workspace). plain-js: bytes allocated per call. tfjs-wasm: its wasm heap, a high-water mark over the sizes so far. onnxruntime-web does not expose its heap.', '');
  L.push(`| variant | contender | ${m.sizes.map((n) => `n = ${n}`).join(' | ')} |`, `|---|---|${m.sizes.map(() => '---:').join('|')}|`);
  const listed = ['attnlab-simd', 'native', 'plain-js', 'tfjs-wasm']; // the builds use the same memory; onnxruntime-web: not exposed
  for (const v of variantsOf(results)) {
    for (const c of listed) {
      if (!results.rows.some((r) => r.contender === c && r.variant === v && r.status === 'ok')) continue;
      L.push(`| ${v} | ${c} | ${m.sizes.map((n) => { const r = okRow(results, c, v, n); return r ? fmtMiB(r.peak_memory_bytes) : '–'; }).join(' | ')} |`);
    }
  }
  L.push('');
}

function checksSection(results, L) {
  const checks = results.checks, failed = checks.filter((c) => !c.ok);
  L.push('## Correctness checks', '');
  L.push(`Every output is compared once per size with attnlab's SIMD build: max |difference| ≤ ${checks[0]?.tol ?? 1e-4} (native: relative difference of the output sums, since it runs in another process on the same generated inputs). `
    + `${checks.length} checks, ${failed.length ? `**${failed.length} failed**` : 'all passed'}.`, '');
  const byC = new Map();
  for (const c of checks) {
    const cur = byC.get(c.contender) ?? { max: 0, count: 0, failed: 0 };
    cur.max = Math.max(cur.max, c.diff); cur.count++; if (!c.ok) cur.failed++;
    byC.set(c.contender, cur);
  }
  if (byC.size) L.push('| contender | checks | largest difference | failed |', '|---|---:|---:|---:|', ...[...byC].map(([k, c]) => `| ${k} | ${c.count} | ${c.max.toExponential(1)} | ${c.failed} |`), '');
  for (const c of failed) L.push(`- FAILED: ${c.variant} n = ${c.n} ${c.contender} vs ${c.against}: ${c.diff.toExponential(2)} (${c.kind})`);
  if (failed.length) L.push('');
}

function notesSection(results, L) {
  const m = results.meta;
  L.push('## Contenders and notes', '');
  for (const [k, c] of Object.entries(m.contenders)) L.push(`- **${k}**: ${Object.entries(c).map(([a, b]) => `${a} ${typeof b === 'string' ? b : JSON.stringify(b)}`).join('; ')}`);
  L.push('- **plain-js**: `bench/plain-js.mjs`, straightforward loops over Float32Arrays (softmax and linear only).');
  for (const n of m.notes) L.push(`- ${n}`);
  L.push('', 'Flop counts (`flopCount` of src/js/reference.js):', '', '| variant | flops |', '|---|---|');
  for (const [k, f] of Object.entries(m.flops ?? {})) L.push(`| ${k} | ${f} |`);
  L.push('', `![time against n](scaling${m.quick ? '-quick' : ''}.svg)`, '');
}

/**
 * The kept forward pass (bench/kept.mjs, run alone: it compares this build's training with an
 * older build's): its goals from kept.json in the output directory, when there is one.
 */
export function keptSection(kept, L) {
  if (!kept?.goals) return;
  const m = kept.meta;
  L.push('## Kept forward pass', '', `attention(id, inputs, { keep: true }) then result.backward(dOutput), against attention() then attentionGrad(), and a softmax ` +
    `training step before and after each head's backward stopped running its forward pass again: [kept.md](kept.md) (\`node --expose-gc bench/kept.mjs --old DIR\`, run alone; ` +
    `${m.date.slice(0, 10)}, commit ${m.commit ?? '?'}, load average ${m.loadavg_start.toFixed(2)} / ${m.loadavg_end.toFixed(2)}). Its goals:`, '');
  L.push('| goal | measured | required | status | by |', '|---|---:|---:|---|---|');
  for (const g of kept.goals) L.push(`| ${g.what} | ${g.measured} | ${g.required} | ${g.met ? '✅ met' : '❌ not met'} | ${g.by} |`);
  L.push('');
}

export function markdown(results, targets, kept = null) {
  const L = [];
  header(results, L);
  targetsSection(results, targets, L);
  timeSection(results, L);
  memorySection(results, L);
  backwardSection(results, targets, L);
  trainingSection(results, targets, L);
  keptSection(kept, L);
  if (results.threads?.rows) {
    L.push('## Threads', '', `Time against thread count and attnlab against onnxruntime-web and tfjs-wasm at equal thread counts: [threads.md](threads${results.meta.quick ? '-quick' : ''}.md) (bench/threads.mjs). Its goals:`, '');
    L.push(...threadGoals(results.threads).slice(2));
  }
  if (results.throughput?.runs?.length) {
    L.push('## Training throughput against sequence length', '', `Tokens per second of every variant's training step at seqLen ${results.throughput.seqLens.join(', ')} (${results.throughput.tokens} tokens a step), one thread and ${results.throughput.runs.at(-1).threads}, with the fraction of the SIMD128 peak: [throughput.md](throughput${results.meta.quick ? '-quick' : ''}.md) (bench/throughput.mjs).`, '');
  }
  checksSection(results, L);
  notesSection(results, L);
  return L.join('\n');
}

export function writeReports(results, { dir, suffix = '' }) {
  fs.mkdirSync(dir, { recursive: true });
  const files = [path.join(dir, `results${suffix}.json`), path.join(dir, `results${suffix}.md`), path.join(dir, `scaling${suffix}.svg`)];
  const writeJson = () => fs.writeFileSync(files[0], JSON.stringify(results, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? +v.toPrecision(6) : v), 2) + '\n');
  try {
    results.targets = [...computeTargets(results), ...backwardTargets(results), ...trainingTargets(results)];
  } catch (e) {
    writeJson(); // keep the measurements even if the report code fails
    throw e;
  }
  writeJson();
  let kept = null;
  try { kept = JSON.parse(fs.readFileSync(path.join(dir, 'kept.json'), 'utf8')); } catch { /* not measured here */ }
  fs.writeFileSync(files[1], markdown(results, results.targets, kept));
  fs.writeFileSync(files[2], svg(results));
  return files;
}
