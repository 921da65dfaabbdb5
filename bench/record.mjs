// The results of a run as they accumulate (results.json's rows and checks), and the log lines that
// go with them. The correctness checks compare every contender with the reference contender (the
// SIMD build): max |diff| of the outputs, or for a contender that runs in another process (native)
// the relative difference of the output sums.
import fs from 'node:fs';
import path from 'node:path';
import { gflops } from '../src/js/reference.js';
import { CONTENDED, maxAbsDiff, sums } from './measure.mjs';

export const TOL = 1e-4;
export const log = (...a) => console.log(...a);

/** Writes `${name}.md` and `${name}.json` into dir, or `${name}-quick.*` for a quick run, so that a quick run never overwrites the recorded one. */
export function writeRecorded(dir, name, quick, md, results) {
  const stem = quick ? `${name}-quick` : name;
  fs.writeFileSync(path.join(dir, `${stem}.md`), md);
  fs.writeFileSync(path.join(dir, `${stem}.json`), JSON.stringify(results, null, 1) + '\n');
}
export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
export const fmtBytes = (b) => (b == null ? '-' : b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : `${(b / 2 ** 20).toFixed(1)} MiB`);
const SUMS_KIND = 'relative difference of the output sums (sum y, sum |y|)';
const DIFF_KIND = 'max |diff| of the outputs';

export class Record {
  #plan;
  #refOut = new Map(); // `${variant} ${n}` -> the reference contender's output

  constructor(meta, plan, ref) {
    this.results = { meta, peak: {}, rows: [], checks: [] };
    this.#plan = plan;
    this.ref = ref; // the reference contender's name
  }

  #add(row) {
    this.results.rows.push(row);
    this.#plan.observe(row, row.contender === this.ref);
    return row;
  }

  na(contender, variant, n, reason) {
    return this.#add({ contender, variant, n, d: this.results.meta.d, dv: this.results.meta.dv, status: 'n/a', reason });
  }

  /**
   * A measured row. m: measureRobust()'s statistics, plus memory / memoryKind and either the
   * output (`result`) or its sums (`sum`, `sumabs`). Checks it against the reference.
   */
  ok(contender, job, m) {
    const { result, sum, sumabs, memory, memoryKind, ...stats } = m;
    const row = this.#add({
      contender, variant: job.variant.id, n: job.n, d: job.dims.d, dv: job.dims.dv, flops: job.flops, status: 'ok', ...stats,
      gflops: job.flops ? gflops(job.flops, m.median_ms) : null, peak_memory_bytes: memory, memory_kind: memoryKind,
    });
    const key = `${row.variant} ${row.n}`;
    if (contender === this.ref) {
      this.#refOut.set(key, result);
      Object.assign(row, sums(result));
    }
    logRow(row);
    if (contender !== this.ref) this.#check(row, result, { sum, sumabs });
    return row;
  }

  #check(row, output, s) {
    if (output) {
      const ref = this.#refOut.get(`${row.variant} ${row.n}`);
      if (ref) this.#push(row, maxAbsDiff(output, ref), DIFF_KIND);
      return;
    }
    const refRow = this.results.rows.find((x) => x.contender === this.ref && x.variant === row.variant && x.n === row.n && x.sum != null);
    if (!refRow || s.sum == null) return;
    const rel = Math.max(Math.abs(s.sum - refRow.sum), Math.abs(s.sumabs - refRow.sumabs)) / Math.max(1, refRow.sumabs);
    this.#push(row, rel, SUMS_KIND);
  }

  #push(row, diff, kind) {
    const ok = diff <= TOL;
    this.results.checks.push({ variant: row.variant, n: row.n, contender: row.contender, against: this.ref, diff, kind, tol: TOL, ok });
    log(`  check ${row.variant} n=${row.n} ${row.contender} vs ${this.ref}: ${kind === DIFF_KIND ? 'max |diff|' : 'rel. diff of sums'} ${diff.toExponential(2)} ${ok ? 'ok' : 'FAIL (> ' + TOL + ')'}`);
  }

  /** Frees the reference outputs of size n (they are only compared within one size). */
  doneWith(n) {
    for (const k of this.#refOut.keys()) if (k.endsWith(` ${n}`)) this.#refOut.delete(k);
  }

  failedChecks() { return this.results.checks.filter((c) => !c.ok); }
}

export function logRow(r) {
  const spread = r.q3_ms != null ? ` (IQR ${fmtMs(r.q1_ms)}–${fmtMs(r.q3_ms)}, ${r.reps}×${r.batch})` : '';
  const busy = r.cpu_wall_ratio != null && r.cpu_wall_ratio < CONTENDED ? `  [cpu/wall ${r.cpu_wall_ratio.toFixed(2)}: contended]` : '';
  log(`  ${r.variant.padEnd(17)} ${r.contender.padEnd(16)} ${fmtMs(r.median_ms).padStart(8)} ms${spread}  ${r.gflops != null ? r.gflops.toFixed(2) + ' GFLOP/s' : ''}  mem ${fmtBytes(r.peak_memory_bytes)}${busy}`);
}
