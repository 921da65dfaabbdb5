// Log-log scaling chart (time per call against n) on a HiDPI canvas, with O(n) and O(n²)
// reference slopes, a least-squares slope per series over its asymptotic regime and the points where two curves cross.

export const PALETTE = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#7f3c8d', '#8c6d31', '#11a579', '#e73f74', '#3969ac'];

export function fmtN(n) {
  return n >= 1024 && n % 1024 === 0 ? `${n / 1024}k` : String(n);
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1e-3) return `${(ms * 1e6).toPrecision(3)} ns`;
  if (ms < 1) return `${(ms * 1e3).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** A time's repeats agree when their middle half spans at most this share of their median. */
export const SPREAD_MAX = 0.3;
/** Times that fall by more than this share when n doubles are noise, not a trend. */
const FALL_MAX = 0.05;

/**
 * Whether the repeats of one timing agree: at least three whose middle half (q1..q3) spans at
 * most SPREAD_MAX of the median, or a single long call (the worker times a call over 200 ms once).
 */
export function steady(p) {
  const t = p.point?.timing ?? p.timing;
  if (!t) return true; // a plain { n, ms } (no repeats known): taken as it is
  if (t.samples === 1) return t.median >= 200;
  const lo = t.q1 ?? t.min, hi = t.q3 ?? t.max;
  return t.samples >= 3 && (hi - lo) <= SPREAD_MAX * t.median;
}

/**
 * Whether a run of points is a consistent trend: every time steady and none falling as n grows
 * (beyond FALL_MAX); returns null, or why not (for the page to say).
 */
export function trendProblem(points) {
  const p = points.filter((x) => x.ms > 0);
  const shaky = p.filter((x) => !steady(x));
  if (shaky.length) return `the repeats at n = ${shaky.map((x) => x.n).join(', ')} disagree`;
  for (let i = 1; i < p.length; i++) {
    if (p[i].ms < p[i - 1].ms * (1 - FALL_MAX)) return `the time falls from n = ${p[i - 1].n} to ${p[i].n}`;
  }
  return null;
}

/** Local slopes (per doubling of n) within this of each other have settled into one power law. */
const SETTLED = 0.35;
/** A local slope that drops by more than this breaks the upward bend of overhead: a stray size. */
const BUMP = 0.1;

const localSlopes = (p) => p.slice(1).map((q, i) => Math.log(q.ms / p[i].ms) / Math.log(q.n / p[i].n));

/**
 * The asymptotic regime of steady points p (sorted by n): the longest run of the largest sizes,
 * three at least, whose local slopes lie within SETTLED of each other. { start, settled }:
 * settled false when even the three largest have not (start is then theirs).
 */
function regimeOf(p) {
  const local = localSlopes(p);
  const spread = (from) => { const s = local.slice(from); return Math.max(...s) - Math.min(...s); };
  let start = Math.max(0, p.length - 3);
  const settled = spread(start) <= SETTLED;
  if (settled) while (start > 0 && spread(start - 1) <= SETTLED) start--;
  return { start, settled, local };
}

/**
 * The slope of log t against log n in the asymptotic regime, and whether it can be stated:
 * { slope, lo, hi, from, to, settled, left, offLine, why }.
 *
 * A curve bends from fixed overhead at small n (slope near 0) to its power law at large n, so
 * the slopes of the small sizes are not noise and are not fitted: the regime is the longest run
 * of the largest sizes (three at least) whose local slopes lie within SETTLED of each other
 * (regimeOf), and the slope is the least-squares fit over it; lo and hi are the least and
 * greatest local slope in it (the spread to report beside it).
 * - Sizes whose repeats disagree (steady) are left out and named in `left`; the slope is refused
 *   (NaN, with why) only when that leaves fewer than three, or a regime that does not settle.
 * - One size whose repeats agree but which sits off the line of the others (the machine was busy
 *   while it was timed) is left out when that alone lets the largest sizes settle: `offLine`.
 * - The time falling anywhere in the regime (a stray size included) refuses the slope.
 * - When every size's repeats agree and even the three largest have not settled, the slope over
 *   them is stated with settled: false (the curve is still bending at the largest n).
 */
export function slopeOf(points) {
  const all = points.filter((x) => x.ms > 0).sort((a, b) => a.n - b.n);
  if (all.length < 2) return { slope: NaN, why: 'too few points' };
  const steadyAll = all.filter(steady);
  let p = steadyAll;
  const left = all.filter((x) => !steady(x)).map((x) => x.n);
  const disagree = () => `the repeats at n = ${left.join(', ')} disagree`;
  if (p.length < Math.min(3, all.length)) return { slope: NaN, why: left.length ? disagree() : 'too few points' };
  // the largest size decides the asymptote: if its repeats disagree, nothing below can stand in
  if (left.at(-1) === all.at(-1).n) return { slope: NaN, why: disagree() };
  let reg = regimeOf(p);
  let offLine = null;
  if (!reg.settled && p.length >= 4) {
    // one stray size among the largest: the longest settled regime without it, if any. Only an
    // inner size that breaks the curve's shape: overhead bends log t upward (local slopes that
    // only grow with n), so a slope that drops (into one size, or out of it) is a stray, and a
    // curve that is merely still bending is never straightened by dropping a size
    let best = null;
    for (let i = Math.max(2, p.length - 4); i <= p.length - 2; i++) {
      const prev = reg.local[i - 2], into = reg.local[i - 1], out = reg.local[i];
      if (!(into < prev - BUMP || out < into - BUMP)) continue;
      const q = p.filter((_, j) => j !== i);
      const r = regimeOf(q);
      if (r.settled && q.length - r.start >= 3 && (!best || r.start < best.reg.start)) best = { q, reg: r, n: p[i].n };
    }
    if (best) ({ q: p, reg, n: offLine } = best);
  }
  const r = p.slice(reg.start);
  // the regime's sizes left out for disagreeing repeats (the smaller sizes' do not matter)
  const leftIn = left.filter((n) => n >= r[0].n);
  // refused when the regime's own sizes are mostly those whose repeats disagree
  if ((!reg.settled && leftIn.length) || leftIn.length > r.length) return { slope: NaN, why: disagree() };
  // a time that falls as n grows (a stray size included) says the timings are not a trend
  const span = steadyAll.filter((x) => x.n >= r[0].n);
  for (let i = 1; i < span.length; i++) {
    if (span[i].ms < span[i - 1].ms * (1 - FALL_MAX)) return { slope: NaN, why: `the time falls from n = ${span[i - 1].n} to ${span[i].n}` };
  }
  const xs = r.map((x) => Math.log(x.n)), ys = r.map((x) => Math.log(x.ms));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length, my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0, den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  if (!(den > 0)) return { slope: NaN, why: 'one size only' };
  const ls = reg.local.slice(reg.start);
  return { slope: num / den, lo: Math.min(...ls), hi: Math.max(...ls), from: r[0].n, to: r.at(-1).n, settled: reg.settled, left: leftIn, offLine, why: null };
}

/** The asymptotic slope of log t against log n; NaN when it cannot be stated (slopeOf says why). */
export function slope(points) {
  return slopeOf(points).slope;
}

/**
 * Where two series cross (log-linear interpolation between consecutive common sizes), stated
 * only when the timings support it: both series a consistent trend (trendProblem), their order
 * changing once only, and staying so at every larger size. The array holds those crossings; its
 * `noisy` property lists the pairs whose order changes but whose timings cannot place a crossing,
 * with why: { a, b, why }.
 */
export function crossings(series) {
  const out = [];
  out.noisy = [];
  for (let a = 0; a < series.length; a++) {
    for (let b = a + 1; b < series.length; b++) {
      const A = series[a], B = series[b];
      if (A.variant === B.variant) continue;
      // Only curves of different families (e.g. O(n²) softmax against O(n) linear): two O(n)
      // variants run neck and neck, and their "crossings" are timing noise.
      if (A.family && A.family === B.family) continue;
      const mb = new Map(B.points.map((p) => [p.n, p]));
      const common = A.points.filter((p) => mb.has(p.n) && p.ms > 0 && mb.get(p.n).ms > 0).map((p) => ({ n: p.n, a: p.ms, b: mb.get(p.n).ms }));
      const found = [];
      for (let i = 1; i < common.length; i++) {
        const p = common[i - 1], q = common[i];
        const f0 = Math.log(p.a) - Math.log(p.b), f1 = Math.log(q.a) - Math.log(q.b);
        if (f0 === 0 || Math.sign(f0) === Math.sign(f1)) continue;
        const t = f0 / (f0 - f1);
        const ln = Math.log(p.n) + t * (Math.log(q.n) - Math.log(p.n));
        const lt = Math.log(p.a) + t * (Math.log(q.a) - Math.log(p.a));
        found.push({ n: Math.exp(ln), ms: Math.exp(lt), a: A, b: B, faster: f1 < 0 ? A.label : B.label });
      }
      if (!found.length) continue;
      const why = found.length > 1 ? `their order changes ${found.length} times`
        : trendProblem(A.points) ? `${A.label}: ${trendProblem(A.points)}`
          : trendProblem(B.points) ? `${B.label}: ${trendProblem(B.points)}` : null;
      if (why) out.noisy.push({ a: A, b: B, why });
      else out.push(found[0]);
    }
  }
  return out;
}

function css(name, fb) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fb;
}

/**
 * series: [{ key, label, variant, build, color, dashed, points: [{ n, ms }] }]
 * range: { nMin, nMax }. Returns { hits, layout }: the plotted points with their canvas
 * coordinates (for hover), and where the axis titles, tick labels and the empty-state message
 * went ([left, right] in CSS pixels; the margins are measured from the labels, so none overlap).
 */
export function drawChart(canvas, series, range, { crossList = [] } = {}) {
  const dpr = window.devicePixelRatio || 1;
  const cssW = Math.max(280, Math.min(900, canvas.parentElement.clientWidth || 640));
  const cssH = Math.round(Math.min(420, Math.max(240, cssW * 0.55)));
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  const fg = css('--fg', '#222'), muted = css('--muted', '#777'), gridC = css('--chart-grid', 'rgba(128,128,128,0.25)');
  ctx.font = '12px system-ui, sans-serif';
  const all = series.flatMap((s) => s.points).filter((p) => p.ms > 0);
  let tMin = all.length ? Math.min(...all.map((p) => p.ms)) : 1e-3;
  let tMax = all.length ? Math.max(...all.map((p) => p.ms)) : 10;
  let lo = Math.floor(Math.log10(tMin)), hi = Math.ceil(Math.log10(tMax));
  if (hi - lo < 2) hi = lo + 2;
  // left margin: the rotated y title (one line of 12 px text), a gap, the widest tick label
  const TITLE = { x0: 2, x1: 18 };
  const yTicks = [];
  for (let e = lo; e <= hi; e++) yTicks.push(fmtMs(10 ** e));
  const tickW = Math.ceil(Math.max(...yTicks.map((t) => ctx.measureText(t).width)));
  const M = { l: TITLE.x1 + 8 + tickW + 6, r: cssW < 480 ? 40 : 64, t: 14, b: 40 };
  const pw = cssW - M.l - M.r, ph = cssH - M.t - M.b;
  const layout = { width: cssW, yTitle: [TITLE.x0, TITLE.x1], yTicks: [M.l - 6 - tickW, M.l - 6], plot: [M.l, M.l + pw], message: null, xTicks: [] };
  const x = (n) => M.l + ((Math.log2(n) - Math.log2(range.nMin)) / Math.max(1e-9, Math.log2(range.nMax) - Math.log2(range.nMin))) * pw;
  const y = (ms) => M.t + (1 - (Math.log10(ms) - lo) / (hi - lo)) * ph;

  // grid and axes
  ctx.strokeStyle = gridC;
  ctx.fillStyle = muted;
  ctx.lineWidth = 1;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  let lastRight = -Infinity;
  for (let n = range.nMin; n <= range.nMax; n *= 2) {
    ctx.beginPath();
    ctx.moveTo(Math.round(x(n)) + 0.5, M.t);
    ctx.lineTo(Math.round(x(n)) + 0.5, M.t + ph);
    ctx.stroke();
    const w = ctx.measureText(fmtN(n)).width;
    if (x(n) - w / 2 < lastRight + 6) continue; // no room: every other label on a narrow chart
    ctx.fillText(fmtN(n), x(n), M.t + ph + 6);
    lastRight = x(n) + w / 2;
    layout.xTicks.push([x(n) - w / 2, lastRight]);
  }
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let e = lo; e <= hi; e++) {
    const yy = Math.round(y(10 ** e)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(M.l, yy);
    ctx.lineTo(M.l + pw, yy);
    ctx.stroke();
    ctx.fillText(fmtMs(10 ** e), M.l - 6, yy);
  }
  ctx.fillStyle = fg;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.fillText('sequence length n (log scale)', M.l + pw / 2, cssH - 2);
  ctx.save();
  ctx.translate((TITLE.x0 + TITLE.x1) / 2, M.t + ph / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText('time per call (log)', 0, 0);
  ctx.restore();

  if (!all.length) {
    // the empty-state message, wrapped to the plot area, on the panel colour (over the grid)
    const lines = wrapText(ctx, 'Choose variants and builds, then press “Run scaling”.', pw - 24);
    const w = Math.max(...lines.map((l) => ctx.measureText(l).width));
    const lh = 16, cx = M.l + pw / 2, cy = M.t + ph / 2;
    ctx.fillStyle = css('--panel', '#fff');
    ctx.fillRect(cx - w / 2 - 8, cy - (lines.length * lh) / 2 - 6, w + 16, lines.length * lh + 12);
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    lines.forEach((l, i) => ctx.fillText(l, cx, cy + (i - (lines.length - 1) / 2) * lh));
    layout.message = [cx - w / 2, cx + w / 2];
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(M.l, M.t, pw, ph);
  ctx.clip();
  // reference slopes through the geometric mean of the first points
  const firsts = series.map((s) => s.points[0]).filter((p) => p && p.ms > 0 && p.n === range.nMin);
  if (firsts.length) {
    const t0 = Math.exp(firsts.reduce((a, p) => a + Math.log(p.ms), 0) / firsts.length);
    ctx.setLineDash([2, 4]);
    ctx.strokeStyle = muted;
    ctx.lineWidth = 1.2;
    for (const k of [1, 2]) {
      ctx.beginPath();
      ctx.moveTo(x(range.nMin), y(t0));
      ctx.lineTo(x(range.nMax), y(t0 * (range.nMax / range.nMin) ** k));
      ctx.stroke();
    }
    ctx.setLineDash([]);
  }
  // series
  const hits = [];
  for (const s of series) {
    const pts = s.points.filter((p) => p.ms > 0);
    ctx.strokeStyle = s.color;
    ctx.fillStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dashed ? [6, 4] : []);
    ctx.beginPath();
    pts.forEach((p, i) => (i ? ctx.lineTo(x(p.n), y(p.ms)) : ctx.moveTo(x(p.n), y(p.ms))));
    ctx.stroke();
    ctx.setLineDash([]);
    for (const p of pts) {
      ctx.beginPath();
      if (s.dashed) ctx.rect(x(p.n) - 3, y(p.ms) - 3, 6, 6);
      else ctx.arc(x(p.n), y(p.ms), 3.2, 0, Math.PI * 2);
      ctx.fill();
      hits.push({ x: x(p.n), y: y(p.ms), s, p });
    }
  }
  // crossings
  ctx.strokeStyle = fg;
  ctx.lineWidth = 1.5;
  for (const c of crossList) {
    ctx.beginPath();
    ctx.arc(x(c.n), y(c.ms), 7, 0, Math.PI * 2);
    ctx.stroke();
    ctx.fillStyle = fg;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'bottom';
    ctx.fillText(`n≈${Math.round(c.n)}`, x(c.n) + 8, y(c.ms) - 6);
  }
  ctx.restore();
  // slope labels at the right edge
  if (firsts.length) {
    const t0 = Math.exp(firsts.reduce((a, p) => a + Math.log(p.ms), 0) / firsts.length);
    ctx.fillStyle = muted;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    for (const [k, label] of [[1, '∝ n'], [2, '∝ n²']]) {
      const yy = y(t0 * (range.nMax / range.nMin) ** k);
      if (yy >= M.t - 2 && yy <= M.t + ph + 2) ctx.fillText(label, M.l + pw + 6, yy);
      else if (k === 2 && yy < M.t) {
        // the n² line leaves through the top: label where it does
        const nExit = range.nMin * ((10 ** hi) / t0) ** 0.5;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        ctx.fillText(label, Math.min(M.l + pw - 12, x(nExit) + 14), M.t + 2);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
      }
    }
  }
  return { hits, layout };
}

/** Greedy word wrap to `width` CSS pixels in the context's font. */
function wrapText(ctx, text, width) {
  const lines = [];
  let cur = '';
  for (const word of text.split(' ')) {
    const next = cur ? `${cur} ${word}` : word;
    if (cur && ctx.measureText(next).width > width) {
      lines.push(cur);
      cur = word;
    } else cur = next;
  }
  if (cur) lines.push(cur);
  return lines;
}
