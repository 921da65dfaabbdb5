// Colours of the Experiment view: one per variant (by its place in VARIANT_SPECS, so a variant
// keeps its colour from run to run) and the chart's ink, for the theme in effect. The light set
// is Okabe–Ito-like (colour-blind safe on white); the dark set is the same hues, lighter, so the
// lines keep their contrast on the dark panel.

import { cssVar } from '../colormap.js';
import { VARIANT_SPECS } from './config.js';

const LIGHT = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#7f3c8d', '#e69f00', '#56b4e9', '#a6761d', '#1b9e77', '#e7298a', '#3969ac', '#666666'];
const DARK = ['#56b4e9', '#ff8c42', '#2fd1a0', '#f08ccb', '#c59ae6', '#f0c040', '#9ad0f5', '#d9b26a', '#6fe0bd', '#ff7ab0', '#8fb2ff', '#bbbbbb'];

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
