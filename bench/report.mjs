// Turns the rows bench/run.mjs measured into results.json, results.md (tables and the targets,
// each computed from the same run) and scaling.svg (log-log time against n, hand-written SVG).
import fs from 'node:fs';
import path from 'node:path';

export const CONTENDERS = ['attnlab-simd', 'attnlab-relaxed', 'attnlab-scalar', 'plain-js', 'native', 'onnxruntime-web', 'tfjs-wasm'];
const CONTENDED = 0.9;
const PEAK = 'peak-simd128'; // the peak kernel's key in results.paired // cpu time / wall time below this: the measurement shared the CPU
const SYNTH = ['dense', 'dense1', 'random', 'factorized-dense', 'factorized-random', 'mixture'];
const LINEAR = ['linear', 'efficient', 'taylor'];

const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms >= 0.1 ? ms.toFixed(3) : ms.toFixed(4));
const fmtG = (g) => (g == null ? '' : g >= 10 ? g.toFixed(1) : g >= 1 ? g.toFixed(2) : g.toPrecision(2));
const fmtMiB = (b) => (b == null ? '–' : (b / 2 ** 20).toFixed(b >= 100 * 2 ** 20 ? 0 : 1));
const x2 = (r) => `${r.toFixed(2)}×`;
const pct = (f) => `${(100 * f).toFixed(0)} %`;

function rowOf(results, contender, variant, n) {
  return results.rows.find((r) => r.contender === contender && r.variant === variant && r.n === n);
}
const okRow = (results, c, v, n) => {
  const r = rowOf(results, c, v, n);
  return r && r.status === 'ok' ? r : null;
};
const whyMissing = (results, c, v, n) => {
  const r = rowOf(results, c, v, n);
  if (!r) return 'not run';
  return r.reason ?? r.status;
};

