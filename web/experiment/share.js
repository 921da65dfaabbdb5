// Share and export an experiment: the run as JSON (config, every curve point, final metrics), the
// curves as SVG or PNG (the charts' own SVG text), and "copy as code": the npm snippet that
// trains the same models in Node with lab.model / lab.train and gives the same numbers on the
// same build.

import { download } from '../dom.js';
import { modelConfig, trainOptions, makeTask, runList, lrOf, labelOf, textOf } from './config.js';
import { variantColor, chartColors } from './colors.js';
import { curveSvgs } from './curves.js';
import { svgToPng } from './svg-chart.js';

// threads: 1, as the page's workers train: the numbers are the page's bit for bit (training is
// bit-identical at every thread count except a causal linear-family model at batch 1 with seqLen > 64)
const INIT_ARGS = { simd: '{ simd: true, threads: 1 }', relaxed: "{ simd: 'relaxed', threads: 1 }", scalar: '{ simd: false, threads: 1 }' };

export function runJson(cfg, runs) {
  return {
    attnlab: 'experiment',
    config: cfg,
    runs: runs.map((r) => ({
      variant: r.name, seed: r.seed, lr: r.lr, status: r.status, trained: !r.untrained && r.history.length > 0, build: r.build, parameterCount: r.parameterCount, error: r.error,
      history: r.history, final: r.history.at(-1) ?? null, steps: r.result?.steps ?? r.history.at(-1)?.step ?? 0,
      ms: r.result?.ms ?? null, trainMs: r.result?.trainMs ?? null,
    })),
  };
}

export function exportJson(cfg, runs) {
  download(`attnlab-experiment-${cfg.task}.json`, new Blob([JSON.stringify(runJson(cfg, runs), null, 1)], { type: 'application/json' }));
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Both charts side by side and a legend under them: one file that stands on its own. */
export function curvesFile(cfg, runs, xAxis, chance = null) {
  const width = 480, height = 280, legendH = 26;
  const svgs = curveSvgs(runs, cfg, xAxis, width, chance);
  const colors = chartColors();
  let x = 10;
  const legend = runs.map((r) => {
    const f = r.history.at(-1);
    const value = cfg.task === 'text' ? (Number.isFinite(f?.evalBits) ? `${f.evalBits.toFixed(3)} bits/char` : '–') : Number.isFinite(f?.evalAccuracy) ? `${(f.evalAccuracy * 100).toFixed(1)} %` : '–';
    const label = `${labelOf(r.name)}${cfg.seeds > 1 ? ` seed ${r.seed}` : ''}: ${value}`;
    const item = `<rect x="${x}" y="${height + 8}" width="14" height="10" fill="${variantColor(r.name)}"/><text x="${x + 18}" y="${height + 17}" fill="${colors.fg}">${esc(label)}</text>`;
    x += 30 + label.length * 6.2;
    return item;
  }).join('');
  const total = Math.max(2 * width, x);
  const nested = (svg, dx) => svg.replace('<svg ', `<svg x="${dx}" y="0" `);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${height + legendH}" width="${total}" height="${height + legendH}" font-family="system-ui, sans-serif" font-size="11">` +
    `<rect width="${total}" height="${height + legendH}" fill="${colors.bg}"/>${nested(svgs.loss, 0)}${nested(svgs.accuracy, width)}${legend}</svg>`;
}

export async function exportCurves(cfg, runs, xAxis, format, chance = null) {
  const svg = curvesFile(cfg, runs, xAxis, chance);
  const name = `attnlab-${cfg.task}-curves-by-${xAxis}.${format}`;
  download(name, format === 'svg' ? new Blob([svg], { type: 'image/svg+xml' }) : await svgToPng(svg));
}

/** The Node code that reproduces the runs (task: the runs' task, when it reads the corpus). */
export function codeSnippet(cfg, task = null) {
  const own = textOf(cfg);
  // the corpus: Node reads the shipped one by itself (tasks.text() with no text)
  const t = task ?? makeTask(cfg);
  const taskArgs = {};
  for (const [k, v] of Object.entries(t.options)) if (k !== 'corpus') taskArgs[k] = v;
  if (own != null) taskArgs.text = own;
  const runs = runList(cfg);
  const { lr: _lr, seed: _seed, ...common } = trainOptions(cfg);
  const key = (name, seed) => (cfg.seeds > 1 ? `${name} seed ${seed}` : name);
  const lines = [
    "import { init, tasks } from 'attnlab';",
    '',
    `// the ${cfg.build} build, as the page used: the same build gives the same numbers`,
    `const lab = await init(${INIT_ARGS[cfg.build]});`,
    `const task = tasks.${cfg.task}(${JSON.stringify(taskArgs)});${cfg.task === 'text' && own == null ? ' // the corpus (Node reads the shipped one)' : ''}`,
    `const trainOptions = ${JSON.stringify(common)};`,
    '// each run: its variant, seed (model and data), learning rate and lab.model config',
    'const runs = [',
    ...runs.map(({ name, seed }) => `  [${JSON.stringify(key(name, seed))}, ${seed}, ${lrOf(cfg, name)}, ${JSON.stringify(modelConfig(cfg, t, name, seed))}],`),
    '];',
    'const results = {};',
    'for (const [name, seed, lr, config] of runs) {',
    '  const model = lab.model(config);',
    '  const { history, final } = await lab.train(model, task, {',
    '    ...trainOptions, lr, seed, onProgress: (p) => console.log(name, p.step, p.loss.toFixed(4), p.evalAccuracy),',
    '  });',
    '  results[name] = final;',
    '  model.dispose();',
    '}',
    'console.table(results);',
  ];
  return lines.join('\n');
}
