// plots.test.mjs — scripts/lib/svg.mjs: well-formed, accessible SVG; every series in the legend;
// log ticks where they belong; bands around their lines; nothing outside the viewBox or the plot;
// the same bytes for the same input. One example of each chart type is written to
// test-artifacts/plots/ (gitignored) to look at: `rsvg-convert -o x.png x.svg` (librsvg2-bin), or
// open them in a browser. When rsvg-convert is installed the test also has it render each one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  DASHES, PALETTE, barChart, lineChart, pointsChart, smallMultiples, styleFor, textWidth,
} from '../scripts/lib/svg.mjs';
import { meanCI } from '../scripts/lib/stats.mjs';
import { mulberry32 } from '../src/js/prng.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/plots/', import.meta.url));

// ---------------------------------------------------------------------------------------------
// A tiny XML reader: enough to prove well-formedness and to query the tree.

const ENTITY = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const BAD_AMP = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;

function unescape(s) {
  return s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, e) => (e[0] === '#'
    ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : ENTITY[e]));
}

/** Parses the whole string as one XML element (no prolog), throwing with the offset of any fault. */
function parseXml(src, what) {
  const root = { name: '#root', attrs: {}, children: [], parent: null };
  let cur = root, i = 0;
  const fail = (msg) => { throw new Error(`${what}: not well-formed at offset ${i}: ${msg}: ${JSON.stringify(src.slice(i, i + 60))}`); };
  while (i < src.length) {
    if (src.startsWith('<!--', i)) { const e = src.indexOf('-->', i); if (e < 0) fail('unterminated comment'); i = e + 3; continue; }
    if (src[i] === '<') {
      const m = /^<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_][\w:.-]*\s*=\s*"[^"]*")*)\s*(\/?)>/.exec(src.slice(i, i + 20000));
      if (!m) fail('bad tag');
      const [whole, close, name, attrText, selfClose] = m;
      if (close) {
        if (attrText || selfClose) fail('closing tag with attributes');
        if (cur.name !== name) fail(`</${name}> closes <${cur.name}>`);
        cur = cur.parent;
      } else {
        const attrs = {};
        for (const a of attrText.matchAll(/([A-Za-z_][\w:.-]*)\s*=\s*"([^"]*)"/g)) {
          if (a[1] in attrs) fail(`duplicate attribute ${a[1]}`);
          if (a[2].includes('<')) fail(`'<' in attribute ${a[1]}`);
          if (BAD_AMP.test(a[2])) fail(`bare '&' in attribute ${a[1]}`);
          attrs[a[1]] = unescape(a[2]);
        }
        const node = { name, attrs, children: [], parent: cur };
        cur.children.push(node);
        if (!selfClose) cur = node;
      }
      i += whole.length;
      continue;
    }
    const e = src.indexOf('<', i);
    const text = src.slice(i, e < 0 ? src.length : e);
    if (BAD_AMP.test(text)) fail("bare '&' in text");
    if (text.includes('>')) fail("unescaped '>' in text");
    if (text.trim()) {
      if (cur === root) fail('text outside the root element');
      cur.children.push({ name: '#text', text: unescape(text), parent: cur });
    }
    i = e < 0 ? src.length : e;
  }
  if (cur !== root) throw new Error(`${what}: <${cur.name}> is never closed`);
  const elements = root.children.filter((c) => c.name !== '#text');
  if (elements.length !== 1) throw new Error(`${what}: ${elements.length} root elements`);
  return elements[0];
}

function* walk(node) {
  yield node;
  for (const c of node.children ?? []) yield* walk(c);
}
const textOf = (node) => [...walk(node)].filter((n) => n.name === '#text').map((n) => n.text).join('');
const hasClass = (node, cls) => (node.attrs?.class ?? '').split(/\s+/).includes(cls);
const find = (node, pred) => [...walk(node)].filter((n) => n.name !== '#text' && pred(n));
const byClass = (node, cls) => find(node, (n) => hasClass(n, cls));
const insideDefs = (node) => { for (let p = node.parent; p; p = p.parent) if (p.name === 'defs') return true; return false; };
const parsePoints = (s) => s.trim().split(/\s+/).map((p) => p.split(',').map(Number));

// ---------------------------------------------------------------------------------------------
// Geometry checks

