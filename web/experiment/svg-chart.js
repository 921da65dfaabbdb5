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

const fmt = (v) => (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(1) : String(Number(v.toPrecision(4))));

function frame({ width, height, title, xLabel, yLabel, xMax, yMin, yMax, colors, yFormat = fmt, xFormat = fmt }) {
  const m = { l: 48, r: 12, t: 24, b: 38 };
  const w = width - m.l - m.r, h = height - m.t - m.b;
  const X = (x) => m.l + (xMax > 0 ? (x / xMax) * w : 0);
  const Y = (y) => m.t + h - ((y - yMin) / (yMax - yMin || 1)) * h;
  const parts = [`<rect width="${width}" height="${height}" fill="${colors.bg}"/>`,
    `<text x="${m.l}" y="15" font-weight="600" fill="${colors.fg}">${esc(title)}</text>`];
  for (const v of ticks(yMin, yMax, 4)) {
    parts.push(`<line x1="${m.l}" x2="${m.l + w}" y1="${r2(Y(v))}" y2="${r2(Y(v))}" stroke="${colors.grid}"/>`,
      `<text x="${m.l - 5}" y="${r2(Y(v) + 4)}" text-anchor="end" fill="${colors.muted}">${esc(yFormat(v))}</text>`);
  }
  for (const v of ticks(0, xMax, 5)) {
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
export function lineChart({ width = 480, height = 280, title, xLabel, yLabel, series, yMin = 0, yMax, xMax, colors, yFormat, xFormat, empty = 'no data yet' }) {
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xm = xMax ?? Math.max(1e-9, ...all.map((p) => p[0]));
  const ym = yMax ?? Math.max(yMin + 1e-9, ...all.map((p) => p[1]));
  const f = frame({ width, height, title, xLabel, yLabel, xMax: xm, yMin, yMax: ym, colors, yFormat, xFormat });
  if (!all.length) f.parts.push(`<text x="${f.m.l + f.w / 2}" y="${f.m.t + f.h / 2}" text-anchor="middle" fill="${colors.muted}">${esc(empty)}</text>`);
  for (const s of series) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!pts.length) continue;
    const d = pts.map(([x, y]) => `${r2(f.X(x))},${r2(f.Y(Math.min(Math.max(y, yMin), ym)))}`).join(' ');
    f.parts.push(`<polyline points="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ''} stroke-linejoin="round"><title>${esc(s.label)}</title></polyline>`);
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