/** Every target of the issue, computed from this run's rows. met: true / false / null (not measured). */
export function computeTargets(results) {
  const peak = results.peak?.simd128?.gflops ?? null;
  const T = [];
  const add = (t) => T.push(t);
  const pairedSoftmax = (n) => (results.paired ?? []).find((p) => p.variant === 'softmax' && p.n === n);
  const pairedLinear = (v) => (results.paired ?? []).find((p) => p.variant === v && p.entries?.['1024'] && p.entries?.['16384']);
  const timeRatio = (cSlow, cFast, v, n) => {
    const a = okRow(results, cSlow, v, n), b = okRow(results, cFast, v, n);
    if (!a || !b) return { value: null, missing: !a ? `${cSlow}: ${whyMissing(results, cSlow, v, n)}` : `${cFast}: ${whyMissing(results, cFast, v, n)}` };
    return { value: a.median_ms / b.median_ms, detail: `${fmtMs(a.median_ms)} ms / ${fmtMs(b.median_ms)} ms` };
  };
  /** Time of a contender for softmax at n: the interleaved measurement when there is one, else the table's. */
  const softmaxTime = (c, n) => {
    const p = pairedSoftmax(n)?.entries?.[c];
    if (p) return { ms: p.median_ms, gflops: p.gflops, src: 'interleaved' };
    const r = okRow(results, c, 'softmax', n);
    return r ? { ms: r.median_ms, gflops: r.gflops, src: 'table' } : null;
  };
  const ratio = (slow, fast, n) => {
    const a = softmaxTime(slow, n), b = softmaxTime(fast, n);
    if (!a || !b) return { value: null, detail: !a ? `${slow}: ${whyMissing(results, slow, 'softmax', n)}` : `${fast}: ${whyMissing(results, fast, 'softmax', n)}` };
    return { value: a.ms / b.ms, detail: `${fmtMs(a.ms)} ms / ${fmtMs(b.ms)} ms${a.src === 'interleaved' && b.src === 'interleaved' ? ' (interleaved)' : ''}` };
  };
  for (const n of [1024, 4096]) {
    for (const [other, need] of [['onnxruntime-web', 1.5], ['tfjs-wasm', 1.35]]) {
      const r = ratio(other, 'attnlab-simd', n);
      add({ group: 'softmax', target: `softmax, SIMD build vs ${other}: speed-up`, n, value: r.value, shown: r.value == null ? null : x2(r.value), required: `≥ ${need}×`, met: r.value == null ? null : r.value >= need, detail: r.detail });
    }
    const s = softmaxTime('attnlab-simd', n);
    const pk = s?.src === 'interleaved' ? pairedSoftmax(n).entries[PEAK]?.gflops ?? peak : peak;
    const f = s && pk ? s.gflops / pk : null;
    add({ group: 'softmax', target: 'softmax, SIMD build: fraction of the SIMD128 peak', n, value: f, shown: f == null ? null : pct(f), required: '≥ 75 %', met: f == null ? null : f >= 0.75, detail: s && pk ? `${fmtG(s.gflops)} / ${fmtG(pk)} GFLOP/s${s.src === 'interleaved' ? ' (interleaved, the peak kernel in the same rounds)' : ''}` : (s ? 'peak not measured' : whyMissing(results, 'attnlab-simd', 'softmax', n)) });
    const r = ratio('attnlab-simd', 'attnlab-relaxed', n);
    add({ group: 'softmax', target: 'softmax, relaxed build vs SIMD build: speed-up', n, value: r.value, shown: r.value == null ? null : x2(r.value), required: '≥ 1.2×', met: r.value == null ? null : r.value >= 1.2, detail: r.detail });
  }
  for (const v of LINEAR) {
    if (!results.rows.some((r) => r.variant === v)) continue;
    const p = pairedLinear(v);
    const a = p ? p.entries['1024'] : okRow(results, 'attnlab-simd', v, 1024);
    const b = p ? p.entries['16384'] : okRow(results, 'attnlab-simd', v, 16384);
    const tag = p ? ' (interleaved)' : '';
    const ratio = a && b ? b.median_ms / a.median_ms : null;
    add({ group: 'linear', target: `${v}: time(16384) / time(1024), SIMD build`, n: 16384, value: ratio, shown: ratio == null ? null : ratio.toFixed(1), required: '≤ 17', met: ratio == null ? null : ratio <= 17, detail: a && b ? `${fmtMs(b.median_ms)} ms / ${fmtMs(a.median_ms)} ms${tag}` : `not measured at ${!a ? 1024 : 16384}` });
    const pk = p?.entries?.[PEAK]?.gflops ?? peak;
    const f = b && pk ? b.gflops / pk : null;
    add({ group: 'linear', target: `${v}: fraction of the SIMD128 peak, SIMD build`, n: 16384, value: f, shown: f == null ? null : pct(f), required: '≥ 60 %', met: f == null ? null : f >= 0.6, detail: b && pk ? `${fmtG(b.gflops)} / ${fmtG(pk)} GFLOP/s${p?.entries?.[PEAK] ? ' (interleaved, the peak kernel in the same rounds)' : tag}` : 'not measured at 16384' });
  }
  const sizes = results.meta.sizes;
  for (const v of SYNTH) {
    if (!results.rows.some((r) => r.variant === v)) continue; // not in this run (--only)
    for (const n of sizes) {
      const a = okRow(results, 'attnlab-simd', v, n), s = okRow(results, 'attnlab-simd', 'softmax', n);
      if (!a && !s) continue;
      const ratio = a && s ? a.median_ms / s.median_ms : null;
      add({ group: 'synthesizer', target: `${v} / softmax time, SIMD build`, n, value: ratio, shown: ratio == null ? null : x2(ratio), required: '≤ 1.3×', met: ratio == null ? null : ratio <= 1.3, detail: a && s ? `${fmtMs(a.median_ms)} ms / ${fmtMs(s.median_ms)} ms` : (a ? 'softmax not measured' : whyMissing(results, 'attnlab-simd', v, n)) });
    }
  }
  for (const v of ['softmax', 'linear']) {
    if (!results.rows.some((r) => r.variant === v)) continue;
    for (const n of sizes) {
      const r = timeRatio('plain-js', 'attnlab-scalar', v, n);
      if (r.value == null && !okRow(results, 'plain-js', v, n) && !okRow(results, 'attnlab-scalar', v, n)) continue;
      add({ group: 'scalar', target: `${v}, scalar build vs plain JS: speed-up`, n, value: r.value, shown: r.value == null ? null : x2(r.value), required: '≥ 3×', met: r.value == null ? null : r.value >= 3, detail: r.detail ?? r.missing });
    }
  }
  return T;
}

