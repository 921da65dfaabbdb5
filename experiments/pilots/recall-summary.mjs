// recall-summary.mjs — the pilot records of recall-pilot.mjs as a Markdown table, one row per
// setting (name): how many seeds reached 90 % held-out accuracy, at which step and after how many
// seconds of training (trainMs), the final accuracy of each seed, ms per step and the load average.
//
//   node experiments/pilots/recall-summary.mjs [experiments/pilots/recall-screen.json ...]
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2);
if (!files.length) files.push('experiments/pilots/recall-screen.json');
const rows = new Map();
for (const f of files) {
  for (const r of JSON.parse(readFileSync(f, 'utf8'))) {
    if (!rows.has(r.name)) rows.set(r.name, []);
    rows.get(r.name).push(r);
  }
}
const fmt = (x, d = 0) => x.toFixed(d);
console.log('| setting | task | model, schedule | reached 90 % | step (s) per seed | final % per seed | ms/step | load |');
console.log('|---|---|---|---:|---|---|---:|---|');
for (const [name, rs] of rows) {
  const r0 = rs[0];
  const t = r0.task, m = r0.model, s = r0.train;
  const task = `${t.layout} P${t.pairs} V${t.vocab} L${t.seqLen} Q${t.queries}${r0.supervise ? ` (${r0.supervise} supervised)` : ''}`;
  const model = `d${m.dModel} h${m.heads} ff${m.dFF}, lr ${s.lr}, wu ${s.warmup}, ${s.steps} steps`;
  const ok = rs.filter((r) => r.at90).length;
  const at = rs.map((r) => `${r.seed}: ${r.at90 ? `${r.at90.step} (${fmt(r.at90.trainMs / 1000, 1)})` : `— (${r.stepsRun})`}`).join(', ');
  const fin = rs.map((r) => fmt(r.final.evalAccuracy * 100, 1)).join(' / ');
  const ms = rs.map((r) => r.msPerStep).sort((a, b) => a - b);
  const loads = rs.flatMap((r) => r.load);
  console.log(`| ${name} | ${task} | ${model} | ${ok}/${rs.length} | ${at} | ${fin} | ${fmt(ms[ms.length >> 1], 1)} | ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)} |`);
}