/** The corners of everything drawn (outside <defs>), text boxes estimated as svg.mjs does. */
function extents(svg) {
  const boxes = [];
  for (const n of find(svg, (e) => !insideDefs(e))) {
    const a = n.attrs;
    const num = (k) => Number(a[k]);
    let pts = [];
    switch (n.name) {
      case 'line': pts = [[num('x1'), num('y1')], [num('x2'), num('y2')]]; break;
      case 'rect': pts = [[num('x') || 0, num('y') || 0], [(num('x') || 0) + num('width'), (num('y') || 0) + num('height')]]; break;
      case 'circle': pts = [[num('cx') - num('r'), num('cy') - num('r')], [num('cx') + num('r'), num('cy') + num('r')]]; break;
      case 'polyline': case 'polygon': pts = parsePoints(a.points); break;
      case 'path': throw new Error('svg.mjs is expected to draw no <path> (its coordinates are not checked here)');
      case 'text': {
        const size = Number(a['font-size']);
        const w = textWidth(textOf(n), size, a['font-weight'] === 'bold');
        const x = num('x'), y = num('y');
        const x0 = a['text-anchor'] === 'middle' ? x - w / 2 : a['text-anchor'] === 'end' ? x - w : x;
        pts = [[x0, y - 0.8 * size], [x0 + w, y - 0.8 * size], [x0, y + 0.25 * size], [x0 + w, y + 0.25 * size]];
        const rot = /^rotate\(([-\d.]+) ([-\d.]+) ([-\d.]+)\)$/.exec(a.transform ?? '');
        if (a.transform && !rot) throw new Error(`unexpected transform ${a.transform}`);
        if (rot) {
          const [ang, cx, cy] = rot.slice(1).map(Number);
          const c = Math.cos((ang * Math.PI) / 180), s = Math.sin((ang * Math.PI) / 180);
          pts = pts.map(([px, py]) => [cx + (px - cx) * c - (py - cy) * s, cy + (px - cx) * s + (py - cy) * c]);
        }
        break;
      }
      default: continue;
    }
    boxes.push({ node: n, pts });
  }
  return boxes;
}

function viewBox(svg) {
  const [x, y, w, h] = svg.attrs.viewBox.split(' ').map(Number);
  return { x0: x, y0: y, x1: x + w, y1: y + h };
}

/** Every coordinate finite and inside the viewBox. */
function assertInsideViewBox(svg, what) {
  const vb = viewBox(svg);
  for (const { node, pts } of extents(svg)) {
    for (const [x, y] of pts) {
      assert.ok(Number.isFinite(x) && Number.isFinite(y), `${what}: <${node.name}> has a non-finite coordinate (${x}, ${y})`);
      const label = node.name === 'text' ? ` "${textOf(node)}"` : '';
      assert.ok(x >= vb.x0 - 0.01 && x <= vb.x1 + 0.01 && y >= vb.y0 - 0.01 && y <= vb.y1 + 0.01,
        `${what}: <${node.name}${node.attrs.class ? ` class="${node.attrs.class}"` : ''}>${label} reaches (${x.toFixed(1)}, ${y.toFixed(1)}), outside the viewBox ${JSON.stringify(vb)}`);
    }
  }
}

/** The plot frames: the <rect> of each g.axes. */
function frames(svg) {
  return byClass(svg, 'axes').map((g) => {
    const r = g.children.find((c) => c.name === 'rect');
    return { x0: Number(r.attrs.x), y0: Number(r.attrs.y), x1: Number(r.attrs.x) + Number(r.attrs.width), y1: Number(r.attrs.y) + Number(r.attrs.height) };
  });
}

const within = ([x, y], r, tol = 0.01) => x >= r.x0 - tol && x <= r.x1 + tol && y >= r.y0 - tol && y <= r.y1 + tol;
const overlaps = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
const bbox = (pts) => ({ x0: Math.min(...pts.map((p) => p[0])), y0: Math.min(...pts.map((p) => p[1])), x1: Math.max(...pts.map((p) => p[0])), y1: Math.max(...pts.map((p) => p[1])) });

