// The Experiment view's configuration: what a link reproduces (task, its knobs, the variants to
// race, model size, training settings, seed, build), its URL-hash form (x.* keys next to
// view=experiment), and how one variant of it becomes a lab.model config and lab.train options —
// the same objects the worker uses and "copy as code" prints, so page and Node train alike.
//
//   #view=experiment&x.task=copy&x.seqLen=16&x.vocab=8&x.vars=softmax,linear&x.dModel=32&...&x.seed=1

import { tasks, DEFAULT_TEXT } from '../../dist/tasks.js';
// The one list of variants (name, lab variant, options, freezeParam), shared with `npm run
// experiments` and bench/training.mjs.
import { VARIANTS, modelConfig as sharedModelConfig } from './variants.js';

/** The page's own words for a variant (the rest is the shared list's); a name missing here shows as itself. */
const LABELS = {
  random: 'random (trained)',
  'random-frozen': 'random (frozen, std 1)',
  'random-frozen-0.2': 'random (frozen, std 0.2)',
  mixture: 'mixture softmax+random',
  linear: 'linear (elu+1)',
  fixed: 'fixed patterns',
};

/**
 * The variants an experiment can race: the experiments' list (named as in
 * experiments/results.json, so the answer table finds the recorded numbers; a lab variant, plus
 * the Synthesizer paper's "fixed random" (random, its r frozen) and the softmax+random mixture with
 * a learned α per head), with the page's labels on top. Their colours: colors.js, by place here.
 */
export const VARIANT_SPECS = VARIANTS.map((v) => ({ ...structuredClone(v), label: LABELS[v.name] ?? v.name }));
export const SPEC_BY_NAME = Object.fromEntries(VARIANT_SPECS.map((s) => [s.name, s]));

export const TASK_NAMES = ['recall', 'copy', 'reverse', 'sort', 'text'];
/** The knobs of each task (tasks.js's options), in form order. */
export const TASK_KNOBS = { recall: ['seqLen', 'pairs', 'vocab'], copy: ['seqLen', 'vocab'], reverse: ['seqLen', 'vocab'], sort: ['seqLen', 'vocab'], text: ['seqLen'] };
export const MODEL_FIELDS = ['dModel', 'heads', 'layers', 'dFF'];
export const TRAIN_FIELDS = ['steps', 'batch', 'lr', 'warmup', 'evalEvery', 'evalBatch'];
export const BUILDS = ['simd', 'relaxed', 'scalar'];
export const BUILD_LABELS = { simd: 'SIMD', relaxed: 'relaxed SIMD', scalar: 'scalar' };

export const PRESETS = {
  'token-to-token': { label: 'Is token-to-token needed? (recall)', task: 'recall', variants: ['softmax', 'dense', 'random', 'fixed'] },
  'softmax-recall': { label: 'Is softmax needed? (recall)', task: 'recall', variants: ['softmax', 'linear', 'efficient', 'taylor'] },
  'softmax-text': { label: 'Is softmax needed? (text)', task: 'text', variants: ['softmax', 'linear', 'efficient', 'taylor'] },
};

// The text task here always has a string: the user's, or DEFAULT_TEXT (the short paragraph) when
// the box is empty. (Without a string tasks.text() reads the 4 MB corpus, which the page does not
// fetch yet.)

/** The resolved options of a task built from knobs (tasks.js fills what is missing). Throws tasks.js's Error on bad knobs. */
export function makeTask(name, knobs, text) {
  const opts = {};
  for (const k of TASK_KNOBS[name]) if (knobs[k] != null) opts[k] = knobs[k];
  if (name === 'text') opts.text = text != null && text !== '' ? text : DEFAULT_TEXT;
  return tasks[name](opts);
}

/** A config with the task's own defaults (its knobs resolved by tasks.js, model and steps from task.defaults). */
export function configForTask(name, base = {}) {
  const task = tasks[name](name === 'text' ? { text: DEFAULT_TEXT } : {});
  const d = task.defaults;
  const knobs = {};
  for (const k of TASK_KNOBS[name]) knobs[k] = task.options[k];
  return {
    task: name,
    knobs,
    text: base.text ?? '',
    variants: base.variants ?? ['softmax', 'random', 'linear', 'mixture'],
    model: { dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF },
    train: { steps: d.steps, batch: d.batch, lr: d.lr, warmup: d.warmup, evalEvery: Math.max(1, Math.round(d.steps / 20)), evalBatch: 256 },
    seed: base.seed ?? 1,
    build: base.build ?? 'simd',
  };
}

