// The Experiment view's configuration: what a link reproduces (task, its knobs, the variants to
// race and each one's learning rate, model size, training settings, seed and how many seeds,
// build), its URL-hash form (x.* keys next to view=experiment), the presets (the recorded study's
// experiments), and how one run of it becomes a lab.model config and lab.train options — the same
// objects the worker uses and "copy as code" prints, so page and Node train alike.
//
//   #view=experiment&x.task=copy&x.seqLen=16&x.vocab=8&x.vars=softmax,linear&x.lrs=linear:0.01&x.dModel=32&...&x.seed=1&x.seeds=3

import { tasks, DEFAULT_TEXT, TASK_NAMES as ALL_TASKS, TASK_KNOBS as ALL_TASK_KNOBS } from '../../dist/tasks.js';
// The experiments' facts (the one list of variants with each run's model config, the threshold of
// "learned", the evaluations per run), shared with `npm run experiments` and the benchmark.
import { experimentVariants, modelConfig as sharedModelConfig, THRESHOLD, EVAL_POINTS } from '../../dist/experiment.js';
import { BUILDS as BUILD_MANIFEST } from '../../dist/builds.js';

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
 * The variants an experiment can race: the experiments' list (dist/experiment.js: every variant of the
 * binding, named as in experiments/summary.json so the verdicts find the recorded numbers, plus
 * the Synthesizer paper's "fixed random" (random, its r frozen) and the softmax+random mixture with
 * a learned α per head), with the page's labels on top. Their colours: colors.js, by name.
 * Empty until useLabVariants: the list follows the binding the page loaded, so a new variant
 * shows here by itself.
 */
export let VARIANT_SPECS = [];
export let SPEC_BY_NAME = {};
export const labelOf = (name) => SPEC_BY_NAME[name]?.label ?? name;

/**
 * Sets the variants from the binding's lab.variants (the explore worker's hello), before any
 * config is made or read. Each spec also says whether its trained widths define a model of any
 * seqLen (decodesPastSeqLen, for the long-generation timing): not when the variant's parameters
 * are sized by L, the length the Synthesizer parameters were made for (dense: [hidden, L],
 * random: L × L, ...; the mixture, whose inputs are its components'), since it then decodes only
 * up to its own seqLen (docs/model.md, "Generation").
 */
export function useLabVariants(labVariants) {
  const byId = new Map(labVariants.map((v) => [v.id, v]));
  VARIANT_SPECS = experimentVariants(labVariants).map((v) => ({
    ...structuredClone(v), label: LABELS[v.name] ?? v.name, decodesPastSeqLen: !byId.get(v.variant).dims.includes('L'),
  }));
  SPEC_BY_NAME = Object.fromEntries(VARIANT_SPECS.map((s) => [s.name, s]));
}

/**
 * The tasks the view trains: every task of tasks.js but verses, which the study trains as a
 * fine-tuning of text models (a step the view does not offer).
 */
export const TASK_NAMES = ALL_TASKS.filter((t) => t !== 'verses');
/** The knobs of each task that always have a field (tasks.js's TASK_KNOBS), in form order. */
export const TASK_KNOBS = Object.fromEntries(TASK_NAMES.map((t) => [t, ALL_TASK_KNOBS[t]]));
/** Options of a task that are never knobs: the text itself and the corpus. */
const NOT_KNOBS = new Set(['text', 'corpus']);
export const MODEL_FIELDS = ['dModel', 'heads', 'layers', 'dFF'];
export const TRAIN_FIELDS = ['steps', 'batch', 'lr', 'warmup', 'evalEvery', 'evalBatch'];
/** The builds a run may name (dist/builds.js), SIMD first: the one every engine with SIMD128 runs. */
export const BUILDS = ['simd', ...BUILD_MANIFEST.map((b) => b.name).filter((name) => name !== 'simd')];
export const BUILD_LABELS = Object.fromEntries(BUILD_MANIFEST.map((b) => [b.name, b.label]));
/** Where the text task's text comes from: the corpus the study used, the short paragraph, or the user's own. */
export const TEXT_SOURCES = ['corpus', 'paragraph', 'own'];

