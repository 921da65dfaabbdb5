// Canvas heatmaps (crisp on HiDPI: whole device pixels per cell, nearest-neighbour scaling),
// colour maps and legends. The hover / lock tooltip is tooltip.js.

import { showTooltip, hideTooltip, lockTooltip, unlockTooltip, tooltipLocked, ownsTooltip } from './tooltip.js';

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

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export function maskColor() {
  return cssVar('--mask', '#c4c4c4');
}

export function fmtTick(x) {
  if (x === 0) return '0';
  const a = Math.abs(x);
  const s = a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(3)));
  return s.replace('-', '−');
}

// ---------------------------------------------------------------- heatmap

let uid = 0;

/**
 * A heatmap in `container`: a canvas, a legend and a (visually hidden) live read-out.
 * opts: { title, kind: 'sequential' | 'diverging', maxHeight, cellMax, describe(i, j) -> {title, lines} }
 */
export class Heatmap {
  constructor(container, opts) {
    this.opts = { kind: 'sequential', maxHeight: 420, maxWidth: 560, cellMax: 28, rowName: 'row', colName: 'column', legendWidth: 160, ...opts };
    this.id = `hm${++uid}`;
    this.container = container;
    this.root = document.createElement('div');
    this.root.className = 'heatmap';
    this.canvas = document.createElement('canvas');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-describedby', `${this.id}-readout`);
    this.canvas.className = 'hm-canvas';
    this.canvas.dataset.heatmap = this.opts.name ?? '';
    this.legend = document.createElement('div');
    this.legend.className = 'legend';
    this.readout = document.createElement('p');
    this.readout.className = 'visually-hidden';
    this.readout.id = `${this.id}-readout`;
    this.readout.setAttribute('aria-live', 'polite');
    const wrap = document.createElement('div');
    wrap.className = 'hm-wrap';
    wrap.append(this.canvas);
    this.root.append(wrap, this.legend, this.readout);
    container.append(this.root);
    this.data = null;
    this.cursor = null; // [i, j] of the hovered / focused cell
    this.bitmap = document.createElement('canvas');
    this.bind();
    this.ro = new ResizeObserver(() => this.data && this.draw());
    this.ro.observe(container);
  }

