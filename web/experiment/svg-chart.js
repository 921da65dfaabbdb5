// Line and stacked-area charts as SVG text. The page shows the SVG itself (crisp at any size,
// scales down on a phone through its viewBox) and exports the same text as .svg, or rasterised
// as .png, so what is saved is what is shown. Colours are passed in (theme.js's CSS variables,
// read when drawing), so an exported file keeps the colours it was drawn with.

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const r2 = (x) => Math.round(x * 100) / 100;

/** Round tick values covering [lo, hi] (about `count` of them). */
export function ticks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** A tick's text: short at every size (10k, not 1.0e+4, which a narrow chart clips). */
export const fmt = (v) => {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (v !== 0 && a < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
};
/** The width of a label in the charts' 11 px system font, generously (digits are ~6.2 px). */
const textWidth = (t) => String(t).length * 6.6;

function frame({ width, height, title, subtitle, xLabel, yLabel, xMax, yMin, yMax, colors, yFormat = fmt, xFormat = fmt }) {
  const xTicks = ticks(0, xMax, width < 400 ? 4 : 5);
  const yTicks = ticks(yMin, yMax, 4);
  // left: the rotated y title (to x = 18), a gap, then the widest y tick label, so none overlap;
  // the last x tick is centred on the plot's right edge: leave room for half of it
  const m = { l: Math.max(48, Math.ceil(24 + Math.max(...yTicks.map((v) => textWidth(yFormat(v)))) + 5)), r: Math.max(12, Math.ceil(textWidth(xFormat(xTicks.at(-1) ?? 0)) / 2) + 4), t: subtitle ? 38 : 24, b: 38 };
  const w = width - m.l - m.r, h = height - m.t - m.b;
  const X = (x) => m.l + (xMax > 0 ? (x / xMax) * w : 0);
  const Y = (y) => m.t + h - ((y - yMin) / (yMax - yMin || 1)) * h;
  const parts = [`<rect width="${width}" height="${height}" fill="${colors.bg}"/>`,
    `<text x="8" y="15" font-weight="600" fill="${colors.fg}">${esc(title)}</text>`];
  if (subtitle) parts.push(`<text x="8" y="29" fill="${colors.muted}">${esc(subtitle)}</text>`);
  for (const v of yTicks) {
    parts.push(`<line x1="${m.l}" x2="${m.l + w}" y1="${r2(Y(v))}" y2="${r2(Y(v))}" stroke="${colors.grid}"/>`,
      `<text x="${m.l - 5}" y="${r2(Y(v) + 4)}" text-anchor="end" fill="${colors.muted}">${esc(yFormat(v))}</text>`);
  }
  for (const v of xTicks) {
    parts.push(`<line x1="${r2(X(v))}" x2="${r2(X(v))}" y1="${m.t + h}" y2="${m.t + h + 4}" stroke="${colors.muted}"/>`,
      `<text x="${r2(X(v))}" y="${m.t + h + 16}" text-anchor="middle" fill="${colors.muted}">${esc(xFormat(v))}</text>`);
  }
  parts.push(`<line x1="${m.l}" x2="${m.l + w}" y1="${m.t + h}" y2="${m.t + h}" stroke="${colors.muted}"/>`,
    `<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + h}" stroke="${colors.muted}"/>`,
    `<text x="${m.l + w / 2}" y="${height - 6}" text-anchor="middle" fill="${colors.muted}">${esc(xLabel)}</text>`,
    `<text transform="translate(12 ${m.t + h / 2}) rotate(-90)" text-anchor="middle" fill="${colors.muted}">${esc(yLabel)}</text>`);
  return { parts, X, Y, m, w, h };
}

const wrapSvg = (width, height, label, parts) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(label)}" font-family="system-ui, sans-serif" font-size="11">${parts.join('')}</svg>`;

/**
 * series: [{ label, color, dash?, points: [[x, y], ...] }]. Returns SVG text. An empty chart says
 * `empty` in the middle.
 */
