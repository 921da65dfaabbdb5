// svg.mjs — small, dependency-free SVG charts for the experiment reports: plain SVG text that
// reads well in a browser, on GitHub and printed, and the same bytes for the same input.
//
// Every chart takes { title, subtitle, note, desc, width = 720, height, id, legend, x, y, refs }
// and returns the SVG as a string (write it to a .svg file, or inline it in HTML):
//
//   lineChart({ …, series: [{ name, points: [[x, y]], band: [[x, lo, hi]], markers, style, color, dash }] })
//     One line per series (the mean over seeds, say) with an optional shaded band (its 95 %
//     interval); markers: true also marks each point. A point with gaps on both sides is a dot.
//   pointsChart({ …, series: [{ name, points: [[x, y, lo, hi]] | [{ x, y, lo, hi }], line }], dodge })
//     Markers with error bars (lo, hi optional), joined by a thin line unless line: false; series
//     are spread `dodge` px apart (default 6) so bars at the same x do not overlap, and the axes
//     keep a few px clear at their ends so no marker is cut by the frame.
//   barChart({ …, categories: ['copy', …], series: [{ name, values: [y | [y, lo, hi] | { y, lo, hi } | null] }] })
//     Grouped bars, one group per category and one bar per series (hatched as a second cue), with
//     error bars; the y axis always includes 0 and negative bars hang below it; x: { label }
//     titles the categories, whose names wrap (or turn 45° if a word is too long for its group).
//   smallMultiples({ …, kind: 'line' | 'points', panels: [{ title, series, refs }], columns, panelHeight = 170 })
//     A grid of panels sharing both axes (tick labels on the outer panels only) and one legend
//     (legend default 'bottom'); a series keeps its colour, dash and marker in every panel,
//     matched by name. opts.refs are drawn in every panel, panel.refs in that one.
//
//   Axes x, y: { label, min, max, log: false | true | 2, ticks: [v…], format: (v) => string, nice = true }
//     Linear axes get 1-2-5 steps, the range rounded outwards to a tick unless min/max are given.
//     log: true is base 10: ticks at 1-2-5 values when the range spans ≤ ~3 decades and they fit,
//     else at decades (every one, or every 2nd, 3rd… when crowded) with unlabelled minor ticks at
//     2…9; under a decade, linear steps. Labels are plain (0.01 … 20000) unless the range reaches
//     10⁵ or below 10⁻³, then all are 10ᵏ / m×10ᵏ. log: 2 puts ticks at powers of two (state
//     sizes). Values ≤ 0 on a log axis are gaps. `ticks` replaces the computed ticks, `format`
//     the labels (e.g. v => `${100 * v} %`). Bar charts take a linear y axis only.
//   refs: [{ y, label }] or [{ x, label }]: a thin dotted grey line (chance, a goal) under the data;
//     its label, on a white halo over the data, goes to whichever end of the line covers the
//     fewest data points. Refs count when an axis range is chosen; refs outside a fixed range are
//     not drawn.
//   legend: 'right' (default; moves below the plot when it would leave the plot < 60 % of the
//     width), 'bottom' or 'none'. Long names wrap; the legend never overlaps a plot.
//   Styles: series i gets styleFor(i): a colour of the Okabe–Ito palette (colour-blind safe; its
//     yellow is left out, too light on white), a dash pattern, a marker and a bar hatch, cycling
//     with periods 7, 6, 7 and 6, so 42 series get distinct colour–dash pairs, and neighbours
//     differ in dash (and marker, hatch) too for readers who cannot tell the colours apart.
//     Within a chart a series' index is the order its name first appears; `style: k` pins it to
//     styleFor(k) (one variant, one look across all charts); color, dash, marker, hatch override.
//   Missing data: non-finite values (NaN, null, undefined) break lines and bands into pieces and
//     drop points. Everything is clipped to the plot area geometrically (no clipPath), so every
//     coordinate written is inside the plot and the viewBox, whatever min/max cut off.
//
// Text: 12–16 px (never below 12 at 100 %) in Helvetica/Arial, falling back to Liberation Sans or
// DejaVu Sans; widths are estimated from those fonts' advance widths (the wider of the two per
// character), so margins leave room for labels whichever font renders them. All text is
// XML-escaped (esc). role="img" with <title> and <desc> (desc: the chart type, axes and series,
// then opts.desc or the subtitle) make the chart accessible; each series is a
// <g class="series sK"> with its own <title> (a tooltip in browsers). Also exported: styleFor,
// PALETTE, DASHES, MARKERS, HATCHES, esc, textWidth(s, size, bold) and wrapText(s, size, maxW, bold).
//
// A plain ES module: no DOM, no Node APIs.

const FONT = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif";
const SIZE = { title: 16, subtitle: 13, panel: 13, label: 13, tick: 12, legend: 12, ref: 12, note: 12 };
const LINE_H = { title: 20, subtitle: 17, label: 16, legend: 16, note: 16, tick: 15 };
const INK = '#222222', MUTED = '#555555', GRID = '#e4e4e4', REF = '#707070';

/** Okabe & Ito (2008) colour-blind-safe palette, without its yellow. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
/** Dash patterns (stroke-dasharray), the second cue; '' is solid. */
export const DASHES = ['', '8 3', '2 2.5', '10 3 2 3', '5 5', '12 3 2 3 2 3'];
/** Marker shapes for points charts. */
export const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'triangle-down', 'plus', 'hexagon'];
/** Bar hatches: none, diagonal ╱, diagonal ╲, dots, horizontal, cross-hatch. */
export const HATCHES = ['none', 'diag', 'back', 'dots', 'horiz', 'cross'];

/** The look of series number i: { color, dash, marker, hatch }. */
export function styleFor(i) {
  const k = Math.max(0, Math.floor(i));
  return { color: PALETTE[k % PALETTE.length], dash: DASHES[k % DASHES.length], marker: MARKERS[k % MARKERS.length], hatch: HATCHES[k % HATCHES.length] };
}

// ---------------------------------------------------------------------------------------------
// Text