const mark = (met) => (met === true ? '✅ met' : met === false ? '❌ not met' : '– not measured');

function contendersOf(results, variant) {
  return CONTENDERS.filter((c) => results.rows.some((r) => r.contender === c && r.variant === variant));
}

export function markdown(results, targets, flops) {
  const m = results.meta;
  const L = [];
  L.push(`# attnlab benchmark${m.quick ? ' (quick run)' : ''}`);
  L.push('');
  L.push(`${m.cpu} (${m.cores} cores${m.cpu_mhz ? `, ${Math.round(m.cpu_mhz)} MHz` : ''}), Node ${m.node} (V8 ${m.v8}), ${m.platform}; ${m.date.slice(0, 10)}. `
    + `One thread; d = dv = ${m.d}, dense h = ${m.h}, factorized-random rank = ${m.rank}, L = n, factorized-dense a·b = n with a, b near √n, `
    + `mixture = ${m.mixture.components.join(' + ')} with α = [${m.mixture.alpha.join(', ')}]; inputs uniform in [−1, 1). `
    + `Each time is the median over repeats after a warm-up (≥ ${m.policy.minReps} repeats and ≥ ${m.policy.minTimeMs / 1000} s; 2–3 repeats when one call takes over 0.5 s); `
    + `± is half the interquartile range; min/max are in \`results${m.quick ? '-quick' : ''}.json\`. The run took ${Math.round(m.elapsed_s)} s.`);
  L.push('');
  const p = results.peak;
  if (m.loadavg_start != null) {
    const busy = Math.max(m.loadavg_start, m.loadavg_end ?? 0) > 0.5;
    L.push(`Load average (1 min) at the start / end of the run: ${m.loadavg_start.toFixed(2)} / ${m.loadavg_end?.toFixed(2)}${busy ? ' — **other processes were running: absolute times are noisy; the ratios are less affected**' : ''}.`);
    L.push('');
  }
  L.push(`**Measured peaks** (micro-kernel, \`bench/peak.mjs\`): WebAssembly SIMD128 **${p.simd128?.gflops?.toFixed(1) ?? 'n/a'} GFLOP/s** (independent f32x4.mul + f32x4.add chains; before/after the run: ${p.simd128?.before?.toFixed(1)} / ${p.simd128?.after?.toFixed(1)}), `
    + `relaxed-SIMD FMA **${p.relaxed?.gflops ? p.relaxed.gflops.toFixed(1) + ' GFLOP/s' : 'n/a: ' + (p.relaxed?.error ?? '')}**.`);
  L.push('');

  // ---- targets
  L.push('## Targets');
  L.push('');
  L.push('Computed from this run (ratios and fractions, so they do not depend on how fast the machine was today).');
  L.push('');
  L.push('| target | n | measured | required | status | detail |');
  L.push('|---|---:|---:|---:|---|---|');
  const shownTargets = targets.filter((t) => m.sizes.includes(t.n) && (t.group !== 'linear' || m.sizes.includes(1024)));
  for (const t of shownTargets) L.push(`| ${t.target} | ${t.n} | ${t.shown ?? '–'} | ${t.required} | ${mark(t.met)} | ${t.detail ?? ''} |`);
  const met = shownTargets.filter((t) => t.met === true).length, notMet = shownTargets.filter((t) => t.met === false).length, nm = shownTargets.filter((t) => t.met == null).length;
  const missingSizes = [...new Set(targets.filter((t) => !shownTargets.includes(t)).map((t) => t.n))];
  L.push('');
  L.push(`${met} met, ${notMet} not met, ${nm} not measured.${missingSizes.length ? ` The targets at n = ${missingSizes.join(', ')} need sizes this run did not measure (the full run).` : ''}`);
  L.push('');

  if (results.paired?.length) {
    L.push('The softmax targets and the linear-family targets use **interleaved** timings: each round calls every contender (or both sizes) once, and the SIMD128 peak kernel (about 20 ms), starting from a different one each round, so load from other processes hits them alike; the fractions of peak divide by the peak measured in those same rounds. Medians over the rounds:');
    L.push('');
    L.push('| measurement | rounds | median ms (± half IQR) · GFLOP/s |');
    L.push('|---|---:|---|');
    for (const p of results.paired) {
      const label = p.variant === 'softmax' ? `softmax n = ${p.n}` : `${p.variant}, SIMD build, n = 1024 / 16384`;
      const cells = Object.entries(p.entries).map(([k, v]) => `${p.variant === 'softmax' || k === PEAK ? k : 'n = ' + k}: ${fmtMs(v.median_ms)} ±${(50 * (v.q3_ms - v.q1_ms) / v.median_ms).toFixed(0)}% · ${fmtG(v.gflops)}${v.cpu_wall_ratio < CONTENDED ? ' †' : ''}`);
      L.push(`| ${label} | ${p.rounds} | ${cells.join('; ')} |`);
    }
    L.push('');
  }

  // ---- time tables
  L.push('## Time by variant');
  L.push('');
  L.push('Median time per call (ms) ± half the IQR, and GFLOP/s with the flop count given for each variant (a multiply-add is 2 flops; exp, max and divisions are not counted). '
    + '`native` is the same C compiled with gcc -O3 -march=native: a reference, not a competitor.');
  L.push('');
  const variants = [...new Set(results.rows.map((r) => r.variant))];
  let contended = 0;
  for (const v of variants) {
    const cs = contendersOf(results, v);
    L.push(`### ${v}`);
    L.push('');
    L.push(`flops = ${flops[v]?.text ?? '?'}`);
    L.push('');
    L.push(`| n | ${cs.join(' | ')} |`);
    L.push(`|---:|${cs.map(() => '---:').join('|')}|`);
    const reasons = new Map();
    for (const n of m.sizes) {
      const cells = cs.map((c) => {
        const r = rowOf(results, c, v, n);
        if (!r) return '';
        if (r.status !== 'ok') {
          const key = `${c}: ${r.reason}`;
          if (!reasons.has(key)) reasons.set(key, []);
          reasons.get(key).push(n);
          return 'n/a';
        }
        const half = r.q3_ms != null ? (r.q3_ms - r.q1_ms) / 2 / r.median_ms : null;
        const busy = r.cpu_wall_ratio != null && r.cpu_wall_ratio < CONTENDED;
        if (busy) contended++;
        return `${fmtMs(r.median_ms)} ms${half != null ? ` ±${(100 * half).toFixed(half < 0.01 ? 1 : 0)}%` : ''} · ${fmtG(r.gflops)} GF/s${busy ? ' †' : ''}`;
      });
      L.push(`| ${n} | ${cells.join(' | ')} |`);
    }
    if (reasons.size) {
      L.push('');
      for (const [k, ns] of reasons) L.push(`- n/a at n = ${ns.join(', ')}: ${k}`);
    }
    L.push('');
  }

  if (contended) {
    L.push(`† ${contended} measurement(s) where the process got less than ${CONTENDED * 100} % of the wall time as CPU time: other processes competed for the CPU and the time is inflated (\`cpu_median_ms\` and \`cpu_wall_ratio\` in the JSON).`);
    L.push('');
  }

  // ---- memory
  L.push('## Peak memory (MiB)');
  L.push('');
  L.push('attnlab: WebAssembly memory of a fresh instance after the measurement (`lab.memoryBytes()`: the module\'s initial memory, which is the floor at small n, and the inputs, output and workspace the binding lays out in it; the three builds match, so only the SIMD build is listed). '
    + 'native: bytes allocated (inputs + output + workspace). plain-js: bytes allocated per call. tfjs-wasm: its wasm heap, a high-water mark over the sizes so far. onnxruntime-web does not expose its heap.');
  L.push('');
  const memC = ['attnlab-simd', 'attnlab-relaxed', 'attnlab-scalar', 'native'];
  L.push(`| variant | contender | ${m.sizes.map((n) => `n = ${n}`).join(' | ')} |`);
  L.push(`|---|---|${m.sizes.map(() => '---:').join('|')}|`);
  for (const v of variants) {
    for (const c of [...memC, ...(v === 'softmax' || v === 'linear' ? ['plain-js'] : []), ...(v === 'softmax' ? ['tfjs-wasm'] : [])]) {
      if (!results.rows.some((r) => r.contender === c && r.variant === v && r.status === 'ok')) continue;
      if (c !== 'attnlab-simd' && c !== 'native' && c !== 'plain-js' && c !== 'tfjs-wasm') continue; // the builds use the same memory
      L.push(`| ${v} | ${c} | ${m.sizes.map((n) => { const r = okRow(results, c, v, n); return r ? fmtMiB(r.peak_memory_bytes) : '–'; }).join(' | ')} |`);
    }
  }
  L.push('');

  // ---- checks
  L.push('## Correctness checks');
  L.push('');
  const checks = results.checks;
  const failed = checks.filter((c) => !c.ok);
  L.push(`Every output is compared once per size with attnlab's SIMD build: max |difference| ≤ ${checks[0]?.tol ?? 1e-4} (native: relative difference of the output sums, since it runs in another process on the same generated inputs). `
    + `${checks.length} checks, ${failed.length ? `**${failed.length} failed**` : 'all passed'}.`);
  L.push('');
  const byC = new Map();
  for (const c of checks) {
    const k = c.contender;
    const cur = byC.get(k) ?? { max: 0, count: 0, failed: 0 };
    cur.max = Math.max(cur.max, c.diff); cur.count++; if (!c.ok) cur.failed++;
    byC.set(k, cur);
  }
  if (byC.size) {
    L.push('| contender | checks | largest difference | failed |');
    L.push('|---|---:|---:|---:|');
    for (const [k, c] of byC) L.push(`| ${k} | ${c.count} | ${c.max.toExponential(1)} | ${c.failed} |`);
    L.push('');
  }
  for (const c of failed) L.push(`- FAILED: ${c.variant} n = ${c.n} ${c.contender} vs ${c.against}: ${c.diff.toExponential(2)} (${c.kind})`);
  if (failed.length) L.push('');

  // ---- notes
  L.push('## Contenders and notes');
  L.push('');
  for (const [k, c] of Object.entries(m.contenders)) L.push(`- **${k}**: ${Object.entries(c).map(([a, b]) => `${a} ${typeof b === 'string' ? b : JSON.stringify(b)}`).join('; ')}`);
  L.push('- **plain-js**: `bench/plain-js.mjs`, straightforward loops over Float32Arrays (softmax and linear only).');
  for (const n of m.notes) L.push(`- ${n}`);
  L.push('');
  L.push('Flop counts:');
  L.push('');
  L.push('| variant | flops |');
  L.push('|---|---|');
  for (const [k, f] of Object.entries(flops)) L.push(`| ${k} | ${f.text} |`);
  L.push('');
  L.push(`![time against n](scaling${m.quick ? '-quick' : ''}.svg)`);
  L.push('');
  return L.join('\n');
}

