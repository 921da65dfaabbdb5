// How one thing is timed: warm-up, repeats, median / IQR / min / max and the process CPU time next
// to the wall time (measure, measureRobust); and round-robin timing of several things for the
// ratios the targets compare (roundRobin). Also the output comparisons of the correctness checks.
// No knowledge of variants or contenders: every function takes a callable.

export const CONTENDED = 0.9; // CPU time / wall time below this: other processes took the CPU

const now = () => performance.now();
const isThenable = (x) => x && typeof x.then === 'function';
async function call(fn) {
  const r = fn();
  return isThenable(r) ? await r : r;
}

/** Calls that take under 1 ms are timed in batches of about 1 ms. */
const batchFor = (ms) => (ms < 1 ? Math.min(1000, Math.ceil(1 / Math.max(ms, 1e-4))) : 1);

const median = (xs) => {
  const m = xs.length;
  return m % 2 ? xs[m >> 1] : (xs[m / 2 - 1] + xs[m / 2]) / 2;
};

/** Median, quartiles, min and max of samples (sorted in place). */
export function summarize(samples) {
  samples.sort((a, b) => a - b);
  const m = samples.length;
  return {
    median_ms: median(samples), min_ms: samples[0], max_ms: samples[m - 1],
    q1_ms: samples[Math.floor(0.25 * (m - 1))], q3_ms: samples[Math.ceil(0.75 * (m - 1))],
  };
}

/** Warm-up: at least one call, more while under warmMs. Returns the last call's time and result. */
async function warmUp(fn, warmMs) {
  let last, result;
  const t0 = now();
  do {
    const t = now();
    result = await call(fn);
    last = now() - t;
  } while (now() - t0 < warmMs && last < warmMs / 4);
  return { last, result };
}

/**
 * Warm-up (unless huge: the caller pre-warmed the engine), then repeats until >= policy.minReps
 * and >= policy.minTimeMs (2-3 repeats when a call takes over 0.5 s), at most 1000 or 20 s.
 * Returns the statistics, cpu_median_ms / cpu_wall_ratio, reps, batch and the last result.
 */
export async function measure(fn, policy, { huge = false } = {}) {
  let last = Infinity, result;
  if (!huge) ({ last, result } = await warmUp(fn, policy.warmMs));
  let repsWanted = policy.minReps, budget = policy.minTimeMs;
  const batch = batchFor(last);
  const samples = [], cpu = [];
  const start = now();
  while (samples.length < 1000) {
    const c0 = process.cpuUsage();
    const t = now();
    for (let b = 0; b < batch; b++) result = await call(fn);
    const ms = (now() - t) / batch;
    const c = process.cpuUsage(c0);
    samples.push(ms);
    cpu.push((c.user + c.system) / 1000 / batch);
    if (samples.length === 1 && ms > 500) { repsWanted = ms > 2000 ? 2 : 3; budget = 0; }
    const elapsed = now() - start;
    if ((samples.length >= repsWanted && elapsed >= budget) || elapsed > 20000) break;
  }
  const cpuTotal = cpu.reduce((a, b) => a + b, 0), wallTotal = samples.reduce((a, b) => a + b, 0);
  cpu.sort((a, b) => a - b);
  return {
    ...summarize(samples), cpu_median_ms: median(cpu), cpu_wall_ratio: cpuTotal / wallTotal,
    reps: samples.length, batch, result,
  };
}

/**
 * measure(), retried (at most twice; once when policy.quick) while the process got under 90 % of
 * the wall time as CPU time; the least contended attempt is kept. Attempts that take over 3 s
 * (1 s when quick) are not retried.
 */
export async function measureRobust(fn, policy, o = {}) {
  let best = null;
  for (let attempt = 1; attempt <= (policy.quick ? 2 : 3); attempt++) {
    const t = now();
    const m = await measure(fn, policy, o);
    if (!best || m.cpu_wall_ratio > best.cpu_wall_ratio) best = { ...m, attempts: attempt };
    if (m.cpu_wall_ratio >= CONTENDED || now() - t > (policy.quick ? 1000 : 3000)) break;
  }
  return best;
}

/**
 * Round-robin timing: every round calls each entry once (batched to >= 1 ms when tiny), starting
 * from a different entry each round, so a burst of load from other processes hits all alike.
 * entries: [{ key, fn, warmed }] (fn may be async; warmed: the caller has run it already and one
 * call takes long, so no warm-up calls and no batching). Returns { [key]: statistics }.
 */
export async function roundRobin(entries, rounds) {
  const batch = new Map();
  for (const e of entries) { // warm-up and batch size
    if (e.warmed) { batch.set(e.key, 1); continue; }
    await call(e.fn);
    const t = now();
    await call(e.fn);
    batch.set(e.key, batchFor(now() - t));
  }
  const samples = new Map(entries.map((e) => [e.key, []]));
  const cpuWall = new Map(entries.map((e) => [e.key, [0, 0]]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[(i + round) % entries.length];
      const k = batch.get(e.key);
      const c0 = process.cpuUsage();
      const t = now();
      for (let b = 0; b < k; b++) await call(e.fn);
      const ms = now() - t;
      const c = process.cpuUsage(c0);
      samples.get(e.key).push(ms / k);
      const cw = cpuWall.get(e.key);
      cw[0] += (c.user + c.system) / 1000; cw[1] += ms;
    }
  }
  const out = {};
  for (const e of entries) {
    const [cpu, wall] = cpuWall.get(e.key);
    out[e.key] = { ...summarize(samples.get(e.key)), reps: rounds, batch: batch.get(e.key), cpu_wall_ratio: cpu / wall };
  }
  return out;
}

/** max |a[i] - b[i]|; Infinity when the lengths differ or a NaN appears. */
export function maxAbsDiff(a, b) {
  if (!a || !b || a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= m)) m = Number.isNaN(e) ? Infinity : e;
  }
  return m;
}

/** The checksums native.c prints: sum y and sum |y|. */
export function sums(y) {
  let s = 0, sa = 0;
  for (let i = 0; i < y.length; i++) { s += y[i]; sa += Math.abs(y[i]); }
  return { sum: s, sumabs: sa };
}