/**
 * The largest value of each number the form and a link take: what one tab can train in reasonable
 * time and memory (the binding's own limits are far larger). A larger value is refused, named.
 */
export const LIMITS = {
  seqLen: 1024, pairs: 256, vocab: 4096, queries: 256,
  dModel: 1024, heads: 64, layers: 16, dFF: 4096,
  steps: 20000, batch: 1024, warmup: 20000, evalEvery: 20000, evalBatch: 4096,
  seed: 0xffffffff, seeds: 10, lr: 1,
};
/** Texts longer than this stay out of the link (a link of 200 KB is slow to open and to share). */
export const TEXT_LINK_MAX = 2000;
/** The accuracy at which a run counts as having learned a task (the study's threshold). */
export const LEARNED = THRESHOLD;
export { EVAL_POINTS };

/** The field names shown to the user, also in messages. */
export const FIELD_LABELS = {
  seqLen: 'sequence length', pairs: 'pairs', vocab: 'vocabulary', queries: 'queries', layout: 'layout',
  dModel: 'dModel', heads: 'heads', layers: 'layers', dFF: 'dFF',
  steps: 'steps', batch: 'batch', lr: 'learning rate', warmup: 'warmup steps', evalEvery: 'evaluate every', evalBatch: 'held-out sequences',
  seed: 'seed', seeds: 'seeds',
};

/**
 * The presets: the recorded study's experiments (scripts/study/plan.mjs), each on a task of its
 * own (`tasks`: the ones a preset offers). A preset takes the task's defaults as the study did
 * (tasks.js's options and defaults read at run time, so a change of a task's defaults is followed)
 * and, from experiments/summary.json when it is there, the study's training settings and each
 * variant's learning rate: the same seed and build then train exactly the study's runs.
 */
export const PRESETS = [
  { id: 'token-copy', question: 'token', task: 'copy', variants: ['softmax', 'dense', 'random', 'random-frozen', 'fixed'] },
  { id: 'token-reverse', question: 'token', task: 'reverse', variants: ['softmax', 'dense', 'random', 'random-frozen', 'fixed'] },
  { id: 'softmax-copy', question: 'softmax', task: 'copy', variants: ['softmax', 'linear', 'efficient', 'taylor'] },
  { id: 'softmax-recall', question: 'softmax', task: 'recall', variants: ['softmax', 'linear', 'efficient', 'taylor'] },
  { id: 'lookup', question: 'lookup', task: 'recall', variants: ['softmax', 'dense', 'random', 'linear'] },
  { id: 'language', question: 'language', task: 'text', variants: ['softmax', 'dense', 'random', 'linear'] },
];
export const PRESET_BY_ID = Object.fromEntries(PRESETS.map((p) => [p.id, p]));
/** What each kind of preset asks, and what it shows. */
export const PRESET_QUESTIONS = {
  token: { title: 'Is token-to-token attention needed?', what: 'softmax against the Synthesizers (dense, random trained and frozen) and fixed patterns, which never compare two tokens' },
  softmax: { title: 'Is softmax needed?', what: 'softmax against the linear family (linear, efficient, taylor), which keeps a fixed-size state instead of the n×n weights' },
  lookup: { title: 'Content lookup', what: 'associative recall at the task\'s defaults: one of each family (softmax, dense, random, linear)' },
  language: { title: 'Language', what: 'the next character of the King James Bible, in bits per character: one of each family' },
};

// ---- tasks

/** The options of a task that are knobs (not the text nor the corpus). */
export function knobsOf(task) {
  const knobs = {};
  for (const [k, v] of Object.entries(task.options)) if (!NOT_KNOBS.has(k)) knobs[k] = v;
  return knobs;
}

// The text task's knobs on the corpus: tasks.text({ corpus })'s own, once the corpus is loaded
// (corpus.js calls setCorpusKnobs); until then its default sequence length (src/js/tasks.js).
let corpusKnobs = { seqLen: 64 };
export function setCorpusKnobs(knobs) {
  corpusKnobs = { ...knobs };
}

