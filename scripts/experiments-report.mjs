// experiments-report.mjs — turns experiments/results.json into results.md (a table per task) and
// one learning-curve SVG per task (held-out accuracy against step, one line per variant, the
// mean over seeds), written as plain SVG text.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const COLORS = ['#000000', '#e6194b', '#f58231', '#3cb44b', '#2f8f2f', '#4363d8', '#42d4f4', '#911eb4',
  '#f032e6', '#9a6324', '#808000', '#a9a9a9'];

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (x) => (100 * x).toFixed(1);
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The first evaluated step at which held-out accuracy reached 90 %, or null. */
export function stepsTo90(run) {
  return run.history.find((p) => p.evalAccuracy >= 0.9)?.step ?? null;
}

/** Per task and variant: the runs, in seed order. */
function group(result) {
  const g = new Map();
  for (const r of result.runs) {
    if (!g.has(r.task)) g.set(r.task, new Map());
    const t = g.get(r.task);
    if (!t.has(r.variant)) t.set(r.variant, []);
    t.get(r.variant).push(r);
  }
  for (const t of g.values()) for (const rs of t.values()) rs.sort((a, b) => a.seed - b.seed);
  return g;
}

function alphaText(runs) {
  // Mean over seeds of each layer/head's weights; "l0h0 s.62 r.38" per head.
  const withAlpha = runs.filter((r) => r.alpha);
  if (!withAlpha.length) return '';
  const a0 = withAlpha[0].alpha;
  const parts = [];
  for (let l = 0; l < a0.length; l++) {
    for (let h = 0; h < a0[l].length; h++) {
      const w = a0[l][h].map((_, c) => mean(withAlpha.map((r) => r.alpha[l][h][c])));
      parts.push(`l${l}h${h} ${w.map((x) => x.toFixed(2)).join('/')}`);
    }
  }
  return parts.join(', ');
}

function row(name, runs) {
  const ok = runs.filter((r) => r.final);
  const accs = ok.map((r) => r.final.evalAccuracy);
  const m = mean(accs);
  const spread = (Math.max(...accs) - Math.min(...accs)) / 2;
  const loss = mean(ok.map((r) => r.final.evalLoss));
  const reached = runs.map(stepsTo90);
  const hit = reached.filter((s) => s !== null);
  const to90 = hit.length === 0 ? 'not reached'
    : `${Math.round(mean(hit))}${hit.length < runs.length ? ` (${hit.length} of ${runs.length} seeds)` : ''}`;
  const ms = mean(ok.filter((r) => r.msPerStep).map((r) => r.msPerStep));
  const failed = runs.filter((r) => r.error).length;
  const perSeed = accs.map(pct).join(', ');
  return `| ${name}${failed ? ` (${failed} failed)` : ''} | ${pct(m)} ± ${pct(spread)} | ${perSeed} | ${loss.toFixed(3)} | ${to90} | ${Number.isFinite(ms) ? ms.toFixed(1) : '-'} | ${alphaText(runs)} |`;
}

/** The mean held-out accuracy curve of some runs: [[step, acc]] over the steps all of them report. */
function meanCurve(runs) {
  const steps = runs[0].history.map((p) => p.step).filter((s) => runs.every((r) => r.history.some((p) => p.step === s)));
  return steps.map((s) => [s, mean(runs.map((r) => r.history.find((p) => p.step === s).evalAccuracy))]);
}