export const defaultConfig = () => configForTask('copy');

/** lab.model's config for one variant of the experiment: the shared list's modelConfig. */
export function modelConfig(cfg, task, specName) {
  return sharedModelConfig(task, SPEC_BY_NAME[specName], cfg.model, cfg.seed);
}

/** lab.train's options (without callbacks): the model seed also seeds the data, as in the experiments. */
export const trainOptions = (cfg) => ({ ...cfg.train, seed: cfg.seed });

// ---- URL hash

const num = (v) => (v !== '' && Number.isFinite(Number(v)) ? Number(v) : null);

export function encodeConfig(cfg) {
  const parts = [['x.task', cfg.task]];
  for (const [k, v] of Object.entries(cfg.knobs)) if (v != null) parts.push([`x.${k}`, v]);
  if (cfg.task === 'text' && cfg.text) parts.push(['x.text', cfg.text]);
  parts.push(['x.vars', cfg.variants.join(',')]);
  for (const k of MODEL_FIELDS) parts.push([`x.${k}`, cfg.model[k]]);
  for (const k of TRAIN_FIELDS) parts.push([`x.${k}`, cfg.train[k]]);
  parts.push(['x.seed', cfg.seed]);
  if (cfg.build !== 'simd') parts.push(['x.build', cfg.build]);
  return parts.map(([k, v]) => `${k}=${encodeURIComponent(String(v)).replace(/%2C/gi, ',')}`).join('&');
}

/**
 * The config of a hash's x.* keys (missing ones: the task's defaults). What cannot be used keeps
 * its default and is listed in `ignored` as { key, text, why }.
 */
export function decodeConfig(hash, ignored = []) {
  const pairs = new Map();
  for (const part of hash.replace(/^#/, '').split('&')) {
    const eq = part.indexOf('=');
    if (eq < 0 || !part.startsWith('x.')) continue;
    let v;
    try {
      v = decodeURIComponent(part.slice(eq + 1));
    } catch {
      ignored.push({ key: part.slice(0, eq), text: part.slice(eq + 1), why: 'a % escape is cut off or invalid' });
      continue;
    }
    pairs.set(part.slice(2, eq), v);
  }
  let name = pairs.get('task') ?? 'copy';
  if (!TASK_NAMES.includes(name)) {
    ignored.push({ key: 'x.task', text: name, why: `expected ${TASK_NAMES.join(', ')}` });
    name = 'copy';
  }
  const cfg = configForTask(name);
  const take = (key, target, field, test = (x) => Number.isInteger(x) && x >= 1) => {
    if (!pairs.has(key)) return;
    const x = num(pairs.get(key));
    if (x != null && test(x)) target[field] = x;
    else ignored.push({ key: `x.${key}`, text: pairs.get(key), why: 'not a valid number' });
  };
  for (const k of TASK_KNOBS[name]) take(k, cfg.knobs, k);
  if (name === 'text' && pairs.has('text')) cfg.text = pairs.get('text');
  if (pairs.has('vars')) {
    const list = pairs.get('vars').split(',').filter(Boolean);
    const bad = list.filter((v) => !SPEC_BY_NAME[v]);
    if (bad.length) ignored.push({ key: 'x.vars', text: bad.join(','), why: 'no such variant' });
    const good = [...new Set(list.filter((v) => SPEC_BY_NAME[v]))];
    if (good.length) cfg.variants = good;
  }
  for (const k of MODEL_FIELDS) take(k, cfg.model, k);
  for (const k of TRAIN_FIELDS) take(k, cfg.train, k, k === 'lr' ? (x) => x > 0 : k === 'warmup' ? (x) => Number.isInteger(x) && x >= 0 : undefined);
  take('seed', cfg, 'seed', (x) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff);
  if (pairs.has('build')) {
    if (BUILDS.includes(pairs.get('build'))) cfg.build = pairs.get('build');
    else ignored.push({ key: 'x.build', text: pairs.get('build'), why: `expected ${BUILDS.join(', ')}` });
  }
  return cfg;
}

/** The view a hash asks for: 'experiment' or 'explore' (every link made before the views existed). */
export const viewOfHash = (hash) => (/(^|[#&])view=experiment(&|$)/.test(hash) ? 'experiment' : 'explore');
