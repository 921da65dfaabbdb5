// The "Set up an experiment" form and the presets: task and its knobs (text: the corpus, the
// paragraph or the user's own string), the variants to race and each one's learning rate, model
// size, training settings, seed, how many seeds, build. It renders a config and reads one back
// on every edit (a long text: once the typing pauses), checks it as the user types (config.js's
// configProblem: the fields' bounds, heads | dModel, the text, the task's knobs) and marks the
// field at fault; the message goes where the caller shows it (next to Train). While a run goes
// on the form is locked: the link and "copy as code" describe the running models.

import { el } from '../dom.js';
import {
  VARIANT_SPECS, TASK_NAMES, TASK_KNOBS, MODEL_FIELDS, TRAIN_FIELDS, BUILDS, BUILD_LABELS, PRESETS, PRESET_QUESTIONS, FIELD_LABELS, LIMITS,
  configForTask, fieldProblem, configProblem, heldOutRepeats, labelOf, TEXT_LINK_MAX, textOf,
} from './config.js';
import { variantColor } from './colors.js';
import { corpusStatus, onCorpus, loadedCorpus, ensureCorpus } from './corpus.js';

const TASK_HELP = {
  recall: 'Associative recall: key–value pairs, then queries of keys; answer each with its value.',
  copy: 'Copy a sequence after the separator.',
  reverse: 'Write the sequence backwards after the separator.',
  sort: 'Write the sequence sorted after the separator.',
  text: 'Predict the next character of a text; held-out characters are never trained on.',
};
const SOURCE_LABELS = {
  corpus: 'the corpus: the King James Bible, 4.1 MB (the recorded study\'s)',
  paragraph: 'a short paragraph (546 characters)',
  own: 'your own text',
};
/** Typing in the text box re-reads the form once the typing pauses this long (a long text would make every keystroke slow). */
const TEXT_DEBOUNCE_MS = 300;
/** A held-out part that repeats its training part this much is memorised, not predicted. */
const REPEAT_WARN = 0.5;

const numberField = (id, name, value, { step = '1', label = FIELD_LABELS[name] ?? name } = {}) => el('div', { class: 'field' },
  el('label', { for: id, text: label }),
  el('input', {
    id, type: 'number', step, min: name === 'warmup' || name === 'seed' ? '0' : name === 'seqLen' ? '2' : step === '1' ? '1' : null,
    max: LIMITS[name] != null ? String(LIMITS[name]) : null,
    inputmode: step === '1' ? 'numeric' : 'decimal', value: value == null ? '' : String(value), dataset: { field: name },
  }));

const fmtKB = (b) => `${(b / 1e6).toFixed(1)} MB`;

export class SetupForm {
  /**
   * root: the form's box; presetsRoot: the presets' box; errorBox: where a problem is shown (next
   * to Train). onChange(cfg, problem) after every edit (problem: { field, message } or null);
   * onPreset(id) before a preset is applied (it needs the recorded summary: presetConfig).
   */
  constructor(root, { presetsRoot, errorBox, onChange, presetConfig }) {
    this.root = root;
    this.presetsRoot = presetsRoot;
    this.errorBox = errorBox;
    this.onChange = onChange;
    this.presetConfig = presetConfig;
    this.specs = VARIANT_SPECS; // the binding's variants (config.js's useLabVariants)
    this.cfg = configForTask('copy');
    this.locked = false;
    this.textTimer = null;
    root.addEventListener('input', (e) => {
      if (e.target.id === 'x-task') return;
      if (e.target.id === 'x-text') return this.textTyped();
      this.read();
    });
    root.addEventListener('change', (e) => {
      if (e.target.id === 'x-task') this.setTask(e.target.value);
      else if (e.target.name === 'x-source') this.setSource(e.target.value);
      else if (e.target.id !== 'x-text') this.read();
    });
    onCorpus(() => this.renderCorpusStatus());
    this.renderPresets();
  }

  renderPresets() {
    const buttons = PRESETS.map((p) => {
      const q = PRESET_QUESTIONS[p.question];
      const id = `x-preset-${p.id}`;
      return el('button', { type: 'button', class: 'x-preset', id, dataset: { preset: p.id }, onclick: () => this.preset(p.id), 'aria-describedby': `${id}-what` },
        el('span', { class: 'x-preset-q', text: q.title }),
        el('span', { class: 'x-preset-task', text: p.task === 'text' ? 'text: the corpus' : p.task }),
        el('span', { class: 'x-preset-vars', id: `${id}-what`, text: p.variants.map(labelOf).join(', ') }));
    });
    this.presetsRoot.replaceChildren(
      el('p', { class: 'note x-presets-note', text: 'The recorded study\'s experiments, at its settings and learning rates: with its seed and build they train exactly its runs. How long each takes here shows next to Train before you start.' }),
      el('div', { class: 'x-presets', role: 'group', 'aria-label': 'Presets' }, ...buttons));
  }

