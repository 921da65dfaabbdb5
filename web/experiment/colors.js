// Colours of the Experiment view: one per variant (by its place in VARIANT_SPECS, so a variant
// keeps its colour from run to run) and the chart's ink, for the theme in effect. The light set
// is Okabe–Ito-like (colour-blind safe on white); the dark set is the same hues, lighter, so the
// lines keep their contrast on the dark panel.

import { cssVar } from '../colormap.js';
import { VARIANT_SPECS } from './config.js';

// In VARIANT_SPECS order. Every light colour has at least 3:1 contrast on the light panel and every
// dark one on the dark panel (WCAG's bar for lines), and no two are the same hue family: softmax
// blue, dense vermillion, dense1 olive, random magenta, the frozen randoms brown and (the
// contrast) a lighter brown, factorized-dense near-black (near-white in the dark theme),
// factorized-random wine, the mixture violet, linear green, efficient crimson, taylor teal, fixed
// grey. The presets' sets (softmax, dense, random, random-frozen, fixed; softmax, linear,
// efficient, taylor; softmax, dense, random, linear) and the long-generation chart's (softmax,
// mixture, linear, efficient, taylor, fixed) get hues far apart, so their lines stay apart.
export const LIGHT = ['#0072b2', '#d55e00', '#8a8a00', '#cc3d91', '#8c510a', '#b8863b', '#1f1f1f', '#882255', '#7b4fb8', '#008c5a', '#c0143c', '#00838f', '#737373'];
export const DARK = ['#4da3ff', '#ff8c42', '#c8c85a', '#f08ccb', '#c9955c', '#dfc27d', '#f2f2f2', '#ff9eb5', '#b48cff', '#2fd1a0', '#ff6b6b', '#3fd0e0', '#9a9a9a'];

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
