// Share and export: copy the link, export the last result as JSON, copy it as code.

import { $, copyText, download } from './dom.js';
import { f32str } from './gen.js';
import { store } from './store.js';
import { clearTooltip } from './tooltip.js';

function exportJson() {
  const r = store.last;
  if (!r) return;
  const arr = (x) => (x ? Array.from(x) : null);
  const inputs = {};
  for (const [k, v] of Object.entries(r.inputs)) inputs[k] = v instanceof Float32Array ? arr(v) : v;
  const data = {
    attnlab: store.lab.version, build: r.build, ...(r.adapter ? { adapter: r.adapter } : {}), variant: r.id, options: r.options, seed: store.state.seed, preset: store.state.preset, link: location.href,
    inputs, output: arr(r.output), weights: arr(r.weights), timing: r.timing,
  };
  download(`attnlab-${r.id}-n${r.dims.n}.json`, new Blob([JSON.stringify(data)], { type: 'application/json' }));
}

/** A standalone script that reproduces result r with the package. */
export function codeSnippet(r) {
  // the build that ran: WebGPU's snippet calls attnlab/webgpu (its calls return Promises)
  const gpu = r.build === 'webgpu';
  const lines = gpu ? ["import { initWebGPU } from 'attnlab/webgpu';", '', 'const lab = await initWebGPU();']
    : ["import { init } from 'attnlab';", '', 'const lab = await init();'];
  const dimNames = Object.keys(r.inputs).filter((k) => !(r.inputs[k] instanceof Float32Array));
  lines.push(`const ${dimNames.map((k) => `${k} = ${r.inputs[k]}`).join(', ')};`);
  const arrays = Object.keys(r.inputs).filter((k) => r.inputs[k] instanceof Float32Array);
  for (const k of arrays) {
    const spec = r.req.arrays.find((a) => a.name === k);
    const cols = spec?.cols ?? r.inputs[k].length;
    const rows = [];
    for (let i = 0; i < r.inputs[k].length; i += cols) rows.push('  ' + Array.from(r.inputs[k].subarray(i, i + cols), f32str).join(', ') + ',');
    lines.push(`const ${k} = new Float32Array([ // ${spec ? spec.shape.join('×') : ''}`, ...rows, ']);');
  }
  const opts = { ...r.options };
  if (r.weights) opts.weights = true;
  lines.push(`const { output${r.weights ? ', weights' : ''} } = ${gpu ? 'await ' : ''}lab.attention(${JSON.stringify(r.id)}, { ${[...dimNames, ...arrays].join(', ')} }, ${JSON.stringify(opts)});`);
  lines.push(`console.log(output); // y: ${r.dims.n}×${r.dims.dv}, row-major`);
  return lines.join('\n');
}

function openCode() {
  if (!store.last) return;
  clearTooltip(); // a locked read-out would float over the dialog
  const dlg = $('#code-dialog');
  $('#code-text').value = codeSnippet(store.last);
  if (dlg.showModal) dlg.showModal();
  else dlg.setAttribute('open', '');
  $('#code-copy').focus();
}

/** Binds the share / export buttons (they work before the library loads: copy link). */
export function initExport() {
  const copyLink = () => copyText(location.href, 'Link copied');
  $('#copy-link').addEventListener('click', copyLink);
  $('#copy-link-2').addEventListener('click', copyLink);
  $('#export-json').addEventListener('click', exportJson);
  $('#copy-code').addEventListener('click', openCode);
  $('#code-copy').addEventListener('click', () => copyText($('#code-text').value, 'Code copied'));
  $('#code-close').addEventListener('click', () => $('#code-dialog').close());
}