  /** Builds the form for cfg. */
  render(cfg) {
    this.cfg = structuredClone(cfg);
    const c = this.cfg;
    const knobNames = [...new Set([...TASK_KNOBS[c.task], ...Object.keys(c.knobs)])];
    const knobField = (k) => (typeof c.knobs[k] === 'string'
      ? el('div', { class: 'field' }, el('label', { for: `x-knob-${k}`, text: FIELD_LABELS[k] ?? k }),
        el('input', { id: `x-knob-${k}`, type: 'text', value: c.knobs[k], dataset: { field: k, knob: '1', kind: 'text' } }))
      : numberField(`x-knob-${k}`, k, c.knobs[k]));
    const task = el('fieldset', { class: 'card', id: 'x-task-card' }, el('legend', { text: 'Task' }),
      el('div', { class: 'field' }, el('label', { for: 'x-task', text: 'Task' }),
        el('select', { id: 'x-task' }, ...TASK_NAMES.map((t) => el('option', { value: t, text: t, selected: t === c.task })))),
      el('p', { class: 'note', text: TASK_HELP[c.task] }),
      c.task === 'text' ? this.textPart(c) : null,
      el('div', { class: 'grid3 x-knobs' }, ...knobNames.map(knobField)));
    for (const inp of task.querySelectorAll('.x-knobs input')) inp.dataset.knob = '1';
    const picks = el('fieldset', { class: 'card', id: 'x-variants-card' }, el('legend', { text: 'Variants to race' }),
      el('div', { class: 'check-grid', id: 'x-variants' }, ...this.specs.map((s) => {
        const sw = el('i', { class: 'swatch', 'aria-hidden': 'true' });
        sw.style.background = variantColor(s.name);
        return el('label', { class: 'check' }, el('input', { type: 'checkbox', value: s.name, checked: c.variants.includes(s.name), dataset: { variant: s.name } }), sw, s.label);
      })));
    const lrRows = c.variants.map((name) => el('div', { class: 'field x-lr-row' },
      el('label', { for: `x-lr-${name}`, text: labelOf(name) }),
      el('input', { id: `x-lr-${name}`, type: 'number', step: 'any', min: '0', max: String(LIMITS.lr), inputmode: 'decimal', placeholder: `${c.train.lr} (common)`, value: c.lrs[name] != null ? String(c.lrs[name]) : '', dataset: { field: 'lr', variantLr: name } })));
    const model = el('fieldset', { class: 'card', id: 'x-model-card' }, el('legend', { text: 'Model and training' }),
      el('p', { class: 'note' }, 'From the task\'s piloted defaults; editable. ',
        el('button', { type: 'button', class: 'small', id: 'x-defaults', text: 'Task defaults', onclick: () => this.setTask(this.cfg.task) })),
      el('div', { class: 'grid3' }, ...MODEL_FIELDS.map((k) => numberField(`x-${k}`, k, c.model[k]))),
      el('div', { class: 'grid3' }, ...TRAIN_FIELDS.map((k) => numberField(`x-${k}`, k, c.train[k], { step: k === 'lr' ? 'any' : '1', label: k === 'lr' ? 'learning rate (common)' : undefined }))),
      el('details', { class: 'x-lrs', id: 'x-lrs', open: Object.keys(c.lrs).some((v) => c.variants.includes(v)) },
        el('summary', { text: 'Learning rate of each variant' }),
        el('p', { class: 'note', text: 'Empty: the common rate. The study chose each variant\'s own rate by a sweep; a preset fills them in.' }),
        el('div', { class: 'grid2' }, ...lrRows)),
      el('div', { class: 'grid3' }, numberField('x-seed', 'seed', c.seed),
        numberField('x-seeds', 'seeds', c.seeds, { label: 'seeds (runs each)' }),
        el('div', { class: 'field' }, el('label', { for: 'x-build', text: 'build' }),
          el('select', { id: 'x-build', title: 'Which WebAssembly build trains: SIMD matches the recorded experiments and Node bit for bit' },
            ...BUILDS.map((b) => el('option', { value: b, text: BUILD_LABELS[b], selected: b === c.build }))))),
      el('p', { class: 'note', id: 'x-seeds-note', text: this.seedsNote(c) }));
    this.root.replaceChildren(task, picks, model);
    this.setLocked(this.locked);
    this.renderCorpusStatus();
  }