/** Data marks (lines, bands, bars, error bars) lie inside some plot frame. */
function assertDataInsideFrames(svg, what) {
  const fs = frames(svg);
  assert.ok(fs.length >= 1, `${what}: no plot frame`);
  for (const g of byClass(svg, 'series')) {
    for (const { node, pts } of extents(g)) {
      if (node.name === 'text') continue;
      const markers = !hasClass(node, 'line') && !hasClass(node, 'band') && !hasClass(node, 'bar') && !hasClass(node, 'errorbar');
      // Markers may overhang the frame by their radius; lines, bands, bars and bars' whiskers may not.
      const tol = markers ? 7 : 0.01;
      const box = bbox(pts);
      assert.ok(fs.some((f) => within([box.x0, box.y0], f, tol) && within([box.x1, box.y1], f, tol)),
        `${what}: <${node.name} class="${node.attrs.class ?? ''}"> of series "${textOf(g.children.find((c) => c.name === 'title'))}" spans ${JSON.stringify(box)}, outside every plot frame ${JSON.stringify(fs)}`);
    }
  }
}

/** Legend, tick labels and titles do not overlap a plot frame's inside, nor each other's boxes. */
function assertLegendClear(svg, what) {
  const fs = frames(svg);
  for (const legend of byClass(svg, 'legend')) {
    const box = bbox(extents(legend).flatMap((e) => e.pts));
    for (const f of fs) assert.ok(!overlaps(box, f), `${what}: legend ${JSON.stringify(box)} overlaps the plot ${JSON.stringify(f)}`);
  }
}

function assertTickLabelsApart(svg, what) {
  for (const g of byClass(svg, 'x-ticks')) {
    const boxes = extents(g).filter((e) => e.node.name === 'text').map((e) => ({ ...bbox(e.pts), label: textOf(e.node) }));
    for (let i = 1; i < boxes.length; i++) {
      assert.ok(!overlaps(boxes[i - 1], boxes[i]), `${what}: x tick labels "${boxes[i - 1].label}" and "${boxes[i].label}" overlap`);
    }
  }
}

function assertAccessible(svg, what) {
  assert.equal(svg.name, 'svg', `${what}: root is <svg>`);
  assert.equal(svg.attrs.xmlns, 'http://www.w3.org/2000/svg', `${what}: xmlns`);
  assert.equal(svg.attrs.role, 'img', `${what}: role="img"`);
  const [t, d] = svg.children;
  assert.equal(t.name, 'title', `${what}: first child is <title>`);
  assert.equal(d.name, 'desc', `${what}: second child is <desc>`);
  assert.equal(svg.attrs['aria-labelledby'], `${t.attrs.id} ${d.attrs.id}`, `${what}: aria-labelledby names the title and desc`);
  for (const n of find(svg, (e) => e.name === 'text')) {
    const size = Number(n.attrs['font-size']);
    assert.ok(size >= 11, `${what}: text "${textOf(n)}" has font-size ${n.attrs['font-size']} (< 11 px)`);
  }
}

/** Everything these tests check, for one rendered chart. */
function check(svgText, what, { legendNames = [] } = {}) {
  const svg = parseXml(svgText, what);
  assertAccessible(svg, what);
  assertInsideViewBox(svg, what);
  assertDataInsideFrames(svg, what);
  assertLegendClear(svg, what);
  assertTickLabelsApart(svg, what);
  const legendText = byClass(svg, 'legend').map((g) => find(g, (n) => n.name === 'text').map(textOf).join(' ')).join(' ');
  for (const name of legendNames) assert.ok(legendText.includes(name), `${what}: legend lacks "${name}" (legend text: ${legendText})`);
  return svg;
}

/** Tick values of an axis group, from labels like 100, 10⁵, 2×10⁻³, −0.5, 40 %. */
function tickValues(svg, cls) {
  const sup = { '⁰': '0', '¹': '1', '²': '2', '³': '3', '⁴': '4', '⁵': '5', '⁶': '6', '⁷': '7', '⁸': '8', '⁹': '9', '⁻': '-' };
  return byClass(svg, cls).flatMap((g) => find(g, (n) => n.name === 'text')).map((t) => {
    const s = textOf(t).replace(/−/g, '-');
    const m = /^(?:([\d.]+)×)?10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)$/.exec(s);
    const x = m ? Number(m[1] ?? 1) * 10 ** Number([...m[2]].map((c) => sup[c]).join('')) : Number(s);
    return { v: x, label: s, x: Number(t.attrs.x), y: Number(t.attrs.y) };
  });
}

// Point-in-polygon (even–odd), with points on an edge counted inside.
function inPolygon([x, y], poly) {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i], [xj, yj] = poly[j];
    const cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
    if (Math.abs(cross) < 1e-6 && x >= Math.min(xi, xj) - 1e-6 && x <= Math.max(xi, xj) + 1e-6 && y >= Math.min(yi, yj) - 1e-6 && y <= Math.max(yi, yj) + 1e-6) return true;
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