  /** m: { rows, cols, data, mask?: (i, j) => boolean, vmin?, vmax? } */
  set(m) {
    this.data = m;
    let lo = Infinity, hi = -Infinity;
    for (let t = 0; t < m.data.length; t++) {
      const x = m.data[t];
      if (!Number.isFinite(x)) continue;
      if (m.mask && m.mask(Math.floor(t / m.cols), t % m.cols)) continue;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (!Number.isFinite(lo)) lo = hi = 0;
    if (this.opts.kind === 'diverging') {
      const a = Math.max(Math.abs(lo), Math.abs(hi), 1e-12);
      this.vmin = m.vmin ?? -a;
      this.vmax = m.vmax ?? a;
    } else {
      this.vmin = m.vmin ?? Math.min(0, lo);
      this.vmax = m.vmax ?? Math.max(hi, this.vmin + 1e-12);
    }
    this.dataMin = lo;
    this.dataMax = hi;
    if (this.cursor && (this.cursor[0] >= m.rows || this.cursor[1] >= m.cols)) this.cursor = null;
    this.paintBitmap();
    this.draw();
    this.drawLegend();
    this.canvas.setAttribute('aria-label', `${this.opts.title}: ${m.rows}×${m.cols} heatmap, values ${fmtTick(lo)} to ${fmtTick(hi)}. Arrow keys read cells; Enter locks the read-out.`);
    if (ownsTooltip(this) && tooltipLocked() && this.cursor) this.showCell(...this.cursor, null, true);
  }

  lut() {
    return this.opts.kind === 'diverging' ? DIVERGING : SEQUENTIAL;
  }

  /** One pixel per cell, in an offscreen canvas. */
  paintBitmap() {
    const { rows, cols, data, mask } = this.data;
    this.bitmap.width = cols;
    this.bitmap.height = rows;
    const ctx = this.bitmap.getContext('2d');
    const img = ctx.createImageData(cols, rows);
    const lut = this.lut();
    const mc = hexToRgbAny(maskColor());
    this.maskRgb = mc;
    const span = this.vmax - this.vmin || 1;
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const p = (i * cols + j) * 4;
        const x = data[i * cols + j];
        if (mask && mask(i, j)) {
          img.data[p] = mc[0];
          img.data[p + 1] = mc[1];
          img.data[p + 2] = mc[2];
        } else if (!Number.isFinite(x)) {
          img.data[p] = 255;
          img.data[p + 1] = 0;
          img.data[p + 2] = 255;
        } else {
          const k = Math.max(0, Math.min(255, Math.round(((x - this.vmin) / span) * 255)));
          img.data[p] = lut[k * 3];
          img.data[p + 1] = lut[k * 3 + 1];
          img.data[p + 2] = lut[k * 3 + 2];
        }
        img.data[p + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
  }

  layout() {
    const { rows, cols } = this.data;
    const dpr = window.devicePixelRatio || 1;
    const avail = Math.max(60, Math.min(this.opts.maxWidth, this.container.clientWidth || this.opts.maxWidth));
    const maxH = this.opts.maxHeight;
    // Square cells when they fit; a very tall (n×dv, large n) or very flat matrix gets wider /
    // taller cells so it stays readable.
    const sq = Math.min(this.opts.cellMax, avail / cols, maxH / rows);
    let cwCss = sq, chCss = sq;
    if (sq * cols < 96) cwCss = Math.min(avail / cols, this.opts.cellMax, Math.max(sq, 96 / cols));
    if (sq * rows < 24) chCss = Math.min(maxH / rows, this.opts.cellMax, Math.max(sq, 24 / rows));
    // Whole device pixels per cell when a cell is at least one pixel (crisp, no blur); otherwise
    // the bitmap is scaled down to the available size.
    const axis = (count, css) => {
      const dev = css * dpr;
      if (dev >= 1) {
        const c = Math.floor(dev);
        return { cell: c, total: c * count };
      }
      return { cell: 0, total: Math.max(1, Math.round(count * dev)) };
    };
    const x = axis(cols, cwCss), y = axis(rows, chCss);
    return { dpr, W: x.total, H: y.total, cell: Math.min(x.cell, y.cell), cw: x.total / cols, ch: y.total / rows };
  }

  draw() {
    if (!this.data) return;
    const L = this.layout();
    this.L = L;
    const c = this.canvas;
    if (c.width !== L.W || c.height !== L.H) {
      c.width = L.W;
      c.height = L.H;
    }
    c.style.width = `${L.W / L.dpr}px`;
    c.style.height = `${L.H / L.dpr}px`;
    c.dataset.rows = this.data.rows;
    c.dataset.cols = this.data.cols;
    c.dataset.maskColor = this.maskRgb ? `rgb(${this.maskRgb.join(',')})` : '';
    const ctx = c.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, L.W, L.H);
    ctx.drawImage(this.bitmap, 0, 0, L.W, L.H);
    if (L.cell >= 10) {
      ctx.fillStyle = cssVar('--grid', 'rgba(255,255,255,0.35)');
      for (let j = 1; j < this.data.cols; j++) ctx.fillRect(j * L.cw, 0, 1, L.H);
      for (let i = 1; i < this.data.rows; i++) ctx.fillRect(0, i * L.ch, L.W, 1);
    }
    if (this.cursor) {
      const [i, j] = this.cursor;
      const lw = Math.max(1, Math.round(L.dpr * 1.5));
      ctx.lineWidth = lw;
      ctx.strokeStyle = cssVar('--cursor', '#ff2d55');
      const x = j * L.cw, y = i * L.ch;
      ctx.strokeRect(x + lw / 2, y + lw / 2, Math.max(lw, L.cw - lw), Math.max(lw, L.ch - lw));
    }
  }

  drawLegend() {
    const lg = this.legend;
    lg.replaceChildren();
    const bar = document.createElement('canvas');
    bar.className = 'legend-bar';
    const dpr = window.devicePixelRatio || 1;
    const lw = this.opts.legendWidth;
    bar.width = Math.round(lw * dpr);
    bar.height = Math.round(10 * dpr);
    bar.style.width = `${lw}px`;
    bar.style.height = '10px';
    bar.setAttribute('aria-hidden', 'true');
    const ctx = bar.getContext('2d');
    const lut = this.lut();
    for (let x = 0; x < bar.width; x++) {
      const k = Math.round((x / (bar.width - 1)) * 255);
      ctx.fillStyle = `rgb(${lut[k * 3]},${lut[k * 3 + 1]},${lut[k * 3 + 2]})`;
      ctx.fillRect(x, 0, 1, bar.height);
    }
    const ticks = document.createElement('div');
    ticks.className = 'legend-ticks';
    ticks.style.width = `${lw}px`;
    const mid = (this.vmin + this.vmax) / 2;
    for (const v of [this.vmin, mid, this.vmax]) {
      const s = document.createElement('span');
      s.textContent = fmtTick(v);
      ticks.append(s);
    }
    const box = document.createElement('div');
    box.className = 'legend-scale';
    box.append(bar, ticks);
    const cap = document.createElement('span');
    cap.className = 'legend-caption';
    cap.textContent = this.opts.legendLabel ?? (this.opts.kind === 'diverging' ? 'value (signed)' : 'weight');
    lg.append(cap, box);
    if (this.data.mask) {
      const m = document.createElement('span');
      m.className = 'legend-mask';
      const sw = document.createElement('i');
      sw.className = 'swatch';
      sw.style.background = maskColor();
      m.append(sw, document.createTextNode(' masked'));
      lg.append(m);
    }
  }

  cellAt(ev) {
    if (!this.L || !this.data) return null;
    const r = this.canvas.getBoundingClientRect();
    const x = ((ev.clientX - r.left) / r.width) * this.data.cols;
    const y = ((ev.clientY - r.top) / r.height) * this.data.rows;
    const j = Math.floor(x), i = Math.floor(y);
    if (i < 0 || j < 0 || i >= this.data.rows || j >= this.data.cols) return null;
    return [i, j];
  }

  describe(i, j) {
    const v = this.data.data[i * this.data.cols + j];
    const base = { title: `${this.opts.title}[${i}, ${j}] = ${fmtFull(v)}  (${this.opts.rowName} = ${i}, ${this.opts.colName} = ${j})`, lines: [] };
    if (this.data.mask && this.data.mask(i, j)) base.title += ' — masked';
    if (this.opts.describe) {
      try {
        const extra = this.opts.describe(i, j);
        if (extra?.lines) base.lines = extra.lines;
      } catch (err) {
        base.lines = [`(could not explain: ${err.message})`];
      }
    }
    return base;
  }

  showCell(i, j, ev, force = false) {
    this.cursor = [i, j];
    this.draw();
    const d = this.describe(i, j);
    let x, y;
    if (ev) {
      x = ev.clientX;
      y = ev.clientY;
    } else {
      const r = this.canvas.getBoundingClientRect();
      x = r.left + ((j + 1) / this.data.cols) * r.width;
      y = r.top + ((i + 1) / this.data.rows) * r.height;
    }
    showTooltip(this, x, y, { ...d, force });
    this.readout.textContent = `${d.title}. ${d.lines.join(' ')}`;
  }

  bind() {
    const c = this.canvas;
    c.addEventListener('mousemove', (ev) => {
      if (tooltipLocked()) return;
      const cell = this.cellAt(ev);
      if (!cell) return this.leave();
      this.showCell(cell[0], cell[1], ev);
    });
    c.addEventListener('mouseleave', () => {
      if (!tooltipLocked()) this.leave();
    });
    c.addEventListener('click', (ev) => {
      const cell = this.cellAt(ev);
      if (tooltipLocked()) {
        const same = ownsTooltip(this) && cell && this.cursor && cell[0] === this.cursor[0] && cell[1] === this.cursor[1];
        unlockTooltip();
        if (same || !cell) return this.leave();
      }
      if (!cell) return;
      lockTooltip(this);
      this.showCell(cell[0], cell[1], ev, true);
    });
    c.addEventListener('keydown', (ev) => {
      if (!this.data) return;
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -1e9], End: [0, 1e9], PageUp: [-8, 0], PageDown: [8, 0] };
      if (moves[ev.key]) {
        ev.preventDefault();
        const [i, j] = this.cursor ?? [0, 0];
        const [di, dj] = this.cursor ? moves[ev.key] : [0, 0];
        const ni = Math.max(0, Math.min(this.data.rows - 1, i + di));
        const nj = Math.max(0, Math.min(this.data.cols - 1, j + dj));
        if (tooltipLocked() && ownsTooltip(this)) this.showCell(ni, nj, null, true);
        else if (!tooltipLocked()) this.showCell(ni, nj, null);
      } else if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        const [i, j] = this.cursor ?? [0, 0];
        if (tooltipLocked() && ownsTooltip(this)) {
          unlockTooltip();
          this.showCell(i, j, null);
        } else {
          if (tooltipLocked()) unlockTooltip();
          lockTooltip(this);
          this.showCell(i, j, null, true);
        }
      }
    });
    c.addEventListener('focus', () => {
      if (!tooltipLocked() && this.data) this.showCell(...(this.cursor ?? [0, 0]), null);
    });
    c.addEventListener('blur', () => {
      if (!tooltipLocked()) this.leave();
    });
  }

  leave() {
    if (this.cursor) {
      this.cursor = null;
      this.draw();
    }
    hideTooltip(this);
  }

  /** Re-reads theme colours (mask, grid) and redraws. */
  retheme() {
    if (!this.data) return;
    this.paintBitmap();
    this.draw();
    this.drawLegend();
  }

  toPngBlob() {
    return new Promise((resolve) => this.canvas.toBlob(resolve, 'image/png'));
  }
}

function hexToRgbAny(c) {
  const s = c.trim();
  if (s.startsWith('#')) {
    const h = s.length === 4 ? '#' + [...s.slice(1)].map((x) => x + x).join('') : s;
    return hexToRgb(h.slice(0, 7));
  }
  const m = s.match(/\d+(\.\d+)?/g);
  return m ? m.slice(0, 3).map(Number) : [196, 196, 196];
}

export function fmtFull(v) {
  if (!Number.isFinite(v)) return String(v);
  return String(Number(v.toPrecision(6))).replace('-', '−');
}