// ---- SVG ----------------------------------------------------------------------------------------
const VARIANT_COLORS = {
  softmax: '#1f77b4', dense: '#ff7f0e', dense1: '#2ca02c', random: '#d62728', 'factorized-dense': '#9467bd',
  'factorized-random': '#8c564b', mixture: '#e377c2', linear: '#17becf', efficient: '#bcbd22', taylor: '#7f7f7f', fixed: '#111111',
};
const CONTENDER_STYLE = {
  'attnlab-relaxed': { color: '#08306b', dash: '8 3' },
  'attnlab-scalar': { color: '#6baed6', dash: '8 3' },
  'plain-js': { color: '#a50f15', dash: '2 3' },
  native: { color: '#555555', dash: '1 2' },
  'onnxruntime-web': { color: '#00a651', dash: '6 2 2 2' },
  'tfjs-wasm': { color: '#f28e00', dash: '6 2 2 2' },
};
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function svg(results) {
  const series = [];
  const variants = [...new Set(results.rows.map((r) => r.variant))];
  for (const v of variants) {
    const pts = results.rows.filter((r) => r.contender === 'attnlab-simd' && r.variant === v && r.status === 'ok').map((r) => [r.n, r.median_ms]);
    if (pts.length) series.push({ group: 'every variant, attnlab SIMD build', label: v, color: VARIANT_COLORS[v] ?? '#000', dash: null, marker: 'circle', pts });
  }
  for (const c of Object.keys(CONTENDER_STYLE)) {
    const pts = results.rows.filter((r) => r.contender === c && r.variant === 'softmax' && r.status === 'ok').map((r) => [r.n, r.median_ms]);
    if (pts.length) series.push({ group: 'softmax, other contenders', label: c, ...CONTENDER_STYLE[c], marker: 'square', pts });
  }
  const W = 960, Hh = 600, ml = 72, mr = 260, mt = 48, mb = 56;
  const pw = W - ml - mr, ph = Hh - mt - mb;
  const allN = results.meta.sizes;
  const ts = series.flatMap((s) => s.pts.map((p) => p[1])).filter((t) => t > 0);
  const nMin = Math.min(...allN), nMax = Math.max(...allN);
  const tMin = ts.length ? 10 ** Math.floor(Math.log10(Math.min(...ts))) : 1e-3;
  const tMax = ts.length ? 10 ** Math.ceil(Math.log10(Math.max(...ts))) : 1e3;
  const lx0 = Math.log2(nMin) - 0.3, lx1 = Math.log2(nMax) + 0.3;
  const ly0 = Math.log10(tMin), ly1 = Math.log10(tMax) === ly0 ? ly0 + 1 : Math.log10(tMax);
  const X = (n) => ml + ((Math.log2(n) - lx0) / (lx1 - lx0)) * pw;
  const Y = (t) => mt + ph - ((Math.log10(t) - ly0) / (ly1 - ly0)) * ph;
  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Hh}" viewBox="0 0 ${W} ${Hh}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`);
  o.push(`<rect width="${W}" height="${Hh}" fill="#fff"/>`);
  const m = results.meta;
  o.push(`<text x="${ml}" y="22" font-size="15" font-weight="600">attnlab: time per call against sequence length n (log-log)</text>`);
  o.push(`<text x="${ml}" y="38" fill="#555">${esc(`${m.cpu}, Node ${m.node}, one thread, d = dv = ${m.d}; ${m.date.slice(0, 10)}${m.quick ? ' (quick run)' : ''}`)}</text>`);
  // grid and ticks
  for (let e = Math.round(ly0); e <= Math.round(ly1); e++) {
    const t = 10 ** e, y = Y(t);
    o.push(`<line x1="${ml}" x2="${ml + pw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#e3e3e3"/>`);
    const label = t >= 1000 ? `${t / 1000} s` : t >= 1 ? `${t} ms` : `${+(t * 1000).toPrecision(3)} µs`;
    o.push(`<text x="${ml - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end">${label}</text>`);
    if (e < Math.round(ly1)) for (let k = 2; k <= 9; k++) {
      const yy = Y(t * k);
      o.push(`<line x1="${ml}" x2="${ml + 4}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}" stroke="#999"/>`);
    }
  }
  for (const n of allN) {
    const x = X(n);
    o.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${mt}" y2="${mt + ph}" stroke="#e3e3e3"/>`);
    o.push(`<text x="${x.toFixed(1)}" y="${mt + ph + 18}" text-anchor="middle">${n}</text>`);
  }
  o.push(`<rect x="${ml}" y="${mt}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  o.push(`<text x="${ml + pw / 2}" y="${Hh - 14}" text-anchor="middle">sequence length n</text>`);
  o.push(`<text transform="translate(18 ${mt + ph / 2}) rotate(-90)" text-anchor="middle">median time per call</text>`);
  // slope guides through the bottom-left corner region: ∝ n and ∝ n²
  const guide = (pow, label) => {
    const n0 = nMin, t0 = tMin * 1.5;
    const n1 = nMax, t1 = t0 * (n1 / n0) ** pow;
    const clipT = Math.min(t1, tMax), clipN = n0 * (clipT / t0) ** (1 / pow);
    o.push(`<line x1="${X(n0).toFixed(1)}" y1="${Y(t0).toFixed(1)}" x2="${X(clipN).toFixed(1)}" y2="${Y(clipT).toFixed(1)}" stroke="#bbb" stroke-dasharray="3 4"/>`);
    o.push(`<text x="${(X(clipN) - 4).toFixed(1)}" y="${(Y(clipT) + 14).toFixed(1)}" text-anchor="end" fill="#999">${label}</text>`);
  };
  if (nMax > nMin) { guide(1, '∝ n'); guide(2, '∝ n²'); }
  o.push(`<clipPath id="plot"><rect x="${ml}" y="${mt}" width="${pw}" height="${ph}"/></clipPath>`);
  for (const s of series) {
    const d = s.pts.map((p, i) => `${i ? 'L' : 'M'}${X(p[0]).toFixed(1)} ${Y(p[1]).toFixed(1)}`).join(' ');
    o.push(`<g clip-path="url(#plot)"><path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.label === "softmax" ? 3 : 2}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    for (const p of s.pts) {
      const x = X(p[0]).toFixed(1), y = Y(p[1]).toFixed(1);
      o.push(s.marker === 'circle' ? `<circle cx="${x}" cy="${y}" r="3.2" fill="${s.color}"/>` : `<rect x="${(+x - 3).toFixed(1)}" y="${(+y - 3).toFixed(1)}" width="6" height="6" fill="#fff" stroke="${s.color}" stroke-width="1.5"/>`);
    }
    o.push('</g>');
  }
  // legend, in groups
  const lx = ml + pw + 18;
  let y = mt + 6;
  let group = null;
  for (const s of series) {
    if (s.group !== group) {
      group = s.group;
      if (y > mt + 6) y += 8;
      o.push(`<text x="${lx}" y="${y}" font-weight="600">${esc(group)}</text>`);
      y += 18;
    }
    o.push(`<line x1="${lx}" x2="${lx + 28}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    o.push(s.marker === 'circle' ? `<circle cx="${lx + 14}" cy="${y}" r="3.2" fill="${s.color}"/>` : `<rect x="${lx + 11}" y="${y - 3}" width="6" height="6" fill="#fff" stroke="${s.color}" stroke-width="1.5"/>`);
    o.push(`<text x="${lx + 36}" y="${y + 4}">${esc(s.label)}</text>`);
    y += 18;
  }
  o.push('</svg>');
  return o.join('\n') + '\n';
}

export function writeReports(results, { dir, suffix = '', flops }) {
  const files = [path.join(dir, `results${suffix}.json`), path.join(dir, `results${suffix}.md`), path.join(dir, `scaling${suffix}.svg`)];
  const writeJson = () => fs.writeFileSync(files[0], JSON.stringify(results, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? +v.toPrecision(6) : v), 2) + '\n');
  try {
    results.targets = computeTargets(results);
  } catch (e) {
    writeJson(); // keep the measurements even if the report code fails
    throw e;
  }
  writeJson();
  fs.writeFileSync(files[1], markdown(results, results.targets, flops));
  fs.writeFileSync(files[2], svg(results));
  return files;
}