/** Escapes text for XML content and attribute values; drops characters XML 1.0 forbids. */
export function esc(s) {
  return String(s)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

// Advance widths in 1/1000 em of ASCII 32…126: the larger of DejaVu Sans and Liberation Sans
// (= Arial/Helvetica metrics), regular and bold, read from their hmtx tables.
const W_REG = [318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 556, 1015, 684, 686, 722, 770, 667, 611, 778, 752, 295, 500, 667, 557, 863, 748, 787, 667, 787, 722, 667, 611, 732, 684, 989, 685, 667, 685, 390, 337, 390, 838, 556, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838];
const W_BOLD = [348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365, 696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 611, 1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 556, 775, 637, 995, 837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 556, 500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687, 716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838];
const W_OTHER = { '–': 556, '—': 1000, '−': 838, '×': 838, '±': 838, '≥': 838, '≤': 838, 'α': 687, '·': 380, '…': 1000, '’': 380, '⁻': 528 };

/** Estimated width in px of s at font size `size` (an upper bound for the fonts named above). */
export function textWidth(s, size, bold = false) {
  const table = bold ? W_BOLD : W_REG;
  let w = 0;
  for (const ch of String(s)) {
    const c = ch.codePointAt(0);
    if (c >= 32 && c <= 126) w += table[c - 32];
    else if (W_OTHER[ch]) w += W_OTHER[ch];
    else if ('⁰¹²³⁴⁵⁶⁷⁸⁹'.includes(ch)) w += 438;
    else w += 1000;
  }
  return (w * size) / 1000;
}

/** Greedy word wrap to maxW px; words longer than a line are broken between characters. */
export function wrapText(s, size, maxW, bold = false) {
  const lines = [];
  for (const para of String(s).split('\n')) {
    let cur = '';
    for (let word of para.split(/ +/)) {
      while (textWidth(word, size, bold) > maxW && word.length > 1) {
        // Break the word: the longest prefix that fits on a line of its own.
        if (cur) { lines.push(cur); cur = ''; }
        let k = word.length - 1;
        while (k > 1 && textWidth(word.slice(0, k), size, bold) > maxW) k--;
        lines.push(word.slice(0, k));
        word = word.slice(k);
      }
      const next = cur ? `${cur} ${word}` : word;
      if (cur && textWidth(next, size, bold) > maxW) { lines.push(cur); cur = word; } else cur = next;
    }
    lines.push(cur);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// SVG output helpers

/** A coordinate with at most 2 decimals, never "-0". */
function n2(v) {
  const r = Math.round(v * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

function attrs(a) {
  let s = '';
  for (const [k, v] of Object.entries(a)) {
    if (v === undefined || v === null || v === '') continue;
    s += ` ${k}="${typeof v === 'number' ? n2(v) : esc(v)}"`;
  }
  return s;
}

const el = (name, a) => `<${name}${attrs(a)}/>`;

function textEl(x, y, s, { size = SIZE.tick, anchor = 'start', weight, fill = INK, transform, cls, halo } = {}) {
  const a = { x, y, 'font-size': size, 'text-anchor': anchor === 'start' ? undefined : anchor, 'font-weight': weight, fill, transform, class: cls };
  if (halo) Object.assign(a, { stroke: 'white', 'stroke-width': 4, 'stroke-linejoin': 'round', 'paint-order': 'stroke' });
  return `<text${attrs(a)}>${esc(s)}</text>`;
}

const pts = (ps) => ps.map(([x, y]) => `${n2(x)},${n2(y)}`).join(' ');

function slug(s) {
  const t = String(s ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `chart-${t || 'untitled'}`;
}

// ---------------------------------------------------------------------------------------------
// Numbers and ticks

const clean = (v) => +v.toPrecision(12);
const SUP = { 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹', '-': '⁻' };
const minus = (s) => s.replace(/^-/, '−');

function niceStep(raw) {
  const e = Math.floor(Math.log10(raw));
  const f = raw / 10 ** e;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * 10 ** e;
}

function linearLabel(v, step) {
  const dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const s = Math.abs(v) < step / 1e6 ? (0).toFixed(dec) : v.toFixed(dec);
  return minus(s);
}

/** A log-axis label: plain (0.01, 250, 20000), or with `sci` 10ᵏ and m×10ᵏ. */
function logLabel(v, sci) {
  if (!sci) return String(clean(v));
  const e = Math.floor(Math.log10(v) + 1e-9);
  const m = clean(v / 10 ** e);
  const pow = `10${String(e).split('').map((c) => SUP[c]).join('')}`;
  return m === 1 ? pow : `${m}×${pow}`;
}

/** Whether a log axis over these values labels its ticks 10ᵏ: when any is ≥ 10⁵ or < 10⁻³. */
const needsSci = (ticks) => ticks.some((v) => v >= 1e5 || v < 1e-3);

/** Finite values (positive ones for a log axis). */
function usable(values, log) {
  return values.filter((v) => typeof v === 'number' && Number.isFinite(v) && (!log || v > 0));
}

function floor125(v) {
  const e = Math.floor(Math.log10(v));
  for (const m of [5, 2, 1]) if (m * 10 ** e <= v * (1 + 1e-9)) return clean(m * 10 ** e);
  return clean(10 ** (e - 1) * 5);
}

function ceil125(v) {
  const e = Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * 10 ** e >= v * (1 - 1e-9)) return clean(m * 10 ** e);
  return clean(10 ** (e + 1));
}

/**
 * An axis: domain, ticks and labels for `values` on an axis `length` px long. `gap(labels)` is the
 * room a tick needs (label width + margin horizontally, line height vertically), used to thin ticks.
 */
function makeScale(spec, values, length, vertical, { zero = false } = {}) {
  spec = spec ?? {};
  const log = spec.log === true ? 10 : spec.log === 2 ? 2 : 0;
  if (log && zero) throw new RangeError('svg: a bar chart cannot have a log y axis');
  const fmtUser = typeof spec.format === 'function' ? spec.format : null;
  const need = (label) => (vertical ? SIZE.tick + 10 : textWidth(label, SIZE.tick) + 12);
  let vs = usable(values, log);
  if (zero) vs = vs.concat([0]);
  let lo = vs.length ? Math.min(...vs) : (log ? 1 : 0);
  let hi = vs.length ? Math.max(...vs) : (log ? 10 : 1);
  const hasMin = Number.isFinite(spec.min) && (!log || spec.min > 0);
  const hasMax = Number.isFinite(spec.max) && (!log || spec.max > 0);
  if (hasMin) lo = spec.min;
  if (hasMax) hi = spec.max;
  if (hasMin && !hasMax && hi <= lo) hi = log ? lo * 10 : lo + 1;
  if (hasMax && !hasMin && lo >= hi) lo = log ? hi / 10 : hi - 1;
  if (lo > hi) throw new RangeError(`svg: axis "${spec.label ?? ''}" has min ${lo} > max ${hi}`);
  if (lo === hi) {
    if (log) { lo /= 2; hi *= 2; } else { const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1; lo -= pad; hi += pad; }
  }
  const nice = spec.nice !== false;
  let ticks = [], minor = [], labelOf;

  if (!log) {
    let target = Math.max(2, Math.min(10, Math.round(length / (vertical ? 48 : 90))));
    for (;;) {
      const step = niceStep((hi - lo) / target);
      const a = nice && !hasMin ? clean(Math.floor(lo / step + 1e-9) * step) : lo;
      const b = nice && !hasMax ? clean(Math.ceil(hi / step - 1e-9) * step) : hi;
      const t = [];
      for (let k = Math.ceil(a / step - 1e-9); k <= Math.floor(b / step + 1e-9); k++) t.push(clean(k * step));
      const lab = (v) => (fmtUser ? String(fmtUser(v)) : linearLabel(v, step));
      const per = t.length > 1 ? length / ((b - a) / step) : length;
      if (target <= 2 || t.every((v) => need(lab(v)) <= per)) { lo = a; hi = b; ticks = t; labelOf = lab; break; }
      target--;
    }
  } else {
    const L = (v) => Math.log(v) / Math.log(log);
    if (nice && log === 10 && hi / lo < 10) {
      // Less than a decade: round to a linear step, so the data fill the axis.
      const step = niceStep((hi - lo) / 4);
      if (!hasMin && Math.floor(lo / step) * step > 0) lo = clean(Math.floor(lo / step) * step);
      if (!hasMax) hi = clean(Math.ceil(hi / step) * step);
    } else if (nice) {
      if (!hasMin) lo = log === 2 ? 2 ** Math.floor(L(lo) + 1e-9) : floor125(lo);
      if (!hasMax) hi = log === 2 ? 2 ** Math.ceil(L(hi) - 1e-9) : ceil125(hi);
    }
    labelOf = (v) => (fmtUser ? String(fmtUser(v)) : logLabel(v, needsSci([lo, hi])));
    const pxPer = length / (L(hi) - L(lo)); // px per decade (or per octave)
    const k0 = Math.ceil(L(lo) - 1e-9), k1 = Math.floor(L(hi) + 1e-9);
    const powers = [];
    for (let k = k0; k <= k1; k++) powers.push(k);
    const widest = (vals) => Math.max(0, ...vals.map((v) => need(labelOf(v))));
    if (log === 2) {
      let s = 1;
      while (s * pxPer < widest(powers.map((k) => 2 ** k)) && s < powers.length) s++;
      ticks = powers.filter((k) => (k - k0) % s === 0).map((k) => clean(2 ** k));
    } else {
      const decades = L(hi) - L(lo);
      const t125 = [];
      for (let k = Math.floor(L(lo)) ; k <= Math.ceil(L(hi)); k++) {
        for (const m of [1, 2, 5]) { const v = clean(m * 10 ** k); if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t125.push(v); }
      }
      const fits125 = Math.log10(2) * pxPer >= widest(t125);
      if (decades <= 3.01 && fits125 && t125.length >= 2) {
        ticks = t125;
      } else if (powers.length >= 2) {
        let s = 1;
        while (s * pxPer < widest(powers.map((k) => 10 ** k)) && s < powers.length) s++;
        ticks = powers.filter((k) => (k - k0) % s === 0).map((k) => clean(10 ** k));
        if (s === 1 && pxPer >= 40) {
          for (let k = k0 - 1; k <= k1; k++) {
            for (let m = 2; m <= 9; m++) { const v = clean(m * 10 ** k); if (v > lo * (1 + 1e-9) && v < hi * (1 - 1e-9)) minor.push(v); }
          }
        }
      } else {
        // Less than a decade and 1-2-5 do not fit: linear-style ticks inside the range.
        const step = niceStep((hi - lo) / 4);
        for (let k = Math.ceil(lo / step - 1e-9); k <= Math.floor(hi / step + 1e-9); k++) ticks.push(clean(k * step));
        labelOf = (v) => (fmtUser ? String(fmtUser(v)) : linearLabel(v, step));
      }
    }
  }
  if (Array.isArray(spec.ticks)) {
    ticks = usable(spec.ticks, log).filter((v) => v >= lo - 1e-12 * Math.abs(lo) && v <= hi + 1e-12 * Math.abs(hi));
    minor = [];
    const sci = needsSci(ticks);
    if (!fmtUser) labelOf = (v) => (log ? logLabel(v, sci) : minus(String(clean(v))));
  }
  const tr = log ? (v) => Math.log(v) : (v) => v;
  const t0 = tr(lo), t1 = tr(hi);
  return {
    log, lo, hi, ticks, minor, label: labelOf, spec,
    /** Position in [0, 1] along the axis, NaN for values the axis cannot show. */
    t: (v) => (typeof v === 'number' && Number.isFinite(v) && (!log || v > 0) ? (tr(v) - t0) / (t1 - t0) : NaN),
  };
}

// ---------------------------------------------------------------------------------------------
// Clipping (so every coordinate written is inside the plot area)

/** Liang–Barsky: the part of segment p→q inside rectangle r, or null. */
function clipSegment(p, q, r) {
  let t0 = 0, t1 = 1;
  const dx = q[0] - p[0], dy = q[1] - p[1];
  for (const [pp, qq] of [[-dx, p[0] - r.x0], [dx, r.x1 - p[0]], [-dy, p[1] - r.y0], [dy, r.y1 - p[1]]]) {
    if (pp === 0) { if (qq < 0) return null; continue; }
    const t = qq / pp;
    if (pp < 0) { if (t > t1) return null; if (t > t0) t0 = t; } else { if (t < t0) return null; if (t < t1) t1 = t; }
  }
  return [t0 === 0 ? p : [p[0] + t0 * dx, p[1] + t0 * dy], t1 === 1 ? q : [p[0] + t1 * dx, p[1] + t1 * dy]];
}

/** A polyline with gaps (null points) clipped to r: a list of runs of ≥ 2 points. */
function clipPolyline(points, r) {
  const runs = [];
  let cur = null;
  const end = () => { if (cur && cur.length >= 2) runs.push(cur); cur = null; };
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1], b = points[i];
    if (!a || !b) { end(); continue; }
    const s = clipSegment(a, b, r);
    if (!s) { end(); continue; }
    if (!cur || cur[cur.length - 1] !== s[0]) { end(); cur = [s[0]]; }
    cur.push(s[1]);
    if (s[1] !== b) end();
  }
  end();
  return runs;
}

/** Sutherland–Hodgman: polygon clipped to rectangle r. */
function clipPolygon(poly, r) {
  const edges = [
    [(p) => p[0] >= r.x0, (p, q) => [r.x0, p[1] + ((q[1] - p[1]) * (r.x0 - p[0])) / (q[0] - p[0])]],
    [(p) => p[0] <= r.x1, (p, q) => [r.x1, p[1] + ((q[1] - p[1]) * (r.x1 - p[0])) / (q[0] - p[0])]],
    [(p) => p[1] >= r.y0, (p, q) => [p[0] + ((q[0] - p[0]) * (r.y0 - p[1])) / (q[1] - p[1]), r.y0]],
    [(p) => p[1] <= r.y1, (p, q) => [p[0] + ((q[0] - p[0]) * (r.y1 - p[1])) / (q[1] - p[1]), r.y1]],
  ];
  let out = poly;
  for (const [inside, cut] of edges) {
    const inp = out;
    out = [];
    for (let i = 0; i < inp.length; i++) {
      const cur = inp[i], prev = inp[(i + inp.length - 1) % inp.length];
      if (inside(cur)) { if (!inside(prev)) out.push(cut(prev, cur)); out.push(cur); } else if (inside(prev)) out.push(cut(prev, cur));
    }
    if (!out.length) break;
  }
  return out;
}

const inRect = (p, r) => p[0] >= r.x0 - 1e-9 && p[0] <= r.x1 + 1e-9 && p[1] >= r.y0 - 1e-9 && p[1] <= r.y1 + 1e-9;

// ---------------------------------------------------------------------------------------------
// Marks

function markerEl(shape, x, y, color, size = 4.5) {
  const s = size;
  const common = { fill: color, stroke: 'white', 'stroke-width': 1 };
  const poly = (ps) => el('polygon', { points: pts(ps.map(([a, b]) => [x + a, y + b])), ...common });
  switch (shape) {
    case 'square': return el('rect', { x: x - s * 0.85, y: y - s * 0.85, width: s * 1.7, height: s * 1.7, ...common });
    case 'triangle': return poly([[0, -s * 1.2], [s * 1.1, s * 0.75], [-s * 1.1, s * 0.75]]);
    case 'triangle-down': return poly([[0, s * 1.2], [s * 1.1, -s * 0.75], [-s * 1.1, -s * 0.75]]);
    case 'diamond': return poly([[0, -s * 1.25], [s * 1.1, 0], [0, s * 1.25], [-s * 1.1, 0]]);
    case 'plus': {
      const a = s * 1.2, b = s * 0.42;
      return poly([[-b, -a], [b, -a], [b, -b], [a, -b], [a, b], [b, b], [b, a], [-b, a], [-b, b], [-a, b], [-a, -b], [-b, -b]]);
    }
    case 'hexagon': return poly([0, 1, 2, 3, 4, 5].map((k) => [s * 1.1 * Math.cos((Math.PI / 3) * k), s * 1.1 * Math.sin((Math.PI / 3) * k)]));
    default: return el('circle', { cx: x, cy: y, r: s, ...common });
  }
}

function hatchDefs(id, used) {
  const out = [];
  for (const h of used) {
    const pid = `${id}-hatch-${h}`;
    const line = (x1, y1, x2, y2) => el('line', { x1, y1, x2, y2, stroke: 'white', 'stroke-width': 1.6, 'stroke-opacity': 0.75 });
    let body;
    switch (h) {
      case 'diag': body = `<pattern${attrs({ id: pid, patternUnits: 'userSpaceOnUse', width: 7, height: 7, patternTransform: 'rotate(45)' })}>${line(0, 0, 0, 7)}</pattern>`; break;
      case 'back': body = `<pattern${attrs({ id: pid, patternUnits: 'userSpaceOnUse', width: 7, height: 7, patternTransform: 'rotate(-45)' })}>${line(0, 0, 0, 7)}</pattern>`; break;
      case 'horiz': body = `<pattern${attrs({ id: pid, patternUnits: 'userSpaceOnUse', width: 7, height: 6 })}>${line(0, 3, 7, 3)}</pattern>`; break;
      case 'cross': body = `<pattern${attrs({ id: pid, patternUnits: 'userSpaceOnUse', width: 8, height: 8, patternTransform: 'rotate(45)' })}>${line(0, 0, 0, 8)}${line(0, 0, 8, 0)}</pattern>`; break;
      case 'dots': body = `<pattern${attrs({ id: pid, patternUnits: 'userSpaceOnUse', width: 6, height: 6 })}>${el('circle', { cx: 3, cy: 3, r: 1.3, fill: 'white', 'fill-opacity': 0.85 })}</pattern>`; break;
      default: continue;
    }
    out.push(body);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Series normalisation

function num(v) { return typeof v === 'number' && Number.isFinite(v) ? v : NaN; }

/** Points of a points-chart series as { x, y, lo, hi } (NaN where missing). */
function normPoints(points) {
  return (points ?? []).map((p) => (Array.isArray(p)
    ? { x: num(p[0]), y: num(p[1]), lo: num(p[2]), hi: num(p[3]) }
    : { x: num(p?.x), y: num(p?.y), lo: num(p?.lo), hi: num(p?.hi) }));
}

function normBar(v) {
  if (v === null || v === undefined) return { y: NaN, lo: NaN, hi: NaN };
  if (typeof v === 'number') return { y: num(v), lo: NaN, hi: NaN };
  if (Array.isArray(v)) return { y: num(v[0]), lo: num(v[1]), hi: num(v[2]) };
  return { y: num(v.y), lo: num(v.lo), hi: num(v.hi) };
}

/** Styles for series: by `style`, else by the order names first appear in `names`. */
function styler(names) {
  const index = new Map();
  for (const n of names) if (!index.has(n)) index.set(n, index.size);
  return (s) => {
    const base = styleFor(Number.isInteger(s.style) ? s.style : index.get(s.name) ?? 0);
    return { ...base, color: s.color ?? base.color, dash: s.dash ?? base.dash, marker: s.marker ?? base.marker, hatch: s.hatch ?? base.hatch };
  };
}

function xValues(kind, series) {
  const v = [];
  for (const s of series) {
    if (kind === 'line') { for (const p of s.points ?? []) v.push(p?.[0]); for (const b of s.band ?? []) v.push(b?.[0]); } else for (const p of normPoints(s.points)) v.push(p.x);
  }
  return v;
}

function yValues(kind, series) {
  const v = [];
  for (const s of series) {
    if (kind === 'line') { for (const p of s.points ?? []) v.push(p?.[1]); for (const b of s.band ?? []) v.push(b?.[1], b?.[2]); } else for (const p of normPoints(s.points)) v.push(p.y, p.lo, p.hi);
  }
  return v;
}

const refValues = (refs, key) => (refs ?? []).filter((r) => r && key in r).map((r) => r[key]);

// ---------------------------------------------------------------------------------------------
// Layout pieces

/** Title, subtitle: lines and height. */
function header(opts, W) {
  const title = opts.title ? wrapText(opts.title, SIZE.title, W - 24, true) : [];
  const sub = opts.subtitle ? wrapText(opts.subtitle, SIZE.subtitle, W - 24) : [];
  const out = [];
  let y = 10;
  for (const l of title) { y += LINE_H.title; out.push(textEl(12, y - 4, l, { size: SIZE.title, weight: 'bold', cls: 'title' })); }
  for (const l of sub) { y += LINE_H.subtitle; out.push(textEl(12, y - 4, l, { size: SIZE.subtitle, fill: MUTED, cls: 'subtitle' })); }
  return { out, height: y + 10 };
}

/** Legend items: { name, style, kind: 'line' | 'points' | 'bar', band }. */
function legendBox(items, maxTextW) {
  const rows = items.map((it) => ({ ...it, lines: wrapText(it.name, SIZE.legend, maxTextW) }));
  const textW = Math.max(0, ...rows.flatMap((r) => r.lines.map((l) => textWidth(l, SIZE.legend))));
  return { rows, swatch: 30, textW };
}

function swatch(it, x, y, id) {
  // (x, y): left end, vertical centre.
  const { style } = it;
  const out = [];
  if (it.kind === 'bar') {
    out.push(el('rect', { x: x + 6, y: y - 7, width: 18, height: 14, fill: style.color, stroke: style.color }));
    if (style.hatch !== 'none') out.push(el('rect', { x: x + 6, y: y - 7, width: 18, height: 14, fill: `url(#${id}-hatch-${style.hatch})` }));
    return out;
  }
  if (it.band) out.push(el('rect', { x, y: y - 6, width: 30, height: 12, fill: style.color, 'fill-opacity': 0.18 }));
  if (it.kind === 'points') {
    if (it.line !== false) out.push(el('line', { x1: x, y1: y, x2: x + 30, y2: y, stroke: style.color, 'stroke-width': 1.4, 'stroke-dasharray': style.dash }));
    out.push(el('line', { x1: x + 15, y1: y - 7, x2: x + 15, y2: y + 7, stroke: style.color, 'stroke-width': 1.5 }));
    out.push(markerEl(style.marker, x + 15, y, style.color));
  } else {
    out.push(el('line', { x1: x, y1: y, x2: x + 30, y2: y, stroke: style.color, 'stroke-width': 2.2, 'stroke-dasharray': style.dash }));
    if (it.markers) out.push(markerEl(style.marker, x + 15, y, style.color, 3.5));
  }
  return out;
}

/** Right legend: items stacked in a column at (x, y). Returns { out, height }. */
function legendColumn(box, x, y, id) {
  const out = ['<g class="legend">'];
  let cy = y;
  for (const r of box.rows) {
    const h = Math.max(20, r.lines.length * LINE_H.legend + 4);
    out.push(...swatch(r, x, cy + 10, id));
    r.lines.forEach((l, i) => out.push(textEl(x + box.swatch + 8, cy + 14 + i * LINE_H.legend, l, { size: SIZE.legend })));
    cy += h;
  }
  out.push('</g>');
  return { out, height: cy - y };
}

/** Bottom legend: items flowed into rows within width W − 24. Returns { height, draw(y, id) }. */
function legendFlow(box, W) {
  const rows = [[]];
  let x = 12;
  for (const r of box.rows) {
    const w = box.swatch + 8 + Math.max(...r.lines.map((l) => textWidth(l, SIZE.legend))) + 22;
    if (x > 12 && x + w > W - 12) { x = 12; rows.push([]); }
    rows.at(-1).push({ r, x });
    x += w;
  }
  let h = 0;
  for (const row of rows) {
    for (const it of row) it.dy = h;
    if (row.length) h += Math.max(...row.map((it) => it.r.lines.length)) * LINE_H.legend + 4;
  }
  return {
    height: h,
    draw(y, id) {
      const out = ['<g class="legend">'];
      for (const row of rows) {
        for (const { r, x: ix, dy } of row) {
          out.push(...swatch(r, ix, y + dy + 8, id));
          r.lines.forEach((l, i) => out.push(textEl(ix + box.swatch + 8, y + dy + 12 + i * LINE_H.legend, l, { size: SIZE.legend })));
        }
      }
      out.push('</g>');
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Panels: axes, grid, refs and series inside one plot rectangle

/** Pixel mappers of an axis pair inside rect (each scale may keep `pad` px clear at both ends). */
function mappers(sx, sy, rect) {
  const px = sx.pad ?? 0, py = sy.pad ?? 0;
  return {
    X: (v) => rect.x0 + px + (rect.x1 - rect.x0 - 2 * px) * sx.t(v),
    Y: (v) => rect.y1 - py - (rect.y1 - rect.y0 - 2 * py) * sy.t(v),
  };
}

function drawGrid(out, sx, sy, rect) {
  const { x0, y0, x1, y1 } = rect;
  const { X, Y } = mappers(sx, sy, rect);
  out.push('<g class="grid">');
  for (const v of sy.ticks) out.push(el('line', { x1: x0, y1: Y(v), x2: x1, y2: Y(v), stroke: GRID, 'stroke-width': 1 }));
  for (const v of sx.ticks) out.push(el('line', { x1: X(v), y1: y0, x2: X(v), y2: y1, stroke: GRID, 'stroke-width': 1 }));
  out.push('</g>');
}

function drawAxes(out, sx, sy, rect, { xLabels = true, yLabels = true } = {}) {
  const { x0, y0, x1, y1 } = rect;
  const { X, Y } = mappers(sx, sy, rect);
  out.push('<g class="axes">');
  out.push(el('rect', { x: x0, y: y0, width: x1 - x0, height: y1 - y0, fill: 'none', stroke: '#999999', 'stroke-width': 1 }));
  out.push(el('line', { x1: x0, y1: y1, x2: x1, y2: y1, stroke: INK, 'stroke-width': 1.2 }));
  out.push(el('line', { x1: x0, y1: y0, x2: x0, y2: y1, stroke: INK, 'stroke-width': 1.2 }));
  for (const v of sx.minor) out.push(el('line', { x1: X(v), y1: y1, x2: X(v), y2: y1 + 3, stroke: INK, 'stroke-width': 1 }));
  for (const v of sy.minor) out.push(el('line', { x1: x0 - 3, y1: Y(v), x2: x0, y2: Y(v), stroke: INK, 'stroke-width': 1 }));
  out.push('</g><g class="x-ticks">');
  for (const v of sx.ticks) {
    out.push(el('line', { x1: X(v), y1: y1, x2: X(v), y2: y1 + 5, stroke: INK, 'stroke-width': 1 }));
    if (xLabels) out.push(textEl(X(v), y1 + 8 + SIZE.tick, sx.label(v), { anchor: 'middle' }));
  }
  out.push('</g><g class="y-ticks">');
  for (const v of sy.ticks) {
    out.push(el('line', { x1: x0 - 5, y1: Y(v), x2: x0, y2: Y(v), stroke: INK, 'stroke-width': 1 }));
    if (yLabels) out.push(textEl(x0 - 8, Y(v) + SIZE.tick * 0.35, sy.label(v), { anchor: 'end' }));
  }
  out.push('</g>');
}

/** The pixel position of each ref inside rect (refs outside the axis range are dropped). */
function placeRefs(refs, sx, sy, rect) {
  const { X, Y } = mappers(sx, sy, rect);
  const placed = [];
  for (const r of refs ?? []) {
    if (!r) continue;
    if ('y' in r) { const y = Y(r.y); if (y >= rect.y0 - 1e-9 && y <= rect.y1 + 1e-9) placed.push({ r, y }); } else if ('x' in r) { const x = X(r.x); if (x >= rect.x0 - 1e-9 && x <= rect.x1 + 1e-9) placed.push({ r, x }); }
  }
  return placed;
}

function drawRefLines(out, placed, rect) {
  if (!placed.length) return;
  out.push('<g class="refs">');
  const style = { stroke: REF, 'stroke-width': 1.3, 'stroke-dasharray': '1.5 3', 'stroke-linecap': 'round' };
  for (const p of placed) {
    if ('y' in p) out.push(el('line', { x1: rect.x0, y1: p.y, x2: rect.x1, y2: p.y, ...style }));
    else out.push(el('line', { x1: p.x, y1: rect.y0, x2: p.x, y2: rect.y1, ...style }));
  }
  out.push('</g>');
}

/**
 * Ref labels, drawn over the data with a white halo, at whichever of the line's ends (above or
 * below a horizontal line; top or bottom of a vertical one) covers the fewest data points.
 */
function drawRefLabels(out, placed, rect, obstacles) {
  const labelled = placed.filter((p) => p.r.label);
  if (!labelled.length) return;
  const size = SIZE.ref;
  const hits = (b) => obstacles.reduce((n, [x, y]) => n + (x >= b.x - 3 && x <= b.x + b.w + 3 && y >= b.y - 3 && y <= b.y + b.h + 3 ? 1 : 0), 0);
  out.push('<g class="ref-labels">');
  for (const p of labelled) {
    const label = String(p.r.label);
    const w = textWidth(label, size);
    const cands = [];
    if ('y' in p) {
      for (const [dy, side] of [[-5, 'above'], [size + 3, 'below']]) {
        const base = p.y + dy;
        for (const end of ['right', 'left']) {
          const x = end === 'right' ? rect.x1 - 6 - w : rect.x0 + 6;
          cands.push({ x, y: base - 0.8 * size, w, h: size, base, anchor: 'start', side });
        }
      }
    } else {
      for (const end of ['top', 'bottom']) {
        const base = end === 'top' ? rect.y0 + size + 3 : rect.y1 - 6;
        for (const side of ['right', 'left']) {
          const x = side === 'right' ? p.x + 4 : p.x - 4 - w;
          cands.push({ x, y: base - 0.8 * size, w, h: size, base, anchor: 'start' });
        }
      }
    }
    const fits = cands.filter((c) => c.x >= rect.x0 + 1 && c.x + c.w <= rect.x1 - 1 && c.y >= rect.y0 + 1 && c.y + c.h <= rect.y1 - 1);
    const pool = fits.length ? fits : cands.slice(0, 1);
    let best = pool[0], bestHits = Infinity;
    for (const c of pool) { const h = hits(c); if (h < bestHits) { best = c; bestHits = h; } }
    const x = Math.min(Math.max(best.x, rect.x0 + 1), rect.x1 - 1 - w);
    const base = Math.min(Math.max(best.base, rect.y0 + 0.8 * size + 1), rect.y1 - 0.2 * size - 1);
    out.push(textEl(x, base, label, { size, fill: '#444444', halo: true, cls: 'ref-label' }));
  }
  out.push('</g>');
}

/** Points every ~3 px along polylines (for ref-label placement). */
function sample(runs) {
  const out = [];
  for (const r of runs) {
    for (let i = 1; i < r.length; i++) {
      const [ax, ay] = r[i - 1], [bx, by] = r[i];
      const n = Math.max(1, Math.ceil(Math.hypot(bx - ax, by - ay) / 3));
      for (let k = 0; k < n; k++) out.push([ax + ((bx - ax) * k) / n, ay + ((by - ay) * k) / n]);
    }
    if (r.length) out.push(r[r.length - 1]);
  }
  return out;
}

/** Lines and bands; returns sample points of what was drawn (obstacles for labels). */
function drawLineSeries(out, series, sx, sy, rect, styleOf) {
  const { X, Y } = mappers(sx, sy, rect);
  const P = (x, y) => { const px = X(x), py = Y(y); return Number.isFinite(px) && Number.isFinite(py) ? [px, py] : null; };
  const obstacles = [];
  // Bands first (all series), then lines, so no band hides another series' line.
  const groups = series.map((s, i) => ({ s, i, st: styleOf(s), band: [], line: [], marks: [] }));
  for (const g of groups) {
    let run = [];
    const flush = () => {
      if (run.length >= 2) {
        const poly = clipPolygon([...run.map((r) => r[0]), ...run.map((r) => r[1]).reverse()], rect);
        if (poly.length >= 3) g.band.push(el('polygon', { class: 'band', points: pts(poly), fill: g.st.color, 'fill-opacity': 0.16, stroke: 'none' }));
      }
      run = [];
    };
    for (const b of g.s.band ?? []) {
      const up = P(b?.[0], b?.[2]), dn = P(b?.[0], b?.[1]);
      if (up && dn) run.push([up, dn]); else flush();
    }
    flush();
    const line = (g.s.points ?? []).map((p) => P(p?.[0], p?.[1]));
    const runs = clipPolyline(line, rect);
    obstacles.push(...sample(runs));
    for (const r of runs) {
      g.line.push(el('polyline', { class: 'line', points: pts(r), fill: 'none', stroke: g.st.color, 'stroke-width': 2.2, 'stroke-dasharray': g.st.dash, 'stroke-linejoin': 'round' }));
    }
    if (g.s.markers) {
      for (const p of line) if (p && inRect(p, rect)) g.marks.push(markerEl(g.st.marker, p[0], p[1], g.st.color, 3.5));
    } else {
      // A point with no neighbour (gaps on both sides) would vanish from a line: show it as a dot.
      line.forEach((p, k) => {
        if (p && !line[k - 1] && !line[k + 1] && inRect(p, rect)) g.marks.push(el('circle', { class: 'isolated', cx: p[0], cy: p[1], r: 2.5, fill: g.st.color }));
      });
    }
  }
  for (const g of groups) {
    if (g.band.length) out.push(`<g class="series s${g.i}"><title>${esc(g.s.name ?? '')}</title>`, ...g.band, '</g>');
  }
  for (const g of groups) {
    out.push(`<g class="series s${g.i}"><title>${esc(g.s.name ?? '')}</title>`, ...g.line, ...g.marks, '</g>');
  }
  return obstacles;
}

/** Markers with error bars; returns sample points of what was drawn. */
function drawPointSeries(out, series, sx, sy, rect, styleOf, dodge) {
  const { X, Y } = mappers(sx, sy, rect);
  const k = series.length;
  const obstacles = [];
  series.forEach((s, i) => {
    const st = styleOf(s);
    const off = (i - (k - 1) / 2) * dodge;
    const ps = normPoints(s.points);
    const xy = ps.map((p) => { const x = X(p.x) + off, y = Y(p.y); return Number.isFinite(x) && Number.isFinite(y) ? [x, y] : null; });
    out.push(`<g class="series s${i}"><title>${esc(s.name ?? '')}</title>`);
    if (s.line !== false) {
      const runs = clipPolyline(xy, rect);
      obstacles.push(...sample(runs));
      for (const r of runs) out.push(el('polyline', { class: 'line', points: pts(r), fill: 'none', stroke: st.color, 'stroke-width': 1.4, 'stroke-dasharray': st.dash, 'stroke-linejoin': 'round' }));
    }
    for (const p of ps) {
      const x = X(p.x) + off;
      if (!Number.isFinite(x) || !Number.isFinite(p.lo) || !Number.isFinite(p.hi)) continue;
      const a = [x, Y(p.hi)], b = [x, Y(p.lo)];
      if (!Number.isFinite(a[1]) || !Number.isFinite(b[1])) continue;
      const seg = clipSegment(a, b, rect);
      if (!seg) continue;
      obstacles.push(...sample([seg]));
      out.push(el('line', { class: 'errorbar', x1: seg[0][0], y1: seg[0][1], x2: seg[1][0], y2: seg[1][1], stroke: st.color, 'stroke-width': 1.6 }));
      for (const [end, c] of [[a, seg[0]], [b, seg[1]]]) {
        if (end !== c) continue;
        const cap = clipSegment([x - 4, c[1]], [x + 4, c[1]], rect);
        if (cap) out.push(el('line', { x1: cap[0][0], y1: cap[0][1], x2: cap[1][0], y2: cap[1][1], stroke: st.color, 'stroke-width': 1.6 }));
      }
    }
    for (const p of xy) {
      if (p && inRect(p, rect)) { obstacles.push(p); out.push(markerEl(st.marker, p[0], p[1], st.color)); }
    }
    out.push('</g>');
  });
  return obstacles;
}

// ---------------------------------------------------------------------------------------------
// Whole charts

function svgOpen(W, H, id, title, desc) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg"${attrs({ width: W, height: H, viewBox: `0 0 ${n2(W)} ${n2(H)}`, role: 'img', 'aria-labelledby': `${id}-title ${id}-desc`, 'font-family': FONT })}>`,
    `<title id="${esc(id)}-title">${esc(title ?? '')}</title>`,
    `<desc id="${esc(id)}-desc">${esc(desc)}</desc>`,
    el('rect', { width: W, height: H, fill: 'white' }),
  ];
}

function describe(kind, opts, names) {
  const axis = (a) => `${a?.label ?? ''}${a?.log ? ' (log scale)' : ''}`;
  const what = { line: 'Line chart', points: 'Chart of points with error bars', bar: 'Grouped bar chart with error bars', multiples: 'Small multiples' }[kind];
  const parts = [`${what}${opts.x?.label || opts.y?.label ? ` of ${axis(opts.y)} against ${axis(opts.x)}` : ''}.`];
  if (names.length) parts.push(`Series: ${names.join(', ')}.`);
  if (opts.desc) parts.push(opts.desc);
  else if (opts.subtitle) parts.push(opts.subtitle);
  return parts.join(' ');
}

function yLabelLines(spec, ph) {
  return spec?.label ? wrapText(spec.label, SIZE.label, Math.max(60, ph)) : [];
}

function footer(note, W) {
  return note ? wrapText(note, SIZE.note, W - 24) : [];
}

/** The common layout of lineChart and pointsChart. */
function singlePanel(kind, opts) {
  const W = opts.width ?? 720;
  const series = (opts.series ?? []).filter(Boolean);
  const refs = opts.refs ?? [];
  const names = series.map((s) => String(s.name ?? ''));
  const styleOf = styler(names);
  const id = opts.id ? String(opts.id) : slug(opts.title);
  const head = header(opts, W);
  const legendMode = opts.legend ?? 'right';
  const items = legendMode === 'none' ? [] : series.map((s) => ({ name: String(s.name ?? ''), style: styleOf(s), kind, band: kind === 'line' && (s.band?.length ?? 0) > 0, markers: s.markers, line: s.line }));
  const noteLines = footer(opts.note, W);

  const xv = xValues(kind, series).concat(refValues(refs, 'x'));
  const yv = yValues(kind, series).concat(refValues(refs, 'y'));
  let H = opts.height ?? 440;

  // Legend placement: right if the plot keeps ≥ 60 % of the width.
  let box = items.length ? legendBox(items, 220) : null;
  let right = box && legendMode === 'right' && W - (box.swatch + 8 + box.textW + 28) >= 0.6 * W;
  const flow = box && !right ? legendFlow(legendBox(items, W - 80), W) : null;
  const legendW = right ? box.swatch + 8 + box.textW + 24 : 0;

  // Ticks depend on the plot's size and the margins on the ticks' labels: iterate to a fixed point.
  let sx, sy, left = 60, rightM = 20, top = head.height, bottom = 0, yl = [], xl = [], yTickW = 0;
  for (let pass = 0; pass < 5; pass++) {
    const pw = W - left - rightM - legendW, ph = Math.max(120, H - top - bottom);
    sx = makeScale(opts.x, xv, pw, false);
    sy = makeScale(opts.y, yv, ph, true);
    yl = yLabelLines(opts.y, ph);
    xl = opts.x?.label ? wrapText(opts.x.label, SIZE.label, Math.max(80, pw)) : [];
    yTickW = Math.max(0, ...sy.ticks.map((v) => textWidth(sy.label(v), SIZE.tick)));
    const xFirst = sx.ticks.length ? textWidth(sx.label(sx.ticks[0]), SIZE.tick) * (sx.t(sx.ticks[0]) < 0.01 ? 0.5 : 0) : 0;
    const xLast = sx.ticks.length ? textWidth(sx.label(sx.ticks.at(-1)), SIZE.tick) * (sx.t(sx.ticks.at(-1)) > 0.99 ? 0.5 : 0) : 0;
    const was = [left, rightM, bottom, H];
    left = Math.ceil(Math.max(12 + yl.length * LINE_H.label + 6 + yTickW + 8, 12 + xFirst));
    rightM = Math.ceil(right ? 12 : Math.max(16, xLast + 8));
    bottom = 8 + SIZE.tick + 6 + xl.length * LINE_H.label + (xl.length ? 6 : 0) + (flow ? flow.height + 8 : 0) + noteLines.length * LINE_H.note + 10;
    H = Math.max(opts.height ?? 440, top + (opts.height === undefined ? 220 : 120) + bottom);
    if (was.every((v, i) => v === [left, rightM, bottom, H][i])) break;
  }
  const rect = { x0: left, y0: top, x1: W - rightM - legendW, y1: H - bottom };
  const dodge = kind === 'points' && series.length > 1 ? (opts.dodge ?? 6) : 0;
  if (kind === 'points') { sx.pad = (dodge * (series.length - 1)) / 2 + 8; sy.pad = 8; }
  const out = svgOpen(W, H, id, opts.title, describe(kind, opts, names));
  out.push(...head.out);
  drawGrid(out, sx, sy, rect);
  const placed = placeRefs(refs, sx, sy, rect);
  drawRefLines(out, placed, rect);
  const obstacles = kind === 'line' ? drawLineSeries(out, series, sx, sy, rect, styleOf) : drawPointSeries(out, series, sx, sy, rect, styleOf, dodge);
  drawAxes(out, sx, sy, rect);
  drawRefLabels(out, placed, rect, obstacles);
  axisLabels(out, rect, xl, rect.y1 + 8 + SIZE.tick + 6, yl, yTickW);
  let y = rect.y1 + 8 + SIZE.tick + 6 + (xl.length ? xl.length * LINE_H.label + 6 : 0);
  if (right) out.push(...legendColumn(box, rect.x1 + 16, rect.y0, id).out);
  if (flow) { out.push(...flow.draw(y + 4, id)); y += flow.height + 8; }
  noteLines.forEach((l, i) => out.push(textEl(12, y + 12 + i * LINE_H.note, l, { size: SIZE.note, fill: MUTED, cls: 'note' })));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Axis titles: the x label's lines (wrapped to the plot's width) centred under the plot, the
 * first baseline one label line below xTop; the y label's lines turned 90°, just left of the
 * widest y tick label.
 */
function axisLabels(out, rect, xl, xTop, yl, yTickW) {
  const xc = (rect.x0 + rect.x1) / 2, yc = (rect.y0 + rect.y1) / 2;
  xl.forEach((l, i) => out.push(textEl(xc, xTop + SIZE.label + i * LINE_H.label, l, { size: SIZE.label, anchor: 'middle', cls: 'x-label' })));
  const right = rect.x0 - 8 - yTickW - 6;
  yl.forEach((l, i) => {
    const x = right - 0.25 * SIZE.label - (yl.length - 1 - i) * LINE_H.label;
    out.push(textEl(x, yc, l, { size: SIZE.label, anchor: 'middle', transform: `rotate(-90 ${n2(x)} ${n2(yc)})`, cls: 'y-label' }));
  });
}

/** Line chart: lines with optional shaded bands, refs. See the top of the file. */
export function lineChart(opts) {
  return singlePanel('line', opts);
}

/** Points with error bars (and thin joining lines). See the top of the file. */
export function pointsChart(opts) {
  return singlePanel('points', opts);
}

/** Grouped bars with error bars, one group per category. See the top of the file. */
export function barChart(opts) {
  const W = opts.width ?? 720;
  const categories = (opts.categories ?? []).map(String);
  const series = (opts.series ?? []).filter(Boolean);
  const refs = (opts.refs ?? []).filter((r) => r && 'y' in r);
  const names = series.map((s) => String(s.name ?? ''));
  const styleOf = styler(names);
  const id = opts.id ? String(opts.id) : slug(opts.title);
  const head = header(opts, W);
  const legendMode = opts.legend ?? 'right';
  const items = legendMode === 'none' ? [] : series.map((s) => ({ name: String(s.name ?? ''), style: styleOf(s), kind: 'bar' }));
  const box = items.length ? legendBox(items, 220) : null;
  const right = box && legendMode === 'right' && W - (box.swatch + 8 + box.textW + 28) >= 0.6 * W;
  const flow = box && !right ? legendFlow(legendBox(items, W - 80), W) : null;
  const legendW = right ? box.swatch + 8 + box.textW + 24 : 0;
  const noteLines = footer(opts.note, W);
  const values = series.map((s) => categories.map((_, c) => normBar(s.values?.[c])));
  const yv = values.flat().flatMap((v) => [v.y, v.lo, v.hi]).concat(refs.map((r) => r.y));
  let H = opts.height ?? 440;
  let sy, left = 60, top = head.height, bottom = 0, yl = [], xl = [], yTickW = 0, rotate = false, catH = SIZE.tick, catLines = [];
  for (let pass = 0; pass < 5; pass++) {
    const pw = W - left - 16 - legendW, ph = Math.max(120, H - top - bottom);
    const was = [left, bottom, H];
    sy = makeScale(opts.y, yv, ph, true, { zero: true });
    yl = yLabelLines(opts.y, ph);
    xl = opts.x?.label ? wrapText(opts.x.label, SIZE.label, Math.max(80, pw)) : [];
    yTickW = Math.max(0, ...sy.ticks.map((v) => textWidth(sy.label(v), SIZE.tick)));
    left = Math.ceil(12 + yl.length * LINE_H.label + 6 + yTickW + 8);
    // Category names wrap onto up to 3 lines under their group; names that would need a word
    // broken are set at 45° instead, with room left for the first one on the left.
    const slot = pw / Math.max(1, categories.length);
    catLines = categories.map((c) => wrapText(c, SIZE.tick, slot - 8));
    rotate = catLines.some((ls, j) => ls.length > 3 || ls.join(' ') !== categories[j].split(/ +/).join(' '));
    if (rotate) {
      const catW = Math.max(0, ...categories.map((c) => textWidth(c, SIZE.tick)));
      catH = catW * Math.SQRT1_2 + SIZE.tick;
      const first = categories.length ? textWidth(categories[0], SIZE.tick) : 0;
      left = Math.max(left, Math.ceil(first * Math.SQRT1_2 + SIZE.tick - slot / 2 + 8));
    } else catH = Math.max(1, ...catLines.map((ls) => ls.length)) * LINE_H.tick - (LINE_H.tick - SIZE.tick);
    bottom = 8 + catH + 6 + xl.length * LINE_H.label + (xl.length ? 6 : 0) + (flow ? flow.height + 8 : 0) + noteLines.length * LINE_H.note + 10;
    H = Math.max(opts.height ?? 440, top + 140 + bottom);
    if (was.every((v, i) => v === [left, bottom, H][i])) break;
  }
  const rect = { x0: left, y0: top, x1: W - 16 - legendW, y1: H - bottom };
  const Y = (v) => rect.y1 - (rect.y1 - rect.y0) * sy.t(v);
  const slot = (rect.x1 - rect.x0) / Math.max(1, categories.length);
  const k = Math.max(1, series.length);
  const barW = Math.min(48, (slot * 0.8) / k);
  const out = svgOpen(W, H, id, opts.title, describe('bar', opts, names));
  const hatches = [...new Set(series.map((s) => styleOf(s).hatch))].filter((h) => h !== 'none');
  if (hatches.length) out.push('<defs>', ...hatchDefs(id, hatches), '</defs>');
  out.push(...head.out);
  // Grid (horizontal only) and the zero line.
  out.push('<g class="grid">');
  for (const v of sy.ticks) out.push(el('line', { x1: rect.x0, y1: Y(v), x2: rect.x1, y2: Y(v), stroke: GRID, 'stroke-width': 1 }));
  out.push('</g>');
  const placed = placeRefs(refs, { t: () => NaN }, sy, rect);
  drawRefLines(out, placed, rect);
  const obstacles = [];
  const zeroT = sy.t(0);
  const base = rect.y1 - (rect.y1 - rect.y0) * Math.min(1, Math.max(0, zeroT));
  series.forEach((s, i) => {
    const st = styleOf(s);
    out.push(`<g class="series s${i}"><title>${esc(s.name ?? '')}</title>`);
    categories.forEach((_, c) => {
      const v = values[i][c];
      const cx = rect.x0 + slot * (c + 0.5) + (i - (k - 1) / 2) * barW;
      if (Number.isFinite(v.y)) {
        const poly = clipPolygon([[cx - barW / 2 + 1, base], [cx + barW / 2 - 1, base], [cx + barW / 2 - 1, Y(v.y)], [cx - barW / 2 + 1, Y(v.y)]], rect);
        if (poly.length >= 3) {
          const xs = poly.map((p) => p[0]), ys = poly.map((p) => p[1]);
          const r = { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
          out.push(el('rect', { class: 'bar', ...r, fill: st.color, stroke: st.color, 'stroke-width': 1 }));
          for (let yy = r.y; yy <= r.y + r.height; yy += 4) for (let xx = r.x; xx <= r.x + r.width; xx += 4) obstacles.push([xx, yy]);
          if (st.hatch !== 'none') out.push(el('rect', { ...r, fill: `url(#${id}-hatch-${st.hatch})` }));
        }
      }
      if (Number.isFinite(v.lo) && Number.isFinite(v.hi)) {
        const a = [cx, Y(v.hi)], b = [cx, Y(v.lo)];
        const seg = clipSegment(a, b, rect);
        if (seg) {
          // A white under-stroke keeps the bar visible on dark bars and over hatching.
          const cw = Math.min(5, barW / 3);
          const caps = [[a, seg[0]], [b, seg[1]]].filter(([end, q]) => end === q).map(([, q]) => q);
          for (const [stroke, width] of [['white', 3.5], [INK, 1.5]]) {
            out.push(el('line', { class: stroke === INK ? 'errorbar' : undefined, x1: seg[0][0], y1: seg[0][1], x2: seg[1][0], y2: seg[1][1], stroke, 'stroke-width': width }));
            for (const q of caps) out.push(el('line', { x1: cx - cw, y1: q[1], x2: cx + cw, y2: q[1], stroke, 'stroke-width': width }));
          }
          obstacles.push(...sample([seg]));
        }
      }
    });
    out.push('</g>');
  });
  // Axes.
  out.push('<g class="axes">');
  out.push(el('rect', { x: rect.x0, y: rect.y0, width: rect.x1 - rect.x0, height: rect.y1 - rect.y0, fill: 'none', stroke: '#999999', 'stroke-width': 1 }));
  out.push(el('line', { x1: rect.x0, y1: rect.y0, x2: rect.x0, y2: rect.y1, stroke: INK, 'stroke-width': 1.2 }));
  out.push(el('line', { x1: rect.x0, y1: rect.y1, x2: rect.x1, y2: rect.y1, stroke: INK, 'stroke-width': 1.2 }));
  if (zeroT > 0 && zeroT < 1) out.push(el('line', { class: 'zero', x1: rect.x0, y1: base, x2: rect.x1, y2: base, stroke: INK, 'stroke-width': 1 }));
  out.push('</g><g class="y-ticks">');
  for (const v of sy.ticks) {
    out.push(el('line', { x1: rect.x0 - 5, y1: Y(v), x2: rect.x0, y2: Y(v), stroke: INK, 'stroke-width': 1 }));
    out.push(textEl(rect.x0 - 8, Y(v) + SIZE.tick * 0.35, sy.label(v), { anchor: 'end' }));
  }
  out.push('</g><g class="x-ticks">');
  categories.forEach((c, j) => {
    const cx = rect.x0 + slot * (j + 0.5);
    if (rotate) {
      const y = rect.y1 + 10;
      out.push(textEl(cx + 4, y + SIZE.tick * 0.7, c, { anchor: 'end', transform: `rotate(-45 ${n2(cx + 4)} ${n2(y + SIZE.tick * 0.7)})` }));
    } else catLines[j].forEach((l, i) => out.push(textEl(cx, rect.y1 + 8 + SIZE.tick + i * LINE_H.tick, l, { anchor: 'middle' })));
  });
  out.push('</g>');
  drawRefLabels(out, placed, rect, obstacles);
  axisLabels(out, rect, xl, rect.y1 + 8 + catH + 6, yl, yTickW);
  let y = rect.y1 + 8 + catH + 6 + (xl.length ? xl.length * LINE_H.label + 6 : 0);
  if (right) out.push(...legendColumn(box, rect.x1 + 16, rect.y0, id).out);
  if (flow) { out.push(...flow.draw(y + 4, id)); y += flow.height + 8; }
  noteLines.forEach((l, i) => out.push(textEl(12, y + 12 + i * LINE_H.note, l, { size: SIZE.note, fill: MUTED, cls: 'note' })));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** A grid of panels (one per task, say) sharing both axes and one legend. See the top of the file. */
export function smallMultiples(opts) {
  const kind = opts.kind ?? 'line';
  if (kind !== 'line' && kind !== 'points') throw new RangeError(`smallMultiples: kind must be 'line' or 'points', got ${kind}`);
  const W = opts.width ?? 720;
  const given = (opts.panels ?? []).filter(Boolean);
  const panels = given.length ? given : [{ series: [] }]; // nothing to show: one empty panel
  const n = panels.length;
  const cols = Math.max(1, Math.min(n, opts.columns ?? Math.ceil(Math.sqrt(n))));
  const rows = Math.ceil(n / cols);
  const all = panels.flatMap((p) => (p.series ?? []).filter(Boolean));
  const names = all.map((s) => String(s.name ?? ''));
  const styleOf = styler(names);
  const id = opts.id ? String(opts.id) : slug(opts.title);
  const head = header(opts, W);
  const legendMode = opts.legend ?? 'bottom';
  const seen = new Map();
  for (const s of all) {
    const nm = String(s.name ?? '');
    const prev = seen.get(nm);
    const band = kind === 'line' && (s.band?.length ?? 0) > 0;
    if (!prev) seen.set(nm, { name: nm, style: styleOf(s), kind, band, markers: s.markers, line: s.line });
    else prev.band ||= band;
  }
  const items = legendMode === 'none' ? [] : [...seen.values()];
  const box = items.length ? legendBox(items, 200) : null;
  const right = box && legendMode === 'right' && W - (box.swatch + 8 + box.textW + 28) >= 0.6 * W;
  const flow = box && !right ? legendFlow(legendBox(items, W - 80), W) : null;
  const legendW = right ? box.swatch + 8 + box.textW + 24 : 0;
  const noteLines = footer(opts.note, W);
  const allRefs = panels.flatMap((p) => p.refs ?? []).concat(opts.refs ?? []);
  const xv = xValues(kind, all).concat(refValues(allRefs, 'x'));
  const yv = yValues(kind, all).concat(refValues(allRefs, 'y'));
  const panelH = opts.panelHeight ?? 170;
  const titleH = panels.some((p) => p.title) ? LINE_H.label + 6 : 6;
  const incomplete = n % cols !== 0 && rows > 1;
  const tickH = 8 + SIZE.tick + 4;

  let sx, sy, left = 60, colGap = 20, yl = [], yTickW = 0;
  for (let pass = 0; pass < 5; pass++) {
    const was = [left, colGap];
    const pw = (W - left - 16 - legendW - colGap * (cols - 1)) / cols;
    sx = makeScale(opts.x, xv, pw, false);
    sy = makeScale(opts.y, yv, panelH, true);
    yl = yLabelLines(opts.y, rows * panelH);
    yTickW = Math.max(0, ...sy.ticks.map((v) => textWidth(sy.label(v), SIZE.tick)));
    left = Math.ceil(12 + yl.length * LINE_H.label + 6 + yTickW + 8);
    const first = sx.ticks.length && sx.t(sx.ticks[0]) < 0.01 ? textWidth(sx.label(sx.ticks[0]), SIZE.tick) / 2 : 0;
    const last = sx.ticks.length && sx.t(sx.ticks.at(-1)) > 0.99 ? textWidth(sx.label(sx.ticks.at(-1)), SIZE.tick) / 2 : 0;
    colGap = Math.ceil(Math.max(20, first + last + 10));
    if (was[0] === left && was[1] === colGap) break;
  }
  const maxSeries = Math.max(1, ...panels.map((p) => (p.series ?? []).filter(Boolean).length));
  const dodge = kind === 'points' && maxSeries > 1 ? (opts.dodge ?? 5) : 0;
  if (kind === 'points') { sx.pad = (dodge * (maxSeries - 1)) / 2 + 8; sy.pad = 8; }
  const rowGap = 10 + (incomplete ? tickH : 0);
  const pw = (W - left - 16 - legendW - colGap * (cols - 1)) / cols;
  const top = head.height;
  const gridBottom = top + rows * (titleH + panelH) + (rows - 1) * rowGap;
  const xl = opts.x?.label ? wrapText(opts.x.label, SIZE.label, Math.max(80, cols * pw + (cols - 1) * colGap)) : [];
  let y = gridBottom + tickH + 2 + (xl.length ? xl.length * LINE_H.label + 6 : 0);
  const H = y + (flow ? flow.height + 8 : 0) + noteLines.length * LINE_H.note + 10;
  const out = svgOpen(W, H, id, opts.title, describe('multiples', opts, [...seen.keys()]));
  out.push(...head.out);
  panels.forEach((p, i) => {
    const r = Math.floor(i / cols), c = i % cols;
    const x0 = left + c * (pw + colGap), y0 = top + r * (titleH + panelH + rowGap) + titleH;
    const rect = { x0, y0, x1: x0 + pw, y1: y0 + panelH };
    out.push(`<g class="panel p${i}">`);
    if (p.title) {
      const t = wrapText(p.title, SIZE.panel, pw, true)[0];
      out.push(textEl(x0, y0 - 7, t, { size: SIZE.panel, weight: 'bold', cls: 'panel-title' }));
    }
    drawGrid(out, sx, sy, rect);
    const placed = placeRefs([...(p.refs ?? []), ...(opts.refs ?? [])], sx, sy, rect);
    drawRefLines(out, placed, rect);
    const ss = (p.series ?? []).filter(Boolean);
    // Series keep their style by name; their index classes are per panel.
    const obstacles = kind === 'line' ? drawLineSeries(out, ss, sx, sy, rect, styleOf) : drawPointSeries(out, ss, sx, sy, rect, styleOf, dodge);
    drawAxes(out, sx, sy, rect, { xLabels: i + cols >= panels.length, yLabels: c === 0 });
    drawRefLabels(out, placed, rect, obstacles);
    out.push('</g>');
  });
  const gridRect = { x0: left, y0: top + titleH, x1: left + cols * pw + (cols - 1) * colGap, y1: gridBottom };
  axisLabels(out, gridRect, xl, gridBottom + tickH + 2, yl, yTickW);
  if (right) out.push(...legendColumn(box, gridRect.x1 + 16, gridRect.y0, id).out);
  if (flow) { out.push(...flow.draw(y + 4, id)); y += flow.height + 8; }
  noteLines.forEach((l, i) => out.push(textEl(12, y + 12 + i * LINE_H.note, l, { size: SIZE.note, fill: MUTED, cls: 'note' })));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