/**
 * The knobs a task's defaults take: the always-shown ones, plus any other whose default a knob
 * change would not give. source: the text task's (its defaults differ on the corpus).
 */
export function defaultKnobs(name, source = 'corpus') {
  if (name === 'text' && source === 'corpus') return { ...corpusKnobs };
  const def = knobsOf(tasks[name](name === 'text' ? { text: DEFAULT_TEXT } : {}));
  const knobs = {};
  for (const k of TASK_KNOBS[name]) knobs[k] = def[k];
  // e.g. a recall default that is not derived from pairs the way tasks.js derives it from the
  // knobs given: carry it, so the preset's task is the study's
  const derived = knobsOf(tasks[name](name === 'text' ? { text: DEFAULT_TEXT, ...knobs } : knobs));
  for (const [k, v] of Object.entries(def)) if (derived[k] !== v) knobs[k] = v;
  return knobs;
}

/** The text a config trains on when it is not the corpus (null: the corpus). */
export function textOf(cfg) {
  if (cfg.task !== 'text' || cfg.source === 'corpus') return null;
  return cfg.source === 'own' ? cfg.text : DEFAULT_TEXT;
}

/**
 * The task of a config. corpus: the loaded corpus (corpus.js), needed when the text task reads it.
 * Throws tasks.js's Error on knobs that do not fit together.
 */
export function makeTask(cfg, corpus = null) {
  const opts = { ...cfg.knobs };
  if (cfg.task === 'text') {
    const text = textOf(cfg);
    if (text != null) opts.text = text;
    else {
      if (!corpus) throw Object.assign(new Error('the corpus is not loaded yet'), { code: 'CORPUS' });
      opts.corpus = corpus;
    }
  }
  return tasks[cfg.task](opts);
}

/** A config with the task's own defaults (its knobs resolved by tasks.js, model and steps from task.defaults). */
export function configForTask(name, base = {}) {
  const d = tasks[name](name === 'text' ? { text: DEFAULT_TEXT } : {}).defaults;
  return {
    task: name,
    knobs: defaultKnobs(name, base.source ?? 'corpus'),
    source: base.source ?? 'corpus',
    text: base.text ?? '',
    variants: base.variants ?? ['softmax', 'random', 'linear', 'mixture'],
    lrs: {},
    model: { dModel: d.dModel, heads: d.heads, layers: d.layers, dFF: d.dFF },
    train: { steps: d.steps, batch: d.batch, lr: d.lr, warmup: d.warmup, evalEvery: Math.max(1, Math.round(d.steps / 20)), evalBatch: 256 },
    seed: base.seed ?? 1,
    seeds: base.seeds ?? 1,
    build: base.build ?? 'simd',
  };
}

export const defaultConfig = () => configForTask('copy');

/**
 * The config of a preset: the task at its defaults, the study's settings (from the recorded
 * summary's headline entry for the task, when there is one; else the task's defaults with the
 * study's evaluation schedule) and each variant's learning rate from the summary.
 * keep: { seed, seeds, build, text } of the current config.
 */
export function presetConfig(id, headline = null, keep = {}) {
  const p = PRESET_BY_ID[id];
  const cfg = configForTask(p.task, { variants: p.variants.slice(), source: 'corpus', ...keep });
  const s = headline?.settings;
  if (s && MODEL_FIELDS.every((k) => Number.isInteger(s[k]))) {
    for (const k of MODEL_FIELDS) cfg.model[k] = s[k];
    for (const k of ['steps', 'batch', 'warmup']) if (Number.isInteger(s[k])) cfg.train[k] = s[k];
    if (Number.isFinite(s.lr)) cfg.train.lr = s.lr;
    cfg.train.evalEvery = Number.isInteger(headline.evalEvery ?? s.evalEvery) ? (headline.evalEvery ?? s.evalEvery) : Math.max(1, Math.round(cfg.train.steps / EVAL_POINTS));
    if (Number.isInteger(s.evalBatch)) cfg.train.evalBatch = s.evalBatch;
  } else {
    cfg.train.evalEvery = Math.max(1, Math.round(cfg.train.steps / EVAL_POINTS));
  }
  for (const v of p.variants) {
    const lr = headline?.variants?.[v]?.lr;
    if (Number.isFinite(lr) && lr > 0 && lr !== cfg.train.lr) cfg.lrs[v] = lr;
  }
  return cfg;
}

