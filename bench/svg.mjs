// scaling.svg: time per call against n, log-log, hand-written SVG. Every variant on the SIMD build
// (one colour each, in the registry's order) and softmax on the other contenders.

/** Variant colours in registry order (the first eleven keep the colours of the recorded plot). */
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f', '#111111', '#aec7e8', '#ffbb78', '#98df8a'];
const CONTENDER_STYLE = {
  'attnlab-relaxed': { color: '#08306b', dash: '8 3' },
  'attnlab-scalar': { color: '#6baed6', dash: '8 3' },
  'plain-js': { color: '#a50f15', dash: '2 3' },
  native: { color: '#555555', dash: '1 2' },
  'onnxruntime-web': { color: '#00a651', dash: '6 2 2 2' },
  'tfjs-wasm': { color: '#f28e00', dash: '6 2 2 2' },
};
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const W = 960, HH = 600, ML = 72, MR = 260, MT = 48, MB = 56;
const PW = W - ML - MR, PH = HH - MT - MB;

function seriesOf(results) {
  const series = [];
  const order = (results.meta.variants ?? []).map((v) => v.id);
  const variants = [...new Set(results.rows.map((r) => r.variant))];
  const pointsOf = (c, v) => results.rows.filter((r) => r.contender === c && r.variant === v && r.status === 'ok').map((r) => [r.n, r.median_ms]);
  for (const v of variants) {
    const pts = pointsOf('attnlab-simd', v);
    const i = order.includes(v) ? order.indexOf(v) : variants.indexOf(v);
    if (pts.length) series.push({ group: 'every variant, attnlab SIMD build', label: v, color: PALETTE[i % PALETTE.length], dash: null, marker: 'circle', pts });
  }
  for (const c of Object.keys(CONTENDER_STYLE)) {
    const pts = pointsOf(c, 'softmax');
    if (pts.length) series.push({ group: 'softmax, other contenders', label: c, ...CONTENDER_STYLE[c], marker: 'square', pts });
  }
  return series;
}

/** The log-log axes: X(n), Y(t) in pixels and the ranges they cover. */
function scales(results, series) {
  const allN = results.meta.sizes;
  const ts = series.flatMap((s) => s.pts.map((p) => p[1])).filter((t) => t > 0);
  const nMin = Math.min(...allN), nMax = Math.max(...allN);
  const tMin = ts.length ? 10 ** Math.floor(Math.log10(Math.min(...ts))) : 1e-3;
  const tMax = ts.length ? 10 ** Math.ceil(Math.log10(Math.max(...ts))) : 1e3;
  const lx0 = Math.log2(nMin) - 0.3, lx1 = Math.log2(nMax) + 0.3;
  const ly0 = Math.log10(tMin), ly1 = Math.log10(tMax) === ly0 ? ly0 + 1 : Math.log10(tMax);
  return {
    allN, nMin, nMax, tMin, tMax, ly0, ly1,
    X: (n) => ML + ((Math.log2(n) - lx0) / (lx1 - lx0)) * PW,
    Y: (t) => MT + PH - ((Math.log10(t) - ly0) / (ly1 - ly0)) * PH,
  };
}

function axes(o, s) {
  const { X, Y, ly0, ly1 } = s;
  for (let e = Math.round(ly0); e <= Math.round(ly1); e++) {
    const t = 10 ** e, y = Y(t);
    o.push(`<line x1="${ML}" x2="${ML + PW}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#e3e3e3"/>`);
    const label = t >= 1000 ? `${t / 1000} s` : t >= 1 ? `${t} ms` : `${+(t * 1000).toPrecision(3)} µs`;
    o.push(`<text x="${ML - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end">${label}</text>`);
    if (e < Math.round(ly1)) for (let k = 2; k <= 9; k++) {
      const yy = Y(t * k);
      o.push(`<line x1="${ML}" x2="${ML + 4}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}" stroke="#999"/>`);
    }
  }
  for (const n of s.allN) {
    const x = X(n);
    o.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${MT}" y2="${MT + PH}" stroke="#e3e3e3"/>`);
    o.push(`<text x="${x.toFixed(1)}" y="${MT + PH + 18}" text-anchor="middle">${n}</text>`);
  }
  o.push(`<rect x="${ML}" y="${MT}" width="${PW}" height="${PH}" fill="none" stroke="#333"/>`);
  o.push(`<text x="${ML + PW / 2}" y="${HH - 14}" text-anchor="middle">sequence length n</text>`);
  o.push(`<text transform="translate(18 ${MT + PH / 2}) rotate(-90)" text-anchor="middle">median time per call</text>`);
}