// ---------------------------------------------------------------------------------------------
// Example data: learning curves over seeds, as the study will have them.

const VARIANTS = ['softmax', 'dense', 'random (frozen)', 'linear', 'efficient', 'taylor', 'fixed', 'softmax+random mixture'];

function runs(variant, task, seeds = 5) {
  const rnd = mulberry32(variant * 131 + task * 7 + 1);
  const steps = Array.from({ length: 41 }, (_, i) => i * 50);
  return Array.from({ length: seeds }, () => {
    const rate = (0.002 + 0.0015 * variant) * (0.6 + 0.8 * rnd()), ceil = Math.min(1, 1.02 - variant * 0.08 - task * 0.05 - 0.06 * rnd());
    return steps.map((s) => [s, Math.min(1, 0.125 + (ceil - 0.125) * (1 - Math.exp(-s * rate)) + 0.01 * (rnd() - 0.5))]);
  });
}

/** Mean and 95 % t interval over seeds at each step, as lineChart takes them. */
function meanSeries(name, seedRuns, style) {
  const steps = seedRuns[0].map(([s]) => s);
  const cis = steps.map((_, k) => meanCI(seedRuns.map((r) => r[k][1])));
  return { name, style, points: steps.map((s, k) => [s, cis[k].mean]), band: steps.map((s, k) => [s, cis[k].lo, cis[k].hi]) };
}

const pct = (v) => `${Math.round(v * 100)} %`;

function examples() {
  const line = lineChart({
    title: 'copy: held-out accuracy over training (mean and 95 % interval over 5 seeds)',
    x: { label: 'training step' },
    y: { label: 'held-out accuracy', min: 0, max: 1, format: pct },
    series: VARIANTS.slice(0, 5).map((v, i) => meanSeries(v, runs(i, 1), i)),
    refs: [{ y: 0.125, label: 'chance (1/8)' }, { y: 0.9, label: '90 % goal' }],
    note: 'Shaded: 95 % Student t interval over seeds 1–5 (mean ± t₀.₉₇₅,₄·s/√5).',
  });
  const sizes = [16, 32, 64, 128, 256, 512, 1024];
  const points = pointsChart({
    title: 'recall: held-out accuracy against state size (mean and 95 % interval over 5 seeds)',
    x: { label: 'state size per head (floats)', log: 2 },
    y: { label: 'held-out accuracy', min: 0, max: 1, format: pct },
    series: ['softmax', 'linear', 'efficient', 'taylor'].map((name, i) => ({
      name,
      points: sizes.map((s) => {
        const rnd = mulberry32(s + i);
        const accs = Array.from({ length: 5 }, () => Math.min(1, Math.max(0, 0.1 + 0.14 * Math.log2(s / 8) * (1 - 0.2 * i) + 0.1 * (rnd() - 0.5))));
        const ci = meanCI(accs);
        return [s, ci.mean, ci.lo, ci.hi];
      }),
    })),
    refs: [{ y: 0.125, label: 'chance' }],
  });
  const bars = barChart({
    title: 'Transfer: accuracy after fine-tuning minus training from scratch',
    categories: ['copy', 'reverse', 'sort', 'recall', 'text'],
    x: { label: 'target task' },
    y: { label: 'gain (percentage points)' },
    series: ['softmax', 'dense', 'linear', 'random (frozen)', 'taylor', 'fixed', 'efficient'].map((name, i) => ({
      name,
      values: [0, 1, 2, 3, 4].map((c) => { const y = 10 * Math.sin(i + c * 1.3); return [y, y - 3 - (i % 3), y + 3 + (i % 3)]; }),
    })),
    refs: [{ y: 8, label: 'run-to-run noise' }],
  });
  const multiples = smallMultiples({
    title: 'Held-out accuracy by task (mean and 95 % interval over 5 seeds)',
    columns: 3,
    x: { label: 'training step' },
    y: { label: 'held-out accuracy', min: 0, max: 1, format: pct },
    panels: ['recall', 'copy', 'reverse', 'sort', 'text'].map((task, t) => ({
      title: task,
      series: VARIANTS.slice(0, 6).map((v, i) => meanSeries(v, runs(i, t), i)),
      refs: [{ y: 0.125, label: 'chance' }],
    })),
    note: 'Shaded: 95 % t interval over seeds. Every panel shares both axes.',
  });
  const loglog = lineChart({
    title: 'Loss against tokens seen (log–log)',
    x: { label: 'tokens seen', log: true },
    y: { label: 'held-out loss (nats)', log: true },
    series: ['softmax', 'linear', 'fixed'].map((name, i) => ({
      name,
      points: Array.from({ length: 60 }, (_, k) => { const x = 10 ** (1 + k / 10); return [x, 0.5 + (4 + i) * x ** -0.25]; }),
      band: Array.from({ length: 60 }, (_, k) => { const x = 10 ** (1 + k / 10), y = 0.5 + (4 + i) * x ** -0.25; return [x, y * 0.9, y * 1.1]; }),
    })),
  });
  return { line, points, bars, multiples, loglog };
}