/**
 * What makes `cfg` differ from `preset` (a presetConfig), in words: [] when it is the preset.
 * Seed, seeds, build and the text are the user's (a preset keeps them), so they never differ.
 */
export function presetDifferences(cfg, preset) {
  const out = [];
  if (cfg.task !== preset.task) return ['the task'];
  if (cfg.task === 'text' && cfg.source !== preset.source) out.push('the text');
  if (cfg.variants.join() !== preset.variants.join()) out.push('the variants');
  for (const k of Object.keys({ ...preset.knobs, ...cfg.knobs })) if (cfg.knobs[k] !== preset.knobs[k]) out.push(FIELD_LABELS[k] ?? k);
  for (const k of MODEL_FIELDS) if (cfg.model[k] !== preset.model[k]) out.push(FIELD_LABELS[k]);
  for (const k of TRAIN_FIELDS) if (k !== 'lr' && cfg.train[k] !== preset.train[k]) out.push(FIELD_LABELS[k]);
  const rates = preset.variants.filter((v) => cfg.variants.includes(v) && lrOf(cfg, v) !== lrOf(preset, v));
  if (rates.length) out.push(`the learning rate of ${rates.map(labelOf).join(', ')}`);
  return out;
}

/** The learning rate run `name` trains at: its own, or the common one. */
export const lrOf = (cfg, name) => cfg.lrs?.[name] ?? cfg.train.lr;

/** Every run of a config, in queue order: each seed's variants in turn (seed, seed + 1, ...). */
export function runList(cfg) {
  const out = [];
  for (let i = 0; i < (cfg.seeds ?? 1); i++) for (const name of cfg.variants) out.push({ name, seed: cfg.seed + i });
  return out;
}

/** lab.model's config for one variant and seed of the experiment: the shared list's modelConfig. */
export function modelConfig(cfg, task, specName, seed = cfg.seed) {
  return sharedModelConfig(task, SPEC_BY_NAME[specName], cfg.model, seed);
}

/** lab.train's options (without callbacks) for one run: the model seed also seeds the data, as in the experiments. */
export const trainOptions = (cfg, name, seed = cfg.seed) => ({ ...cfg.train, lr: name ? lrOf(cfg, name) : cfg.train.lr, seed });

// ---- checks

const isInt = (x) => Number.isInteger(x);

/** Whether a number is one field `name` can hold: null, or the message naming the field and its bounds. */
export function fieldProblem(name, x, raw = String(x)) {
  const label = FIELD_LABELS[name] ?? name;
  const max = LIMITS[name];
  if (name === 'lr') return Number.isFinite(x) && x > 0 && x <= max ? null : `${label} must be a number above 0 and at most ${max} (got "${raw}")`;
  const min = name === 'warmup' || name === 'seed' ? 0 : name === 'seqLen' ? 2 : 1;
  if (!isInt(x) || x < min || (max != null && x > max)) return `${label} must be a whole number from ${min} to ${max} (got "${raw}")`;
  return null;
}

/**
 * What is wrong with a config before any worker starts, or null: the fields' bounds, the model
 * sizes the binding refuses (heads must divide dModel), the text, and the task's knobs (tasks.js
 * says which). Returns { field, message } (field: the form field to mark, or null).
 */