/**
 * refs: [{ y, label }]: reference lines across the plot (a chance level), dashed, labelled at
 * their left end. A series' `width` (default 2) and `opacity` draw it thinner or fainter.
 */
export function lineChart({ width = 480, height = 280, title, subtitle, xLabel, yLabel, series, yMin = 0, yMax, xMax, colors, yFormat, xFormat, empty = 'no data yet', refs = [] }) {
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xm = xMax ?? Math.max(1e-9, ...all.map((p) => p[0]));
  // with nothing to draw yet (and no given top), a plain 0..1 axis rather than a sliver of 1e-9
  const ym = yMax ?? (all.length || refs.length ? Math.max(yMin + 1e-9, ...all.map((p) => p[1]), ...refs.map((r) => r.y * 1.1)) : yMin + 1);
  const f = frame({ width, height, title, subtitle, xLabel, yLabel, xMax: xm, yMin, yMax: ym, colors, yFormat, xFormat });
  if (!all.length) f.parts.push(`<text x="${f.m.l + f.w / 2}" y="${f.m.t + f.h / 2}" text-anchor="middle" fill="${colors.muted}">${esc(empty)}</text>`);
  for (const r of refs) {
    if (!(r.y >= yMin && r.y <= ym)) continue;
    const y = r2(f.Y(r.y));
    f.parts.push(`<g class="ref-line" data-y="${r.y}"><line x1="${f.m.l}" x2="${f.m.l + f.w}" y1="${y}" y2="${y}" stroke="${colors.fg}" stroke-width="1" stroke-dasharray="2 3" opacity="0.8"/>` +
      `<text x="${f.m.l + 4}" y="${r2(y - 4)}" fill="${colors.fg}">${esc(r.label)}</text></g>`);
  }
  for (const s of series) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!pts.length) continue;
    const d = pts.map(([x, y]) => `${r2(f.X(x))},${r2(f.Y(Math.min(Math.max(y, yMin), ym)))}`).join(' ');
    f.parts.push(`<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="${s.width ?? 2}"${s.opacity != null ? ` stroke-opacity="${s.opacity}"` : ''}${s.dash ? ' stroke-dasharray="5 3"' : ''} stroke-linejoin="round"><title>${esc(s.label)}</title></polyline>`);
    if (pts.length === 1) f.parts.push(`<circle cx="${r2(f.X(pts[0][0]))}" cy="${r2(f.Y(pts[0][1]))}" r="3" fill="${s.color}"/>`);
  }
  return wrapSvg(width, height, title, f.parts);
}

/**
 * Stacked areas of shares that sum to 1 at each x: xs [k], layers [{ label, color, values [k] }]
 * (bottom first). For a mixture head: the weight of each component over training.
 */
export function stackedArea({ width = 260, height = 150, title, xLabel, xs, layers, colors }) {
  const xm = Math.max(1, ...xs);
  const f = frame({ width, height, title, xLabel, yLabel: 'α', xMax: xm, yMin: 0, yMax: 1, colors });
  const base = xs.map(() => 0);
  for (const layer of layers) {
    const top = base.map((b, i) => b + layer.values[i]);
    const up = xs.map((x, i) => `${r2(f.X(x))},${r2(f.Y(top[i]))}`);
    const down = xs.map((x, i) => `${r2(f.X(x))},${r2(f.Y(base[i]))}`).reverse();
    f.parts.push(`<polygon points="${[...up, ...down].join(' ')}" fill="${layer.color}" fill-opacity="0.75" stroke="${layer.color}"><title>${esc(layer.label)}</title></polygon>`);
    top.forEach((t, i) => (base[i] = t));
  }
  return wrapSvg(width, height, title, f.parts);
}

/** Rasterises SVG text to a PNG blob (scale × its size). */
export async function svgToPng(svgText, scale = 2) {
  const img = new Image();
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  try {
    img.src = url;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = Math.round(img.width * scale);
    c.height = Math.round(img.height * scale);
    c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
    return await new Promise((resolve) => c.toBlob(resolve, 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}