// ---------------------------------------------------------------------------------------------

test('every chart type: well-formed, accessible, inside its viewBox, legend complete; written to test-artifacts/plots/', () => {
  const ex = examples();
  mkdirSync(ARTIFACTS, { recursive: true });
  const names = {
    line: VARIANTS.slice(0, 5), points: ['softmax', 'linear', 'efficient', 'taylor'],
    bars: ['softmax', 'dense', 'linear', 'random (frozen)', 'taylor', 'fixed', 'efficient'], multiples: VARIANTS.slice(0, 6),
    loglog: ['softmax', 'linear', 'fixed'],
  };
  const rsvg = spawnSync('rsvg-convert', ['--version']).status === 0;
  for (const [kind, svg] of Object.entries(ex)) {
    check(svg, `${kind} example`, { legendNames: names[kind] });
    const file = `${ARTIFACTS}${kind}.svg`;
    writeFileSync(file, svg);
    if (rsvg) {
      const r = spawnSync('rsvg-convert', ['-o', `${ARTIFACTS}${kind}.png`, file], { encoding: 'utf8' });
      assert.equal(r.status, 0, `rsvg-convert ${kind}.svg: ${r.stderr}`);
    }
  }
});

test('the same input gives the same bytes', () => {
  const a = examples(), b = examples();
  for (const k of Object.keys(a)) assert.equal(a[k], b[k], `${k}: two renders differ`);
});

test('log axes: decades over a wide range, 1-2-5 over a narrow one, powers of two for log: 2', () => {
  const wide = lineChart({ title: 'wide', x: { label: 'n', log: true }, y: { label: 'y' }, series: [{ name: 'a', points: [[1, 1], [1e6, 2]] }] });
  const svg = check(wide, 'lineChart(x 1 … 1e6, log)');
  const xt = tickValues(svg, 'x-ticks');
  assert.ok(xt.length >= 3, `lineChart(x 1 … 1e6, log): ${xt.length} ticks`);
  for (const t of xt) {
    const k = Math.log10(t.v);
    assert.ok(Math.abs(k - Math.round(k)) < 1e-12, `lineChart(x 1 … 1e6, log): tick "${t.label}" (${t.v}) is not a decade`);
  }
  // Decades are evenly spaced on the page.
  const gaps = xt.slice(1).map((t, i) => (t.x - xt[i].x) / Math.log10(t.v / xt[i].v));
  for (const g of gaps) assert.ok(Math.abs(g - gaps[0]) < 0.02, `lineChart(x 1 … 1e6, log): px per decade ${gaps.join(', ')}`);
  assert.deepEqual(xt.map((t) => t.v), [1, 10, 100, 1000, 1e4, 1e5, 1e6], 'lineChart(x 1 … 1e6, log) tick values');
  assert.deepEqual(xt.map((t) => t.label), ['10⁰', '10¹', '10²', '10³', '10⁴', '10⁵', '10⁶'], 'one notation for every label on the axis');

  // Many decades on a narrow axis: every other decade (or sparser), never a non-decade.
  const dense = lineChart({ title: 'dense', width: 360, x: { label: 'n', log: true }, y: { label: 'y', log: true }, series: [{ name: 'a', points: [[1e-3, 1e-9], [1e12, 1e9]] }] });
  const dsvg = check(dense, 'lineChart(x 1e-3 … 1e12, y 1e-9 … 1e9, width 360)');
  for (const cls of ['x-ticks', 'y-ticks']) {
    for (const t of tickValues(dsvg, cls)) {
      const k = Math.log10(t.v);
      assert.ok(Math.abs(k - Math.round(k)) < 1e-9, `dense log chart: ${cls} tick "${t.label}" is not a decade`);
    }
  }

  const narrow = lineChart({ title: 'narrow', x: { label: 'n', log: true }, y: { label: 'y' }, series: [{ name: 'a', points: [[3, 1], [400, 2]] }] });
  const nt = tickValues(parseXml(narrow, 'narrow'), 'x-ticks').map((t) => t.v);
  assert.deepEqual(nt, [2, 5, 10, 20, 50, 100, 200, 500], 'lineChart(x 3 … 400, log) ticks at 1-2-5');

  const pow2 = pointsChart({ title: 'pow2', x: { label: 'state', log: 2 }, y: { label: 'acc' }, series: [{ name: 'a', points: [[16, 0.1], [1024, 0.9]] }] });
  const pt = tickValues(check(pow2, 'pointsChart(x 16 … 1024, log: 2)'), 'x-ticks').map((t) => t.v);
  assert.deepEqual(pt, [16, 32, 64, 128, 256, 512, 1024], 'pointsChart(x 16 … 1024, log: 2) ticks');

  // Values ≤ 0 on a log axis are gaps, not errors or NaN coordinates.
  const gaps2 = lineChart({ title: 'gaps', x: { label: 'n', log: true }, y: { label: 'y', log: true }, series: [{ name: 'a', points: [[0, 1], [1, 0], [10, 5], [100, 50], [-3, 2], [1000, 500]] }] });
  check(gaps2, 'lineChart with zeros and negatives on log axes');
});