export function configProblem(cfg, corpus = null) {
  for (const [k, v] of Object.entries(cfg.knobs)) {
    if (typeof v === 'number') {
      const p = fieldProblem(k, v);
      if (p) return { field: `knob-${k}`, message: p };
    }
  }
  for (const k of MODEL_FIELDS) { const p = fieldProblem(k, cfg.model[k]); if (p) return { field: k, message: p }; }
  for (const k of TRAIN_FIELDS) { const p = fieldProblem(k, cfg.train[k]); if (p) return { field: k, message: p }; }
  for (const [name, lr] of Object.entries(cfg.lrs ?? {})) {
    const p = fieldProblem('lr', lr);
    if (p) return { field: `lr-${name}`, message: `${labelOf(name)}: ${p}` };
  }
  { const p = fieldProblem('seed', cfg.seed); if (p) return { field: 'seed', message: p }; }
  { const p = fieldProblem('seeds', cfg.seeds); if (p) return { field: 'seeds', message: p }; }
  if (cfg.seed + cfg.seeds - 1 > LIMITS.seed) return { field: 'seeds', message: `seeds: seed ${cfg.seed} + ${cfg.seeds - 1} runs past the largest seed, ${LIMITS.seed}` };
  if (!cfg.variants.length) return { field: 'variants', message: 'pick at least one variant to train' };
  if (cfg.model.dModel % cfg.model.heads !== 0) {
    return { field: 'heads', message: `heads must divide dModel: ${cfg.model.dModel} is not a multiple of ${cfg.model.heads} (each head gets dModel / heads dimensions); try heads ${divisors(cfg.model.dModel).join(', ')}` };
  }
  if (cfg.task === 'text' && cfg.source === 'own') {
    const p = textProblem(cfg.text, cfg.knobs.seqLen);
    if (p) return { field: 'text', message: p };
  }
  if (cfg.task === 'text' && cfg.source === 'corpus' && !corpus) return null; // checked once it is loaded
  try {
    makeTask(cfg, corpus);
  } catch (err) {
    const m = /^tasks\.\w+: (\w+)/.exec(err.message);
    const field = m && Object.hasOwn(cfg.knobs, m[1]) ? `knob-${m[1]}` : null;
    return { field, message: friendlyTaskError(err.message) };
  }
  return null;
}

const divisors = (n) => { const out = []; for (let k = 1; k <= Math.min(n, LIMITS.heads); k++) if (n % k === 0) out.push(k); return out.slice(-6); };

/** tasks.js's message, with the field's label the form shows in front. */
function friendlyTaskError(msg) {
  const m = /^tasks\.(\w+): (\w+) (.*)$/s.exec(msg);
  if (!m) return msg;
  return `${m[1]}: ${FIELD_LABELS[m[2]] ?? m[2]} ${m[3]}`;
}

/**
 * What is wrong with a text of the user's own for a sequence length, in words they can act on
 * (tasks.js's "seqLen must be <= 0" helps no one), or null.
 */
export function textProblem(text, seqLen) {
  const n = text.length;
  if (!n) return 'your text is empty: type or paste a text, or choose the corpus or the paragraph';
  const distinct = new Set(text).size;
  if (distinct < 2) return `your text has ${distinct} distinct character${distinct === 1 ? '' : 's'}; it needs at least 2 to predict anything`;
  // a training window needs seqLen + 1 characters of the first 90 % (tasks.text: split = n - max(1, floor(n / 10)))
  const need = (L) => { let m = L + 2; while (m - Math.max(1, Math.floor(m / 10)) - 1 < L) m++; return m; };
  const split = n - Math.max(1, Math.floor(n / 10));
  if (split - 1 < 2) return `your text has ${n} characters; it needs at least ${need(2)} (the last 10 % is held out, and a training window needs sequence length + 1 characters of the rest)`;
  if (seqLen > split - 1) return `your text has ${n} characters, too few for sequence length ${seqLen}: it needs at least ${need(seqLen)} (the last 10 % is held out, and a training window needs ${seqLen + 1} characters of the rest). Type more text or set the sequence length to ${split - 1} or less.`;
  return null;
}

/**
 * How much of a text's held-out part (its last 10 %) already occurs in its training part: the
 * share of held-out characters whose preceding `k` characters and itself appear in the first
 * 90 %. Near 1, "held-out" accuracy measures memorisation, not generalisation.
 */
let repeatsMemo = { text: null, k: 0, result: null }; // the last text's answer: the verdicts ask on every frame

