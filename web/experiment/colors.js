// Colours of the Experiment view: one per variant (by its place in VARIANT_SPECS, so a variant
// keeps its colour from run to run) and the chart's ink, for the theme in effect. The light set
// is Okabe–Ito-like (colour-blind safe on white); the dark set is the same hues, lighter, so the
// lines keep their contrast on the dark panel.

import { cssVar } from '../colormap.js';
import { VARIANT_SPECS } from './config.js';

// In VARIANT_SPECS order (random-frozen-0.2, the contrast, in a lighter brown than random-frozen). The presets' sets (softmax, linear, efficient, taylor; softmax, dense,
// random, fixed), the default one (softmax, random, linear, mixture) and the long-generation
// chart's (softmax, mixture, linear, efficient, taylor, fixed) each get hues far apart
// (no two blues or two greens in one set), so their lines stay apart on a chart.
const LIGHT = ['#0072b2', '#d55e00', '#999933', '#cc79a7', '#8c510a', '#bf812d', '#56b4e9', '#882255', '#7f3c8d', '#009e73', '#c0143c', '#e69f00', '#666666'];
const DARK = ['#4da3ff', '#ff8c42', '#c8c85a', '#f08ccb', '#c9955c', '#dfc27d', '#7fe0e0', '#d98fd0', '#b48cff', '#2fd1a0', '#ff6b6b', '#f0c040', '#bbbbbb'];

const dark = () => document.documentElement.dataset.scheme === 'dark';

export function variantColor(name) {
  const i = Math.max(0, VARIANT_SPECS.findIndex((s) => s.name === name));
  return (dark() ? DARK : LIGHT)[i % LIGHT.length];
}

/** A mixture's components: softmax and random, in their own variants' colours. */
export const componentColor = (id) => variantColor(id);

export function chartColors() {
  return { bg: cssVar('--panel', dark() ? '#1a1d23' : '#ffffff'), fg: cssVar('--fg', '#1b1d21'), muted: cssVar('--muted', '#5d6470'), grid: cssVar('--chart-grid', 'rgba(0,0,0,0.09)') };
}
