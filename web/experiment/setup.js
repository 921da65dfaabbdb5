// The "Set up an experiment" form: presets, task and its knobs (text: the user's own string),
// the variants to race, model size, training settings, seed and build. It renders a config and
// reads one back; a value that is not a number is marked on its field and reported, never
// silently replaced.

import { el } from '../dom.js';
import { VARIANT_SPECS, TASK_NAMES, TASK_KNOBS, MODEL_FIELDS, TRAIN_FIELDS, BUILDS, BUILD_LABELS, PRESETS, configForTask } from './config.js';
import { variantColor } from './colors.js';
import { DEFAULT_TEXT } from '../../dist/tasks.js';

const LABELS = {
  seqLen: 'sequence length', pairs: 'pairs', vocab: 'vocabulary', dModel: 'dModel', heads: 'heads', layers: 'layers', dFF: 'dFF',
  steps: 'steps', batch: 'batch', lr: 'learning rate', warmup: 'warmup steps', evalEvery: 'evaluate every', evalBatch: 'held-out sequences',
};
const TASK_HELP = {
  recall: 'Associative recall: key–value pairs, then queries of keys; answer each with its value.',
  copy: 'Copy a sequence after the separator.',
  reverse: 'Write the sequence backwards after the separator.',
  sort: 'Write the sequence sorted after the separator.',
  text: 'Predict the next character of a text (the last 10 % held out).',
};

/** The largest seed: lab.train's and decodeConfig's bound (a uint32). */
const SEED_MAX = 0xffffffff;

const numberField = (id, name, value, step = '1') => el('div', { class: 'field' },
  el('label', { for: id, text: LABELS[name] ?? name }),
  el('input', { id, type: 'number', step, min: name === 'warmup' || name === 'seed' ? '0' : '1', ...(name === 'seed' ? { max: String(SEED_MAX) } : {}), inputmode: step === '1' ? 'numeric' : 'decimal', value: String(value), dataset: { field: name } }));

/** Whether a form value is one the config can hold, and the field's message when not. */
function check(name, x, raw) {
  if (name === 'lr') return x > 0 && Number.isFinite(x) ? null : `${LABELS.lr} must be a positive number (got "${raw}")`;
  if (name === 'seed') return Number.isInteger(x) && x >= 0 && x <= SEED_MAX ? null : `seed must be a whole number from 0 to ${SEED_MAX} (got "${raw}")`;
  const min = name === 'warmup' ? 0 : 1;
  return Number.isInteger(x) && x >= min ? null : `${LABELS[name] ?? name} must be a whole number ≥ ${min} (got "${raw}")`;
}

export class SetupForm {
  /** onChange(cfg | null, error) after every edit; available: the lab variant ids the binding has. */
  constructor(root, { available, onChange }) {
    this.root = root;
    this.onChange = onChange;
    this.specs = VARIANT_SPECS.filter((s) => available.includes(s.variant));
    this.cfg = configForTask('copy');
    root.addEventListener('input', (e) => { if (e.target.id !== 'x-task') this.read(); });
    root.addEventListener('change', (e) => {
      if (e.target.id === 'x-task') this.setTask(e.target.value);
      else this.read();
    });
  }

