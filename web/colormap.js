// Colour maps, tick text and the legend under a heatmap. No state.

function hexToRgb(h) {
  const x = parseInt(h.slice(1), 16);
  return [(x >> 16) & 255, (x >> 8) & 255, x & 255];
}

function makeLut(stops) {
  const rgb = stops.map(hexToRgb);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1);
    const k = Math.min(rgb.length - 2, Math.floor(t));
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = Math.round(rgb[k][c] + (rgb[k + 1][c] - rgb[k][c]) * f);
  }
  return lut;
}

/** Sequential (weights ≥ 0): viridis. */
export const SEQUENTIAL = makeLut(['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725']);
/** Diverging (signed values): blue (negative) – near white (0) – red (positive). */
export const DIVERGING = makeLut(['#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582', '#d6604d', '#b2182b']);

export function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export function maskColor() {
  return cssVar('--mask', '#c4c4c4');
}

/** [r, g, b] of a CSS colour in #rgb, #rrggbb or rgb() form. */
export function colorRgb(c) {
  const s = c.trim();
  if (s.startsWith('#')) {
    const h = s.length === 4 ? '#' + [...s.slice(1)].map((x) => x + x).join('') : s;
    return hexToRgb(h.slice(0, 7));
  }
  const m = s.match(/\d+(\.\d+)?/g);
  return m ? m.slice(0, 3).map(Number) : [196, 196, 196];
}

export function fmtTick(x) {
  if (x === 0) return '0';
  const a = Math.abs(x);
  const s = a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(3)));
  return s.replace('-', '−');
}

export function fmtFull(v) {
  if (!Number.isFinite(v)) return String(v);
  return String(Number(v.toPrecision(6))).replace('-', '−');
}

const make = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};

/**
 * Fills `lg` with a colour bar and its ticks. o: { lut, width, vmin, vmax, label, rowNorm, masked,
 * shared } (rowNorm: each row has its own 0 → row max scale; shared: the range is common to a set).
 */
export function drawLegend(lg, o) {
  lg.replaceChildren();
  const bar = make('canvas', 'legend-bar');
  const dpr = window.devicePixelRatio || 1;
  bar.width = Math.round(o.width * dpr);
  bar.height = Math.round(10 * dpr);
  bar.style.width = `${o.width}px`;
  bar.style.height = '10px';
  bar.setAttribute('aria-hidden', 'true');
  const ctx = bar.getContext('2d');
  for (let x = 0; x < bar.width; x++) {
    const k = Math.round((x / (bar.width - 1)) * 255);
    ctx.fillStyle = `rgb(${o.lut[k * 3]},${o.lut[k * 3 + 1]},${o.lut[k * 3 + 2]})`;
    ctx.fillRect(x, 0, 1, bar.height);
  }
  const ticks = make('div', 'legend-ticks');
  ticks.style.width = `${o.width}px`;
  const texts = o.rowNorm ? ['0', '½ row max', 'row max'] : [o.vmin, (o.vmin + o.vmax) / 2, o.vmax].map(fmtTick);
  for (const t of texts) ticks.append(make('span', null, t));
  const box = make('div', 'legend-scale');
  box.append(bar, ticks);
  const cap = make('span', 'legend-caption', o.label + (o.rowNorm ? ', each row on its own scale' : o.shared ? ' (shared scale)' : ''));
  lg.append(cap, box);
  if (o.masked) {
    const m = make('span', 'legend-mask');
    const sw = make('i', 'swatch');
    sw.style.background = maskColor();
    m.append(sw, document.createTextNode(' masked'));
    lg.append(m);
  }
}