test('a band encloses its line', () => {
  const series = VARIANTS.slice(0, 4).map((v, i) => meanSeries(v, runs(i, 2), i));
  const svg = check(lineChart({ title: 'bands', x: { label: 'step' }, y: { label: 'acc', min: 0, max: 1 }, series }), 'lineChart(bands)');
  series.forEach((s, i) => {
    const groups = byClass(svg, `s${i}`);
    const bands = groups.flatMap((g) => byClass(g, 'band')).map((b) => parsePoints(b.attrs.points));
    const lines = groups.flatMap((g) => byClass(g, 'line')).map((l) => parsePoints(l.attrs.points));
    assert.ok(bands.length >= 1 && lines.length >= 1, `series "${s.name}": ${bands.length} bands, ${lines.length} lines`);
    for (const line of lines) {
      for (const p of line) assert.ok(bands.some((b) => inPolygon(p, b)), `series "${s.name}": line point (${p}) lies outside its band`);
    }
  });
});

test('nothing outside the plot when the data go past a fixed range; gaps stay gaps', () => {
  const wild = [[0, -0.5], [1, 0.5], [2, 1.7], [3, NaN], [4, 0.4], [5, null], [6, 2], [7, -1], [8, 0.5]];
  const band = wild.map(([x, y]) => [x, y - 0.3, y + 0.3]);
  const svg = check(lineChart({
    title: 'clipped', x: { label: 'x', min: 0.5, max: 7.5 }, y: { label: 'y', min: 0, max: 1 },
    series: [{ name: 'wild', points: wild, band }, { name: 'empty', points: [] }], refs: [{ y: 5, label: 'off the chart' }, { x: 3, label: 'x ref' }],
  }), 'lineChart(data beyond min/max)', { legendNames: ['wild', 'empty'] });
  // NaN at x = 3 and null at x = 5 split the line: 0–2 (leaving the top), 6–7 (crossing the
  // plot) and x = 4 alone, which is drawn as a dot because it has no neighbour to join.
  const s0 = byClass(svg, 's0').at(-1);
  assert.equal(byClass(s0, 'line').length, 2, 'lineChart(gaps): pieces of line');
  assert.equal(byClass(s0, 'isolated').length, 1, 'lineChart(gaps): the point between two gaps is a dot');
  // The ref outside the y range is not drawn; the x ref is.
  assert.ok(!textOf(svg).includes('off the chart'), 'a ref outside the range is not drawn');
  assert.ok(textOf(svg).includes('x ref'), 'an x ref is labelled');

  const pts = pointsChart({
    title: 'clipped points', x: { label: 'x' }, y: { label: 'y', min: 0, max: 1 },
    series: [{ name: 'a', points: [[1, 0.5, -1, 2], [2, 1.5, 1.2, 1.8], { x: 3, y: 0.2 }, [4, NaN, 0, 1]] }, { name: 'b', points: [[1, 0.4, 0.3, 0.5]] }],
  });
  check(pts, 'pointsChart(error bars beyond min/max)', { legendNames: ['a', 'b'] });
  const bars = barChart({ title: 'clipped bars', categories: ['a', 'b'], y: { label: 'y', min: -1, max: 1 }, series: [{ name: 's', values: [[3, 2, 4], [-5, -6, -4]] }, { name: 't', values: [null, 0.5] }] });
  check(bars, 'barChart(values beyond min/max)', { legendNames: ['s', 't'] });
});