  seedsNote(c) {
    return c.seeds > 1 ? `Each variant trains ${c.seeds} times, on seeds ${c.seed} to ${c.seed + c.seeds - 1} (a seed draws the model and its data).` : 'More seeds show how a result varies with the seed: each variant trains once per seed.';
  }

  textPart(c) {
    const radios = el('fieldset', { class: 'x-source', id: 'x-source' }, el('legend', { text: 'Text' }),
      ...['corpus', 'paragraph', 'own'].map((s) => el('label', { class: 'check' },
        el('input', { type: 'radio', name: 'x-source', value: s, id: `x-source-${s}`, checked: c.source === s }), SOURCE_LABELS[s])));
    const box = c.source === 'own'
      ? el('div', { class: 'field' }, el('label', { for: 'x-text', text: 'Your text' }),
        Object.assign(el('textarea', { id: 'x-text', rows: 4, spellcheck: 'false', placeholder: 'Type or paste a text: the model learns to predict its next character; its last 10 % is held out.' }), { value: c.text }))
      : null;
    return el('div', { class: 'x-text-part' }, radios,
      el('p', { class: 'note', id: 'x-corpus-status', role: 'status', hidden: c.source !== 'corpus' }),
      box,
      el('p', { class: 'note', id: 'x-text-note', role: 'status' }, this.textNote(c)));
  }

  /** What a text of one's own means for a link and for "held-out". */
  textNote(c) {
    const text = textOf(c);
    if (text == null) return '';
    const parts = [];
    if (c.source === 'own' && text.length > TEXT_LINK_MAX) parts.push(`Your text (${text.length.toLocaleString('en')} characters) is too long for a link: links and "Copy link" leave it out, so share the text itself too.`);
    const r = heldOutRepeats(text);
    if (r.checked && r.share >= REPEAT_WARN) {
      parts.push(`${Math.round(100 * r.share)} % of the held-out part (the last 10 %) already occurs in the training part: the text repeats itself, so "held-out" accuracy here measures memorisation, not prediction.`);
    }
    return parts.join(' ');
  }

  renderCorpusStatus() {
    const box = this.root.querySelector('#x-corpus-status');
    if (!box) return;
    const s = corpusStatus();
    box.classList.toggle('error-text', s.state === 'error');
    if (s.state === 'loading') box.textContent = `Fetching the corpus… ${s.total ? `${Math.round((100 * s.loaded) / s.total)} % of ${fmtKB(s.total)}` : fmtKB(s.loaded)}`;
    else if (s.state === 'ready') box.textContent = `The corpus is here: ${loadedCorpus().text.length.toLocaleString('en')} characters; the study's test chapters are held out.`;
    else if (s.state === 'error') {
      box.replaceChildren(`${s.message}. `, el('button', { type: 'button', class: 'small', id: 'x-corpus-retry', text: 'Try again', onclick: () => ensureCorpus().catch(() => {}) }));
    } else box.textContent = 'The corpus is fetched when you train (or now, as you chose it).';
  }

  // Presets, the task select and "Task defaults" keep the user's own text (and seed, seeds, build).
  /** A keystroke still waiting for the typing to pause: read it now (a preset or a task change comes next). */
  flushText() {
    if (this.textTimer) this.read();
  }

  async preset(id) {
    if (this.locked) return;
    this.flushText();
    const cfg = await this.presetConfig(id, { seed: this.cfg.seed, seeds: this.cfg.seeds, build: this.cfg.build, text: this.cfg.text });
    if (this.locked) return;
    cfg.variants = cfg.variants.filter((v) => this.specs.some((s) => s.name === v));
    this.render(cfg);
    this.read();
  }

  setTask(name) {
    this.flushText();
    this.render(configForTask(name, { variants: this.cfg.variants, seed: this.cfg.seed, seeds: this.cfg.seeds, build: this.cfg.build, text: this.cfg.text, source: this.cfg.source }));
    this.read();
  }

  setSource(source) {
    this.flushText();
    const c = structuredClone(this.cfg);
    // the sequence length follows the source's default unless the user set another
    const def = configForTask('text', { source: c.source }).knobs.seqLen;
    c.source = source;
    if (c.knobs.seqLen === def) c.knobs.seqLen = configForTask('text', { source }).knobs.seqLen;
    this.render(c);
    this.read();
    if (source === 'own') this.root.querySelector('#x-text')?.focus();
  }

  /** A keystroke in the text box: re-read once the typing pauses. */
  textTyped() {
    clearTimeout(this.textTimer);
    this.textTimer = setTimeout(() => this.read(), TEXT_DEBOUNCE_MS);
  }

