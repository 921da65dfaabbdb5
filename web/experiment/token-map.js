// One attention map A [n×n] on a canvas, labelled with the tokens when the cells are big enough:
// rows are the positions that look (queries ↓), columns the positions looked at (keys →).
// `marks` outline cells (recall: where the answer to each query sits). Colours: the sequential
// map of colormap.js on a range shared by every map of the view (vmax), so maps compare directly.

import { SEQUENTIAL, cssVar } from '../colormap.js';

/**
 * opts: { cell (CSS px per cell), vmax, labels: string[] | null (token names), marks: [[i, j, kind]],
 *         title } — kind 'key' or 'value' picks the outline's dash.
 */
export function drawTokenMap(canvas, A, n, { cell = 5, vmax = 1, labels = null, marks = [] } = {}) {
  const dpr = window.devicePixelRatio || 1;
  const pad = labels ? 34 : 0; // room for the token names on the left and at the top
  const size = pad + n * cell;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  canvas.style.width = `${size}px`;
  canvas.style.height = `${size}px`;
  canvas.dataset.rows = String(n);
  canvas.dataset.cols = String(n);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, size, size);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const k = Math.max(0, Math.min(255, Math.round((A[i * n + j] / (vmax || 1)) * 255)));
      ctx.fillStyle = `rgb(${SEQUENTIAL[k * 3]},${SEQUENTIAL[k * 3 + 1]},${SEQUENTIAL[k * 3 + 2]})`;
      ctx.fillRect(pad + j * cell, pad + i * cell, cell, cell);
    }
  }
  const cursor = cssVar('--cursor', '#ff2d55');
  ctx.lineWidth = Math.max(1, cell / 8);
  for (const [i, j, kind] of marks) {
    ctx.strokeStyle = kind === 'value' ? cursor : '#ffffff';
    ctx.setLineDash(kind === 'value' ? [] : [Math.max(1, cell / 4), Math.max(1, cell / 4)]);
    ctx.strokeRect(pad + j * cell + 0.5, pad + i * cell + 0.5, cell - 1, cell - 1);
  }
  ctx.setLineDash([]);
  if (labels) {
    ctx.fillStyle = cssVar('--fg', '#222');
    ctx.font = `${Math.min(11, cell - 3)}px ui-monospace, monospace`;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    for (let i = 0; i < n; i++) ctx.fillText(labels[i], pad - 3, pad + (i + 0.5) * cell);
    ctx.save();
    ctx.textAlign = 'left';
    for (let j = 0; j < n; j++) {
      ctx.save();
      ctx.translate(pad + (j + 0.5) * cell, pad - 3);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(labels[j], 0, 0);
      ctx.restore();
    }
    ctx.restore();
  }
  return { pad, cell };
}

/** The cell (i, j) under a mouse event on a map drawn with `layout` ({ pad, cell }), or null. */
export function cellAt(canvas, e, n, layout) {
  const r = canvas.getBoundingClientRect();
  const x = e.clientX - r.left - layout.pad, y = e.clientY - r.top - layout.pad;
  const i = Math.floor(y / layout.cell), j = Math.floor(x / layout.cell);
  return i >= 0 && j >= 0 && i < n && j < n ? [i, j] : null;
}