/** Slope guides through the bottom-left corner region: ∝ n and ∝ n². */
function guides(o, s) {
  const guide = (pow, label) => {
    const n0 = s.nMin, t0 = s.tMin * 1.5;
    const t1 = t0 * (s.nMax / n0) ** pow;
    const clipT = Math.min(t1, s.tMax), clipN = n0 * (clipT / t0) ** (1 / pow);
    o.push(`<line x1="${s.X(n0).toFixed(1)}" y1="${s.Y(t0).toFixed(1)}" x2="${s.X(clipN).toFixed(1)}" y2="${s.Y(clipT).toFixed(1)}" stroke="#bbb" stroke-dasharray="3 4"/>`);
    o.push(`<text x="${(s.X(clipN) - 4).toFixed(1)}" y="${(s.Y(clipT) + 14).toFixed(1)}" text-anchor="end" fill="#999">${label}</text>`);
  };
  if (s.nMax > s.nMin) { guide(1, '∝ n'); guide(2, '∝ n²'); }
}

const markerAt = (sr, x, y) => (sr.marker === 'circle' ? `<circle cx="${x}" cy="${y}" r="3.2" fill="${sr.color}"/>` : `<rect x="${(+x - 3).toFixed(1)}" y="${(+y - 3).toFixed(1)}" width="6" height="6" fill="#fff" stroke="${sr.color}" stroke-width="1.5"/>`);

function lines(o, series, s) {
  o.push(`<clipPath id="plot"><rect x="${ML}" y="${MT}" width="${PW}" height="${PH}"/></clipPath>`);
  for (const sr of series) {
    const d = sr.pts.map((p, i) => `${i ? 'L' : 'M'}${s.X(p[0]).toFixed(1)} ${s.Y(p[1]).toFixed(1)}`).join(' ');
    o.push(`<g clip-path="url(#plot)"><path d="${d}" fill="none" stroke="${sr.color}" stroke-width="${sr.label === 'softmax' ? 3 : 2}"${sr.dash ? ` stroke-dasharray="${sr.dash}"` : ''}/>`);
    for (const p of sr.pts) o.push(markerAt(sr, s.X(p[0]).toFixed(1), s.Y(p[1]).toFixed(1)));
    o.push('</g>');
  }
}

function legend(o, series) {
  const lx = ML + PW + 18;
  let y = MT + 6, group = null;
  for (const sr of series) {
    if (sr.group !== group) {
      group = sr.group;
      if (y > MT + 6) y += 8;
      o.push(`<text x="${lx}" y="${y}" font-weight="600">${esc(group)}</text>`);
      y += 18;
    }
    o.push(`<line x1="${lx}" x2="${lx + 28}" y1="${y}" y2="${y}" stroke="${sr.color}" stroke-width="2"${sr.dash ? ` stroke-dasharray="${sr.dash}"` : ''}/>`);
    o.push(sr.marker === 'circle' ? `<circle cx="${lx + 14}" cy="${y}" r="3.2" fill="${sr.color}"/>` : `<rect x="${lx + 11}" y="${y - 3}" width="6" height="6" fill="#fff" stroke="${sr.color}" stroke-width="1.5"/>`);
    o.push(`<text x="${lx + 36}" y="${y + 4}">${esc(sr.label)}</text>`);
    y += 18;
  }
}

export function svg(results) {
  const series = seriesOf(results);
  const s = scales(results, series);
  const m = results.meta;
  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${HH}" viewBox="0 0 ${W} ${HH}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`);
  o.push(`<rect width="${W}" height="${HH}" fill="#fff"/>`);
  o.push(`<text x="${ML}" y="22" font-size="15" font-weight="600">attnlab: time per call against sequence length n (log-log)</text>`);
  o.push(`<text x="${ML}" y="38" fill="#555">${esc(`${m.cpu}, Node ${m.node}, one thread, d = dv = ${m.d}; ${m.date.slice(0, 10)}${m.quick ? ' (quick run)' : ''}`)}</text>`);
  axes(o, s);
  guides(o, s);
  lines(o, series, s);
  legend(o, series);
  o.push('</svg>');
  return o.join('\n') + '\n';
}
