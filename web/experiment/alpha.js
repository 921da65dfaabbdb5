// Mixtures: the weight α of each component per head over training, as stacked areas (bottom:
// the first component). Shows which component each head came to rely on. Drawn from the α that
// lab.train's progress entries carry for a mixture.

import { el } from '../dom.js';
import { stackedArea } from './svg-chart.js';
import { componentColor, chartColors } from './colors.js';
import { SPEC_BY_NAME } from './config.js';

export function renderAlpha(root, runs) {
  const mixtures = runs.filter((r) => SPEC_BY_NAME[r.name]?.variant === 'mixture' && r.history.some((p) => p.alpha));
  root.hidden = !mixtures.length;
  if (!mixtures.length) return root.replaceChildren();
  const colors = chartColors();
  const blocks = mixtures.map((r) => {
    const comps = SPEC_BY_NAME[r.name].options.components;
    const hist = r.history.filter((p) => p.alpha);
    const xs = hist.map((p) => p.step);
    const { layers, heads } = { layers: hist[0].alpha.length, heads: hist[0].alpha[0].length };
    const figs = [];
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const last = hist.at(-1).alpha[l][h];
        const svg = stackedArea({
          title: `layer ${l} · head ${h}`, xLabel: 'step', xs, colors,
          layers: comps.map((c, k) => ({ label: `${c}: α`, color: componentColor(c), values: hist.map((p) => p.alpha[l][h][k]) })),
        });
        const fig = el('figure', { class: 'x-alpha-fig', dataset: { layer: String(l), head: String(h) } });
        fig.innerHTML = svg;
        fig.append(el('figcaption', { class: 'note', text: comps.map((c, k) => `${c} ${(last[k] * 100).toFixed(0)} %`).join(' · ') }));
        figs.push(fig);
      }
    }
    const key = el('p', { class: 'note' }, 'α per head over training: ',
      ...comps.flatMap((c) => { const sw = el('i', { class: 'swatch' }); sw.style.background = componentColor(c); return [sw, ` ${c} `]; }));
    return el('div', { class: 'x-alpha', dataset: { variant: r.name } }, el('h4', { text: SPEC_BY_NAME[r.name].label }), key, el('div', { class: 'x-alpha-grid' }, ...figs));
  });
  root.replaceChildren(el('h3', { text: 'Which component did each head choose?' }), ...blocks);
}