export function heldOutRepeats(text, k = 12) {
  if (repeatsMemo.text === text && repeatsMemo.k === k) return repeatsMemo.result;
  const result = countRepeats(text, k);
  repeatsMemo = { text, k, result };
  return result;
}

function countRepeats(text, k) {
  const n = text.length;
  const split = n - Math.max(1, Math.floor(n / 10));
  if (split <= k) return { share: 0, checked: 0, split };
  const train = text.slice(0, split);
  const seen = new Set();
  for (let i = 0; i + k + 1 <= train.length; i++) seen.add(train.slice(i, i + k + 1));
  let hit = 0, checked = 0;
  for (let p = Math.max(split, k); p < n; p++) {
    checked++;
    if (seen.has(text.slice(p - k, p + 1))) hit++;
  }
  return { share: checked ? hit / checked : 0, checked, split };
}

// ---- URL hash

const num = (v) => (v !== '' && Number.isFinite(Number(v)) ? Number(v) : null);
const enc = (v) => encodeURIComponent(String(v)).replace(/%2C/gi, ',').replace(/%3A/gi, ':');

/** The hash of a config. A text over TEXT_LINK_MAX characters stays out (x.textLen says how long it was). */
export function encodeConfig(cfg) {
  const parts = [['x.task', cfg.task]];
  for (const [k, v] of Object.entries(cfg.knobs)) parts.push([`x.${k}`, v]);
  if (cfg.task === 'text') {
    parts.push(['x.source', cfg.source]);
    if (cfg.source === 'own' || (cfg.text && cfg.text.length <= TEXT_LINK_MAX)) {
      if (cfg.text.length <= TEXT_LINK_MAX) parts.push(['x.text', cfg.text]);
      else parts.push(['x.textLen', cfg.text.length]);
    }
  }
  parts.push(['x.vars', cfg.variants.join(',')]);
  const lrs = Object.entries(cfg.lrs ?? {}).filter(([v]) => cfg.variants.includes(v));
  if (lrs.length) parts.push(['x.lrs', lrs.map(([v, lr]) => `${v}:${lr}`).join(',')]);
  for (const k of MODEL_FIELDS) parts.push([`x.${k}`, cfg.model[k]]);
  for (const k of TRAIN_FIELDS) parts.push([`x.${k}`, cfg.train[k]]);
  parts.push(['x.seed', cfg.seed]);
  if (cfg.seeds !== 1) parts.push(['x.seeds', cfg.seeds]);
  if (cfg.build !== 'simd') parts.push(['x.build', cfg.build]);
  return parts.map(([k, v]) => `${k}=${enc(v)}`).join('&');
}

/** Whether a config's text is too long for a link (its link then says so rather than carry it). */
export const textLeftOut = (cfg) => cfg.task === 'text' && cfg.source === 'own' && cfg.text.length > TEXT_LINK_MAX;

const WHY_ESCAPE = 'a % escape is cut off or invalid (was the link truncated?)';
const shown = (t) => (t.length > 40 ? `${t.slice(0, 40)}…` : t);

/**
 * The config of a hash's x.* keys (missing ones: the task's defaults). What cannot be used keeps
 * its default and is listed in `ignored` as { key, text, why }; so is a key the view does not know.
 */
