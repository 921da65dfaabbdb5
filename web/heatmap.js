// Canvas heatmaps (crisp on HiDPI: whole device pixels per cell, nearest-neighbour scaling) with
// axis names and index ticks. Colour maps and the legend are colormap.js; the hover / lock tooltip
// is tooltip.js.

import { showTooltip, hideTooltip, lockTooltip, unlockTooltip, tooltipLocked, ownsTooltip, clearTooltip } from './tooltip.js';
import { SEQUENTIAL, DIVERGING, cssVar, maskColor, colorRgb, fmtTick, fmtFull, drawLegend } from './colormap.js';

export { fmtFull };

// ---------------------------------------------------------------- heatmap

let uid = 0;

const div = (cls, text) => {
  const e = document.createElement('div');
  e.className = cls;
  if (text != null) e.textContent = text;
  return e;
};

/**
 * A heatmap in `container`: axis names with the first and last index, a canvas, a legend and a
 * (visually hidden) live read-out.
 * opts: { title, kind: 'sequential' | 'diverging', maxHeight, cellMax, rowName, colName,
 *         rowAxis, colAxis (axis names; default "rowName ↓", "colName →"), describe(i, j) -> {title, lines} }
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
    const wrap = div('hm-wrap');
    wrap.append(this.canvas);
    // axes: names and the first / last index, in a grid around the canvas
    this.xFirst = div('hm-tick', '0');
    this.xLast = div('hm-tick');
    this.yFirst = div('hm-tick', '0');
    this.yLast = div('hm-tick');
    const xAxis = div('hm-xaxis');
    xAxis.append(this.xFirst, div('hm-axis-name', this.opts.colAxis ?? `${this.opts.colName} →`), this.xLast);
    this.yAxis = div('hm-yaxis');
    const yName = div('hm-axis-name hm-vertical');
    yName.append(this.opts.rowAxis ?? this.opts.rowName, Object.assign(document.createElement('span'), { className: 'hm-arrow', textContent: '↓' }));
    const yTicks = div('hm-yticks');
    yTicks.append(this.yFirst, this.yLast);
    this.yAxis.append(yName, yTicks);
    for (const e of [xAxis, this.yAxis]) e.setAttribute('aria-hidden', 'true');
    const frame = div('hm-frame');
    frame.append(div('hm-corner'), xAxis, this.yAxis, wrap);
    this.root.append(frame, this.legend, this.readout);
    container.append(this.root);
    this.data = null;
    this.cursor = null; // [i, j] of the hovered / focused cell
    this.bitmap = document.createElement('canvas');
    this.bind();
    this.ro = new ResizeObserver(() => this.data && this.draw());
    this.ro.observe(container);
  }

  /**
   * m: { rows, cols, data, mask?: (i, j) => boolean, vmin?, vmax?, rowNorm?, shared?, kind? }
   * rowNorm: colour each row on its own scale, 0 → the row's largest value (sequential maps).
   * kind: this data's colour map, when it differs from opts.kind (A of a variant whose entries
   * take either sign is drawn diverging, 0 at the white middle, by the map that draws softmax's A).
   * shared: vmin / vmax are a range common to several maps (the legend says so).
   */
  set(m) {
    this.data = m;
    this.kind = m.kind ?? this.opts.kind;
    this.xLast.textContent = String(m.cols - 1);
    this.yLast.textContent = String(m.rows - 1);
    let lo = Infinity, hi = -Infinity;
    for (let t = 0; t < m.data.length; t++) {
      const x = m.data[t];
      if (!Number.isFinite(x)) continue;
      if (m.mask && m.mask(Math.floor(t / m.cols), t % m.cols)) continue;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (!Number.isFinite(lo)) lo = hi = 0;
    if (this.kind === 'diverging') {
      const a = Math.max(Math.abs(lo), Math.abs(hi), 1e-12);
      this.vmin = m.vmin ?? -a;
      this.vmax = m.vmax ?? a;
    } else {
      this.vmin = m.vmin ?? Math.min(0, lo);
      this.vmax = m.vmax ?? Math.max(hi, this.vmin + 1e-12);
    }
    this.dataMin = lo;
    this.dataMax = hi;
    this.rowNorm = !!m.rowNorm && this.kind !== 'diverging';
    Object.assign(this.canvas.dataset, { vmin: String(this.vmin), vmax: String(this.vmax), rowNorm: String(this.rowNorm) });
    const gone = this.cursor && (this.cursor[0] >= m.rows || this.cursor[1] >= m.cols);
    if (gone) this.release();
    this.paintBitmap();
    this.draw();
    this.drawLegend();
    this.canvas.setAttribute('aria-label', `${this.opts.title}: ${m.rows}×${m.cols} heatmap (${this.opts.rowName} down, ${this.opts.colName} across), values ${fmtTick(lo)} to ${fmtTick(hi)}. Arrow keys read cells; Enter locks the read-out.`);
    // a locked read-out describes the new value of its cell, at the cell
    if (ownsTooltip(this) && tooltipLocked() && this.cursor) this.showCell(...this.cursor, null, true);
  }

  /** Drops the cursor and, when this map owns it, the tooltip (its cell is gone or hidden). */
  release() {
    this.cursor = null;
    if (ownsTooltip(this)) clearTooltip();
  }

  /** Where a locked tooltip sits: by the cursor cell, in viewport coordinates; null when out of view. */
  anchorPoint() {
    if (!this.cursor || !this.data || !this.canvas.isConnected) return null;
    const r = this.canvas.getBoundingClientRect();
    if (!r.width || !r.height) return null;
    const [i, j] = this.cursor;
    const x = r.left + ((j + 1) / this.data.cols) * r.width, y = r.top + ((i + 1) / this.data.rows) * r.height;
    if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) return null;
    return { x, y };
  }

  lut() {
    return (this.kind ?? this.opts.kind) === 'diverging' ? DIVERGING : SEQUENTIAL;
  }

  /** One pixel per cell, in an offscreen canvas. */
  paintBitmap() {
    const { rows, cols, data, mask } = this.data;
    this.bitmap.width = cols;
    this.bitmap.height = rows;
    const ctx = this.bitmap.getContext('2d');
    const img = ctx.createImageData(cols, rows);
    const lut = this.lut();
    const mc = colorRgb(maskColor());
    this.maskRgb = mc;
    let vmin = this.vmin, span = this.vmax - this.vmin || 1;
    for (let i = 0; i < rows; i++) {
      if (this.rowNorm) {
        let mx = 0;
        for (let j = 0; j < cols; j++) {
          const x = data[i * cols + j];
          if (Number.isFinite(x) && !(mask && mask(i, j)) && x > mx) mx = x;
        }
        vmin = 0;
        span = mx || 1;
      }
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
          const k = Math.max(0, Math.min(255, Math.round(((x - vmin) / span) * 255)));
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
    const gutter = this.yAxis.offsetWidth + 4; // the row axis beside the canvas
    const avail = Math.max(60, Math.min(this.opts.maxWidth, (this.container.clientWidth || this.opts.maxWidth) - gutter));
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
    drawLegend(this.legend, {
      lut: this.lut(), width: this.opts.legendWidth, vmin: this.vmin, vmax: this.vmax, rowNorm: this.rowNorm, shared: !!this.data.shared, masked: !!this.data.mask,
      label: this.opts.legendLabel ?? (this.kind === 'diverging' ? 'value (signed)' : 'weight'),
    });
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

  /** Marks cell (i, j) and says what it holds: in the read-out, and (unless quiet) in the tooltip. */
  showCell(i, j, ev, force = false, quiet = false) {
    this.cursor = [i, j];
    this.draw();
    const d = this.describe(i, j);
    this.readout.textContent = `${d.title}. ${d.lines.join(' ')}`;
    if (quiet) return;
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
    // arriving by Tab marks the cell and reads it out, but opens no tooltip: a box popping up
    // over the next map as the focus passes by hides what it covers; the arrows and Enter do
    c.addEventListener('focus', () => {
      if (!tooltipLocked() && this.data) this.showCell(...(this.cursor ?? [0, 0]), null, false, true);
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