test('text is escaped and long names wrap instead of leaving the picture', () => {
  const nasty = `a<b & "c" 'd' > e`;
  const long = 'softmax attention with a very long descriptive name that will certainly not fit on one legend line';
  const svgText = lineChart({
    title: `Title with <tags> & "quotes" — ${'very long '.repeat(12)}`, subtitle: 'sub & <sub>',
    x: { label: 'x & <x>' }, y: { label: 'y label that is also rather long, to test wrapping of the rotated axis title' },
    series: [{ name: nasty, points: [[0, 0], [1, 1]] }, { name: long, points: [[0, 1], [1, 0]] }],
    refs: [{ y: 0.5, label: '<ref> & co' }],
  });
  assert.ok(svgText.includes('a&lt;b &amp; &quot;c&quot; &#39;d&#39; &gt; e'), 'the name is escaped in the SVG text');
  const svg = check(svgText, 'lineChart(names needing escapes)', { legendNames: [nasty] });
  const legend = byClass(svg, 'legend')[0];
  assert.ok(find(legend, (n) => n.name === 'text').map(textOf).join(' ').includes(long), 'a long name wraps over several legend lines, words intact');
  // Every series' <title> is its name.
  assert.equal(textOf(byClass(svg, 's0')[0].children[0]), nasty);

  const bars = barChart({
    title: 'long categories', categories: ['a category name that is long', 'another quite long category', 'short'],
    y: { label: 'v' }, series: [{ name: 'x', values: [1, 2, 3] }], width: 420,
  });
  check(bars, 'barChart(long categories, width 420)', { legendNames: ['x'] });
});

test('small multiples share axes and styles; tick labels only on the outer panels', () => {
  const panels = ['recall', 'copy', 'reverse', 'sort', 'text'].map((task, t) => ({
    title: task, series: VARIANTS.slice(0, 3).map((v, i) => meanSeries(v, runs(i, t, 3))),
  }));
  // One panel lists its series in another order: styles still follow names.
  panels[1].series.reverse();
  const svg = check(smallMultiples({ title: 'grid', columns: 3, x: { label: 'step' }, y: { label: 'acc', min: 0, max: 1 }, panels }), 'smallMultiples(5 panels, 3 columns)', { legendNames: VARIANTS.slice(0, 3) });
  const ps = byClass(svg, 'panel');
  assert.equal(ps.length, 5);
  const colourOf = (panel, name) => {
    const g = byClass(panel, 'series').find((s) => textOf(s.children[0]) === name && byClass(s, 'line').length);
    return byClass(g, 'line')[0].attrs.stroke;
  };
  for (const v of VARIANTS.slice(0, 3)) {
    const colours = new Set(ps.map((p) => colourOf(p, v)));
    assert.equal(colours.size, 1, `smallMultiples: "${v}" has colours ${[...colours]} across panels`);
  }
  const labelled = (p, cls) => find(byClass(p, cls)[0], (n) => n.name === 'text').length > 0;
  // 3 columns, 5 panels: y labels on panels 0 and 3; x labels on panels 2, 3 and 4 (none below them).
  assert.deepEqual(ps.map((p) => labelled(p, 'y-ticks')), [true, false, false, true, false], 'y tick labels on the first column');
  assert.deepEqual(ps.map((p) => labelled(p, 'x-ticks')), [false, false, true, true, true], 'x tick labels where no panel is below');
  // Shared axes: the same tick labels in every panel.
  const yTicks = ps.map((p) => byClass(p, 'y-ticks')[0].children.filter((c) => c.name === 'line').map((l) => l.attrs.y1 - byClass(p, 'axes')[0].children[0].attrs.y).join());
  assert.equal(new Set(yTicks).size, 1, 'the same y ticks in every panel');

  const pts = smallMultiples({
    title: 'points grid', kind: 'points', x: { label: 'state', log: 2 }, y: { label: 'acc' },
    panels: [{ title: 'a', series: [{ name: 'p', points: [[16, 0.1, 0, 0.2], [64, 0.5, 0.4, 0.6]] }, { name: 'q', points: [[16, 0.2], [64, 0.3]] }] }, { title: 'b', series: [{ name: 'q', points: [[32, 0.9, 0.8, 1]] }] }],
  });
  check(pts, 'smallMultiples(kind points)', { legendNames: ['p', 'q'] });
});

