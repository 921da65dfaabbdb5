// Colours of the Experiment view: one per variant, by its name (a VARIANT_SPECS name, so a variant
// keeps its colour from run to run and a variant added to the registry moves no other's colour),
// and the chart's ink, for the theme in effect. The light set is Okabe–Ito-like (colour-blind safe
// on white); the dark set is the same hues, lighter, so the lines keep their contrast on the dark
// panel.

import { cssVar } from '../colormap.js';

// [light, dark] per name. Every light colour has at least 3:1 contrast on the light panel and every
// dark one on the dark panel (WCAG's bar for lines), and no two are the same hue family: softmax
// blue, dense vermillion, dense1 olive, random magenta, the frozen randoms brown and (the
// contrast) a lighter brown, factorized-dense near-black (near-white in the dark theme),
// factorized-random wine, the mixture violet, linear green, efficient crimson, taylor teal, fixed
// grey. The presets' sets (softmax, dense, random, random-frozen, fixed; softmax, linear,
// efficient, taylor; softmax, dense, random, linear) and the long-generation chart's (softmax,
// mixture, linear, efficient, taylor, fixed) get hues far apart, so their lines stay apart.
// A new variant gets its entry here (tests/registry.test.mjs names one that has none); until then
// it is drawn in FALLBACK.
export const COLORS = {
  softmax: ['#0072b2', '#4da3ff'],
  dense: ['#d55e00', '#ff8c42'],
  dense1: ['#8a8a00', '#c8c85a'],
  random: ['#cc3d91', '#f08ccb'],
  'random-frozen': ['#8c510a', '#c9955c'],
  'random-frozen-0.2': ['#b8863b', '#dfc27d'],
  'factorized-dense': ['#1f1f1f', '#f2f2f2'],
  'factorized-random': ['#882255', '#ff9eb5'],
  mixture: ['#7b4fb8', '#b48cff'],
  linear: ['#008c5a', '#2fd1a0'],
  efficient: ['#c0143c', '#ff6b6b'],
  taylor: ['#00838f', '#3fd0e0'],
  fixed: ['#737373', '#9a9a9a'],
};
/** A name without an entry in COLORS: an indigo no entry is near (CIE ΔE 21 or more in the light
 * theme, 29 in the dark; the grey it replaces was 8 from fixed's, which the page's palette test
 * reads as alike), with the lines' contrast in both themes. */
export const FALLBACK = ['#3b5bdb', '#bac8ff'];

const dark = () => document.documentElement.dataset.scheme === 'dark';

export function variantColor(name) {
  const pair = Object.hasOwn(COLORS, name) ? COLORS[name] : FALLBACK;
  return pair[dark() ? 1 : 0];
}

/** A mixture's components: softmax and random, in their own variants' colours. */
export const componentColor = (id) => variantColor(id);

export function chartColors() {
  return { bg: cssVar('--panel', dark() ? '#1a1d23' : '#ffffff'), fg: cssVar('--fg', '#1b1d21'), muted: cssVar('--muted', '#5d6470'), grid: cssVar('--chart-grid', 'rgba(0,0,0,0.09)') };
}