export function svgFor(taskName, variants, order = variants.map(([n]) => n)) {
  const W = 720, H = 420, L = 56, R = 190, T = 34, B = 46;
  const pw = W - L - R, ph = H - T - B;
  const maxStep = Math.max(1, ...variants.flatMap(([, runs]) => runs.map((r) => r.history.at(-1)?.step ?? 0)));
  const x = (s) => L + (pw * s) / maxStep, y = (a) => T + ph * (1 - a);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="20" font-size="14" font-weight="bold">${esc(taskName)}: held-out accuracy (mean over seeds)</text>`];
  for (let k = 0; k <= 10; k += 2) {
    const a = k / 10;
    out.push(`<line x1="${L}" y1="${y(a)}" x2="${L + pw}" y2="${y(a)}" stroke="#ddd"/>`,
      `<text x="${L - 6}" y="${y(a) + 4}" text-anchor="end">${k * 10}%</text>`);
  }
  out.push(`<line x1="${L}" y1="${y(0.9)}" x2="${L + pw}" y2="${y(0.9)}" stroke="#999" stroke-dasharray="4 3"/>`);
  for (let k = 0; k <= 5; k++) {
    const s = Math.round((maxStep * k) / 5);
    out.push(`<text x="${x(s)}" y="${T + ph + 18}" text-anchor="middle">${s}</text>`);
  }
  out.push(`<text x="${L + pw / 2}" y="${H - 8}" text-anchor="middle">training step</text>`,
    `<rect x="${L}" y="${T}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  variants.forEach(([name, runs], i) => {
    const color = COLORS[Math.max(0, order.indexOf(name)) % COLORS.length];
    const ok = runs.filter((r) => r.history.length);
    if (!ok.length) return;
    const pts = meanCurve(ok).map(([s, a]) => `${x(s).toFixed(1)},${y(a).toFixed(1)}`).join(' ');
    const dash = name.includes('frozen') || name.startsWith('factorized') ? ' stroke-dasharray="6 3"' : '';
    out.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="1.8" stroke-opacity="0.85"${dash}/>`);
    const ly = T + 8 + i * 17;
    out.push(`<line x1="${L + pw + 12}" y1="${ly}" x2="${L + pw + 36}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${L + pw + 42}" y="${ly + 4}">${esc(name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The seeds whose runs are all there (every task and variant of the run's arguments). */
function completeSeeds(result) {
  const want = result.args.tasks.length * result.variants.length;
  const seeds = [];
  const first = result.args.seedStart ?? 1;
  for (let seed = first; seed < first + result.args.seeds; seed++) {
    if (result.runs.filter((r) => r.seed === seed).length === want) seeds.push(seed);
  }
  return seeds;
}

export function writeReport(result, dir) {
  const seeds = completeSeeds(result);
  const partial = seeds.length < result.args.seeds;
  const g = group(partial ? { ...result, runs: result.runs.filter((r) => seeds.includes(r.seed)) } : result);
  const order = result.variants.map((v) => v.name);
  const m = result.machine;
  const lines = ['# Experiments: every attention variant trained on every task', '',
    `Recorded ${result.date} on ${m.cpu} (${m.cores} cores), ${m.os}, Node ${m.node}, the ${result.build ?? '?'} build, ` +
    `commit ${result.commit ? result.commit.slice(0, 10) : 'unknown'}${result.dirty ? ' (with uncommitted changes)' : ''}; ` +
    `${result.runs.length} runs, ${result.args.workers} at a time, in ${((result.totalMs ?? 0) / 60000).toFixed(1)} min. ` +
    `Seeds ${result.args.seedStart ?? 1}..${(result.args.seedStart ?? 1) + result.args.seeds - 1} (each seeds both the model's initialisation and its training data); ` +
    `tasks ${result.args.tasks.join(', ')}; steps × ${result.args.stepsScale} of the task defaults.`,
    '', 'Reproduce: `npm run experiments -- ' +
    `--seeds ${result.args.seeds}${(result.args.seedStart ?? 1) !== 1 ? ` --seed-start ${result.args.seedStart}` : ''}${result.args.variants.length < 12 ? ` --variants ${result.args.variants.join(',')}` : ''}${result.args.tasks.length < 5 ? ` --tasks ${result.args.tasks.join(',')}` : ''}` +
    `${result.args.stepsScale !== 1 ? ` --steps-scale ${result.args.stepsScale}` : ''}\` (timings will differ; accuracies are deterministic for a build).`, ''];
  if (partial) {
    lines.push(`**Incomplete run:** it was stopped after ${result.runs.length} of ${result.args.tasks.length * result.variants.length * result.args.seeds} runs. ` +
      `The tables and curves use only the seeds whose runs all finished: ${seeds.length ? seeds.join(', ') : 'none'}; ` +
      'results.json holds every finished run.', '');
  }
  const notes = path.join(dir, 'notes.md');
  if (existsSync(notes)) lines.push(readFileSync(notes, 'utf8').trim(), '');
  lines.push('## Tables', '',
    'Held-out accuracy is the last evaluation (after the final step) on a fixed held-out set: ' +
    '`mean ± half the range` over seeds, then each seed. "Steps to 90 %" is the first evaluation at or above 90 %, ' +
    'averaged over the seeds that reached it. ms/step is the mean wall time of a training step (two trainings ran at once on the two cores). ' +
    'α (mixture only) is the learned weight of softmax/random per layer and head after training, mean over seeds.', '');
  for (const [taskName, byVariant] of g) {
    const info = result.tasks[taskName];
    const s = info.settings;
    lines.push(`### ${taskName}`, '',
      `Task options ${JSON.stringify(info.options)}; vocab ${info.vocab}, seqLen ${info.seqLen}. Model dModel ${s.dModel}, ${s.heads} head${s.heads === 1 ? "" : "s"}, ` +
      `${s.layers} layers, dFF ${s.dFF}; ${s.steps} steps of batch ${s.batch}, lr ${s.lr} (warmup ${s.warmup}, cosine decay), ` +
      `evaluated every ${s.evalEvery} steps on ${taskName !== 'text' ? `${s.evalBatch} held-out sequences`
        : info.options.text ? 'every held-out character' : '128 fixed windows of the held-out chapters (evalWindows)'}.`, '',
      `![${taskName} learning curves](${taskName}.svg)`, '',
      '| variant | held-out accuracy % | per seed | held-out loss | steps to 90 % | ms/step | learned α (softmax/random) |',
      '|---|---|---|---|---|---|---|');
    const names = [...byVariant.keys()].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    for (const name of names) lines.push(row(name, byVariant.get(name)));
    lines.push('');
    writeFileSync(path.join(dir, `${taskName}.svg`), svgFor(taskName, names.map((n) => [n, byVariant.get(n)]), order));
  }
  writeFileSync(path.join(dir, 'results.md'), `${lines.join('\n')}\n`);
}