test('grouped bars: zero in range, negative bars hang below it', () => {
  const svg = check(barChart({ title: 'gains', categories: ['a', 'b'], y: { label: 'gain' }, series: [{ name: 'up', values: [[5, 4, 6], 2] }, { name: 'down', values: [-3, { y: -1, lo: -2, hi: 0 }] }] }), 'barChart(±)', { legendNames: ['up', 'down'] });
  const zero = byClass(svg, 'zero')[0];
  assert.ok(zero, 'barChart(±): a zero line');
  const y0 = Number(zero.attrs.y1);
  const barsOf = (i) => byClass(byClass(svg, `s${i}`)[0], 'bar');
  for (const b of barsOf(0)) assert.ok(Math.abs(Number(b.attrs.y) + Number(b.attrs.height) - y0) < 1.01, 'positive bars stand on zero');
  for (const b of barsOf(1)) assert.ok(Math.abs(Number(b.attrs.y) - y0) < 1.01, 'negative bars hang from zero');
  assert.throws(() => barChart({ categories: ['a'], y: { log: true }, series: [{ name: 's', values: [1] }] }), /log y axis/);
});

test('styles: colour-blind-safe palette, 42 distinct colour–dash pairs, nothing undefined', () => {
  // Okabe & Ito (2008), "Color Universal Design", without yellow #F0E442.
  assert.deepEqual(PALETTE, ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000']);
  const pairs = new Set(Array.from({ length: 42 }, (_, i) => `${styleFor(i).color}/${styleFor(i).dash}`));
  assert.equal(pairs.size, 42, 'styleFor(0 … 41) are distinct');
  assert.equal(new Set(DASHES).size, DASHES.length, 'dash patterns are distinct');
  // Charts with no data still render.
  check(lineChart({ title: 'empty', series: [] }), 'lineChart(no series)');
  check(pointsChart({ title: 'empty', series: [{ name: 'only', points: [] }] }), 'pointsChart(empty series)', { legendNames: ['only'] });
  check(barChart({ title: 'empty', categories: [], series: [] }), 'barChart(nothing)');
  check(smallMultiples({ title: 'empty', panels: [] }), 'smallMultiples(no panels)');
});

test('legend placement: right, bottom, none; a wide legend moves below the plot', () => {
  const series = VARIANTS.map((v, i) => ({ name: v, points: [[0, i], [1, i + 1]] }));
  const below = (svgText, what) => {
    const svg = check(svgText, what, { legendNames: VARIANTS });
    const f = frames(svg)[0];
    const box = bbox(extents(byClass(svg, 'legend')[0]).flatMap((e) => e.pts));
    return box.y0 > f.y1;
  };
  assert.equal(below(lineChart({ title: 'r', series }), 'lineChart(legend right)'), false, 'the default legend is at the right');
  assert.equal(below(lineChart({ title: 'b', series, legend: 'bottom' }), 'lineChart(legend bottom)'), true, "legend: 'bottom' is below the plot");
  assert.equal(below(lineChart({ title: 'w', width: 420, series: series.map((s) => ({ ...s, name: `${s.name} (a name long enough to crowd)` })) }), 'lineChart(wide legend, width 420)'), true, 'a legend too wide for the right goes below');
  const none = parseXml(lineChart({ title: 'n', series, legend: 'none' }), 'lineChart(legend none)');
  assert.equal(byClass(none, 'legend').length, 0, "legend: 'none' draws no legend");
  check(smallMultiples({ title: 'sm right', legend: 'right', panels: [{ title: 'a', series }, { title: 'b', series }] }), 'smallMultiples(legend right)', { legendNames: VARIANTS });
  check(barChart({ title: 'bars bottom', legend: 'bottom', categories: ['a', 'b'], series: VARIANTS.map((name, i) => ({ name, values: [i, -i] })) }), 'barChart(legend bottom)', { legendNames: VARIANTS });
});