export function decodeConfig(hash, ignored = []) {
  const pairs = new Map();
  const skip = (key, text, why) => ignored.push({ key, text: shown(String(text)), why });
  for (const part of hash.replace(/^#/, '').split('&')) {
    const eq = part.indexOf('=');
    const rawK = eq < 0 ? part : part.slice(0, eq);
    if (!rawK.startsWith('x.')) continue;
    const rawV = eq < 0 ? '' : part.slice(eq + 1);
    let v;
    try {
      v = decodeURIComponent(rawV);
    } catch {
      skip(rawK, rawV, WHY_ESCAPE);
      continue;
    }
    pairs.set(rawK.slice(2), v);
  }
  const used = new Set();
  const get = (k) => { used.add(k); return pairs.get(k); };
  let name = get('task') ?? 'copy';
  if (!TASK_NAMES.includes(name)) {
    skip('x.task', name, `expected ${TASK_NAMES.join(', ')}`);
    name = 'copy';
  }
  let source = 'corpus';
  if (name === 'text') {
    const given = get('source');
    if (given != null && !TEXT_SOURCES.includes(given)) skip('x.source', given, `expected ${TEXT_SOURCES.join(', ')}`);
    // links made before the corpus reached the page meant the paragraph, or their own text
    source = TEXT_SOURCES.includes(given) ? given : pairs.get('text') ? 'own' : 'paragraph';
  }
  const cfg = configForTask(name, { source });
  const take = (key, target, field, test = (x) => !fieldProblem(key, x)) => {
    if (!pairs.has(key)) return;
    const raw = get(key);
    const x = num(raw);
    if (x != null && test(x)) target[field] = x;
    else skip(`x.${key}`, raw, fieldProblem(key, x ?? NaN, raw) ?? 'not a valid number');
  };
  // the task's knobs: the shown ones, and any other option tasks.js takes (recall's queries, ...)
  const optionNames = Object.keys(tasks[name](name === 'text' ? { text: DEFAULT_TEXT } : {}).options).filter((k) => !NOT_KNOBS.has(k));
  for (const k of optionNames) {
    if (!pairs.has(k)) continue;
    const raw = pairs.get(k);
    if (typeof cfg.knobs[k] === 'string' || (cfg.knobs[k] === undefined && num(raw) == null)) {
      used.add(k);
      cfg.knobs[k] = raw;
    } else take(k, cfg.knobs, k);
  }
  if (name === 'text') {
    const text = get('text');
    if (text != null) cfg.text = text;
    const len = get('textLen');
    if (len != null && cfg.source === 'own' && !cfg.text) {
      skip('x.textLen', len, `this link was made with a text of ${Number(len).toLocaleString('en')} characters, longer than a link carries (${TEXT_LINK_MAX}): paste the text into the box`);
    }
  }
  if (pairs.has('vars')) {
    const list = get('vars').split(',').filter(Boolean);
    const bad = list.filter((v) => !SPEC_BY_NAME[v]);
    if (bad.length) skip('x.vars', bad.join(','), 'no such variant');
    const good = [...new Set(list.filter((v) => SPEC_BY_NAME[v]))];
    if (good.length) cfg.variants = good;
  }
  if (pairs.has('lrs')) {
    for (const item of get('lrs').split(',').filter(Boolean)) {
      const [v, t] = item.split(':');
      const x = num(t ?? '');
      if (!SPEC_BY_NAME[v]) skip('x.lrs', item, 'no such variant');
      else if (x == null || fieldProblem('lr', x)) skip('x.lrs', item, fieldProblem('lr', x ?? NaN, t ?? '') ?? 'not a number');
      else cfg.lrs[v] = x;
    }
  }
  for (const k of MODEL_FIELDS) take(k, cfg.model, k);
  for (const k of TRAIN_FIELDS) take(k, cfg.train, k);
  take('seed', cfg, 'seed');
  take('seeds', cfg, 'seeds');
  if (pairs.has('build')) {
    const b = get('build');
    if (BUILDS.includes(b)) cfg.build = b;
    else skip('x.build', b, `expected ${BUILDS.join(', ')}`);
  }
  for (const k of pairs.keys()) {
    if (used.has(k) || optionNames.includes(k)) continue;
    const elsewhere = TASK_NAMES.filter((t) => t !== name && (TASK_KNOBS[t].includes(k) || (t === 'text' && ['text', 'source', 'textLen'].includes(k))));
    skip(`x.${k}`, pairs.get(k), elsewhere.length ? `${name} takes no ${k} (${elsewhere.join(', ')} does)` : 'unknown key');
  }
  return cfg;
}

/** The view a hash asks for: 'experiment' or 'explore' (every link made before the views existed). */
/** Whether a hash holds any of the Experiment view's keys (x.…). */
export const hasExperimentKeys = (hash) => /(^|[#&])x\./.test(hash);
export const viewOfHash = (hash) => (/(^|[#&])view=experiment(&|$)/.test(hash) ? 'experiment' : 'explore');
