// Share and export an experiment: the run as JSON (config, every curve point, final metrics), the
// curves as SVG or PNG (the charts' own SVG text), and "copy as code": the npm snippet that
// trains the same models in Node with lab.model / lab.train and gives the same numbers on the
// same build.

import { download } from '../dom.js';
import { modelConfig, trainOptions, makeTask, SPEC_BY_NAME } from './config.js';
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
      variant: r.name, status: r.status, trained: !r.untrained && r.history.length > 0, build: r.build, parameterCount: r.parameterCount, error: r.error,
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
export function curvesFile(cfg, runs, xAxis) {
  const width = 480, height = 280, legendH = 26;
  const svgs = curveSvgs(runs, cfg, xAxis, width);
  const colors = chartColors();
  let x = 10;
  const legend = runs.map((r) => {
    const label = `${SPEC_BY_NAME[r.name]?.label ?? r.name}: ${Number.isFinite(r.history.at(-1)?.evalAccuracy) ? `${(r.history.at(-1).evalAccuracy * 100).toFixed(1)} %` : '–'}`;
    const item = `<rect x="${x}" y="${height + 8}" width="14" height="10" fill="${variantColor(r.name)}"/><text x="${x + 18}" y="${height + 17}" fill="${colors.fg}">${esc(label)}</text>`;
    x += 30 + label.length * 6.2;
    return item;
  }).join('');
  const total = Math.max(2 * width, x);
  const nested = (svg, dx) => svg.replace('<svg ', `<svg x="${dx}" y="0" `);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${height + legendH}" width="${total}" height="${height + legendH}" font-family="system-ui, sans-serif" font-size="11">` +
    `<rect width="${total}" height="${height + legendH}" fill="${colors.bg}"/>${nested(svgs.loss, 0)}${nested(svgs.accuracy, width)}${legend}</svg>`;
}

export async function exportCurves(cfg, runs, xAxis, format) {
  const svg = curvesFile(cfg, runs, xAxis);
  const name = `attnlab-${cfg.task}-curves-by-${xAxis}.${format}`;
  download(name, format === 'svg' ? new Blob([svg], { type: 'image/svg+xml' }) : await svgToPng(svg));
}

/** The Node code that reproduces the run. */
export function codeSnippet(cfg) {
  const task = makeTask(cfg.task, cfg.knobs, cfg.text);
  const taskArgs = { ...task.options }; // text: the string itself (tasks.text() alone would read the corpus)
  const configs = cfg.variants.map((name) => modelConfig(cfg, task, name));
  const lines = [
    "import { init, tasks } from 'attnlab';",
    '',
    `// the ${cfg.build} build, as the page used: the same build gives the same numbers`,
    `const lab = await init(${INIT_ARGS[cfg.build]});`,
    `const task = tasks.${cfg.task}(${JSON.stringify(taskArgs)});`,
    `const trainOptions = ${JSON.stringify(trainOptions(cfg))};`,
    'const models = {',
    ...cfg.variants.map((name, i) => `  ${JSON.stringify(name)}: ${JSON.stringify(configs[i])},`),
    '};',
    'const results = {};',
    'for (const [name, config] of Object.entries(models)) {',
    '  const model = lab.model(config);',
    '  const { history, final } = await lab.train(model, task, {',
    '    ...trainOptions, onProgress: (p) => console.log(name, p.step, p.loss.toFixed(4), p.evalAccuracy),',
    '  });',
    '  results[name] = final;',
    '  model.dispose();',
    '}',
    'console.table(results);',
  ];
  return lines.join('\n');
}