  /** Reads the form into a config; reports the first problem (and marks its field). */
  read() {
    clearTimeout(this.textTimer);
    this.textTimer = null;
    const c = structuredClone(this.cfg);
    let problem = null;
    const note = (field, message) => { problem ??= { field, message }; };
    for (const input of this.root.querySelectorAll('input[type=number], input[data-kind=text]')) {
      const name = input.dataset.field;
      input.setAttribute('aria-invalid', 'false');
      input.removeAttribute('aria-describedby');
      if (input.dataset.kind === 'text') {
        c.knobs[name] = input.value;
        continue;
      }
      if (input.dataset.variantLr) {
        if (input.value.trim() === '') delete c.lrs[input.dataset.variantLr];
        else {
          const x = Number(input.value);
          const p = input.validity.badInput ? `${labelOf(input.dataset.variantLr)}: learning rate is not a number` : fieldProblem('lr', x, input.value);
          if (p) { note(`lr-${input.dataset.variantLr}`, `${labelOf(input.dataset.variantLr)}: ${p}`); continue; }
          c.lrs[input.dataset.variantLr] = x;
        }
        continue;
      }
      const x = input.value.trim() === '' ? NaN : Number(input.value);
      const p = fieldProblem(name, x, input.validity.badInput ? 'not a number' : input.value);
      if (p) {
        note(input.dataset.knob ? `knob-${name}` : name, p);
        continue;
      }
      if (input.dataset.knob) c.knobs[name] = x;
      else if (MODEL_FIELDS.includes(name)) c.model[name] = x;
      else if (TRAIN_FIELDS.includes(name)) c.train[name] = x;
      else if (name === 'seed') c.seed = x;
      else if (name === 'seeds') c.seeds = x;
    }
    const text = this.root.querySelector('#x-text');
    if (text) c.text = text.value;
    const source = this.root.querySelector('input[name="x-source"]:checked');
    if (source) c.source = source.value;
    c.variants = [...this.root.querySelectorAll('#x-variants input:checked')].map((i) => i.value);
    c.build = this.root.querySelector('#x-build').value;
    // the per-variant rates follow the checked variants
    const rates = this.root.querySelector('#x-lrs .grid2');
    const shownRates = [...(rates?.querySelectorAll('input') ?? [])].map((i) => i.dataset.variantLr);
    this.cfg = c;
    if (rates && shownRates.join() !== c.variants.join()) this.renderRates();
    if (!problem) problem = configProblem(c, loadedCorpus());
    const seedsNote = this.root.querySelector('#x-seeds-note');
    if (seedsNote) seedsNote.textContent = this.seedsNote(c);
    const textNote = this.root.querySelector('#x-text-note');
    if (textNote) textNote.textContent = this.textNote(c);
    if (c.task === 'text' && c.source === 'corpus') ensureCorpus().catch(() => {});
    this.showProblem(problem);
    this.onChange(structuredClone(c), problem);
  }

  renderRates() {
    const c = this.cfg;
    const grid = this.root.querySelector('#x-lrs .grid2');
    grid.replaceChildren(...c.variants.map((name) => el('div', { class: 'field x-lr-row' },
      el('label', { for: `x-lr-${name}`, text: labelOf(name) }),
      el('input', { id: `x-lr-${name}`, type: 'number', step: 'any', min: '0', max: String(LIMITS.lr), inputmode: 'decimal', placeholder: `${c.train.lr} (common)`, value: c.lrs[name] != null ? String(c.lrs[name]) : '', dataset: { field: 'lr', variantLr: name } }))));
    this.setLocked(this.locked);
  }

  /** Shows a problem next to Train and marks its field (aria-invalid, described by the message). */
  showProblem(problem) {
    const box = this.errorBox;
    box.hidden = !problem;
    box.textContent = problem?.message ?? '';
    if (!problem?.field) return;
    const target = this.root.querySelector(problem.field === 'variants' ? '#x-variants input' : `#x-${CSS.escape(problem.field)}`);
    if (target) {
      target.setAttribute('aria-invalid', 'true');
      target.setAttribute('aria-describedby', box.id);
    }
  }

  /** Locks the form while the models it describes train (their link must stay theirs). */
  setLocked(locked) {
    this.locked = locked;
    for (const fs of this.root.querySelectorAll(':scope > fieldset')) fs.disabled = locked;
    for (const b of this.presetsRoot.querySelectorAll('button')) b.disabled = locked;
    this.root.classList.toggle('x-locked', locked);
  }
}