  /** Builds the form for cfg. */
  render(cfg) {
    this.cfg = structuredClone(cfg);
    const c = this.cfg;
    const presets = el('div', { class: 'x-presets', role: 'group', 'aria-label': 'Presets' },
      el('span', { class: 'muted small-text', text: 'Presets:' }),
      ...Object.entries(PRESETS).map(([id, p]) => el('button', { type: 'button', class: 'small', dataset: { preset: id }, text: p.label, onclick: () => this.preset(id) })));
    const task = el('fieldset', { class: 'card' }, el('legend', { text: 'Task' }),
      el('div', { class: 'field' }, el('label', { for: 'x-task', text: 'Task' }),
        el('select', { id: 'x-task' }, ...TASK_NAMES.map((t) => el('option', { value: t, text: t, selected: t === c.task })))),
      el('p', { class: 'note', text: TASK_HELP[c.task] }),
      el('div', { class: 'grid3' }, ...TASK_KNOBS[c.task].map((k) => numberField(`x-knob-${k}`, k, c.knobs[k]))),
      c.task === 'text'
        ? el('div', { class: 'field' }, el('label', { for: 'x-text', text: 'Your text (empty: the default paragraph)' }),
          Object.assign(el('textarea', { id: 'x-text', rows: 4, spellcheck: 'false', placeholder: DEFAULT_TEXT.slice(0, 80) + '…' }), { value: c.text }),
          el('div', {}, el('button', { type: 'button', class: 'small', id: 'x-text-default', text: 'Use the default text', onclick: () => this.useDefaultText() })))
        : null);
    const picks = el('fieldset', { class: 'card' }, el('legend', { text: 'Variants to race' }),
      el('div', { class: 'check-grid', id: 'x-variants' }, ...this.specs.map((s) => {
        const sw = el('i', { class: 'swatch' });
        sw.style.background = variantColor(s.name);
        return el('label', { class: 'check' }, el('input', { type: 'checkbox', value: s.name, checked: c.variants.includes(s.name), dataset: { variant: s.name } }), sw, s.label);
      })));
    const model = el('fieldset', { class: 'card' }, el('legend', { text: 'Model and training' }),
      el('p', { class: 'note' }, 'From the task\'s piloted defaults; editable. ',
        el('button', { type: 'button', class: 'small', id: 'x-defaults', text: 'Task defaults', onclick: () => this.setTask(this.cfg.task) })),
      el('div', { class: 'grid3' }, ...MODEL_FIELDS.map((k) => numberField(`x-${k}`, k, c.model[k]))),
      el('div', { class: 'grid3' }, ...TRAIN_FIELDS.map((k) => numberField(`x-${k}`, k, c.train[k], k === 'lr' ? 'any' : '1'))),
      el('div', { class: 'grid3' }, numberField('x-seed', 'seed', c.seed),
        el('div', { class: 'field x-build-field' }, el('label', { for: 'x-build', text: 'build' }),
          el('select', { id: 'x-build', title: 'Which WebAssembly build trains: SIMD matches the recorded experiments and Node bit for bit' },
            ...BUILDS.map((b) => el('option', { value: b, text: BUILD_LABELS[b], selected: b === c.build }))))));
    this.error = el('p', { class: 'inline-error', id: 'x-config-error', role: 'alert', hidden: true });
    this.root.replaceChildren(presets, task, picks, model, this.error);
  }

  // Presets, the task select and "Task defaults" keep the user's own text (and seed, build): only
  // "Use the default text" empties the box.
  preset(id) {
    const p = PRESETS[id];
    const cfg = configForTask(p.task, { variants: p.variants.filter((v) => this.specs.some((s) => s.name === v)), seed: this.cfg.seed, build: this.cfg.build, text: this.cfg.text });
    this.render(cfg);
    this.read();
  }

  setTask(name) {
    this.render(configForTask(name, { variants: this.cfg.variants, seed: this.cfg.seed, build: this.cfg.build, text: this.cfg.text }));
    this.read();
  }

  useDefaultText() {
    const text = this.root.querySelector('#x-text');
    if (text) text.value = '';
    this.read();
  }

  /** Reads the form into a config; reports the first problem (and marks its field). */
  read() {
    const c = structuredClone(this.cfg);
    const problems = [];
    for (const input of this.root.querySelectorAll('input[type=number]')) {
      const name = input.dataset.field;
      const x = input.value.trim() === '' ? NaN : Number(input.value);
      const problem = check(name, x, input.value);
      input.setAttribute('aria-invalid', String(!!problem));
      if (problem) {
        problems.push(problem);
        continue;
      }
      if (TASK_KNOBS[c.task].includes(name) && input.id.startsWith('x-knob-')) c.knobs[name] = x;
      else if (MODEL_FIELDS.includes(name)) c.model[name] = x;
      else if (TRAIN_FIELDS.includes(name)) c.train[name] = x;
      else if (name === 'seed') c.seed = x;
    }
    const text = this.root.querySelector('#x-text');
    if (text) c.text = text.value;
    c.variants = [...this.root.querySelectorAll('#x-variants input:checked')].map((i) => i.value);
    if (!c.variants.length) problems.push('pick at least one variant');
    c.build = this.root.querySelector('#x-build').value;
    this.cfg = c;
    this.showError(problems[0] ?? null);
    this.onChange(problems.length ? null : structuredClone(c), problems[0] ?? null);
  }

  showError(message) {
    this.error.hidden = !message;
    this.error.textContent = message ?? '';
  }
}
