// The option fields of the chosen variant, built from the registry: `lab.variants[i].options`
// names them and `lab.options[name]` says what each takes (type, default, values, min,
// description; pattern.causalValues). A new option in the registry gets a field here without
// changes. The few special cases are keyed by option name: NO_FIELD, DERIVED_DEFAULT and the
// mixture's alpha sliders (fieldFor).

import { $, el } from './dom.js';
import { fmt } from './explain.js';
import { mixableIds, normaliseAlpha } from './gen.js';
import { store, info, effectiveOpts, setOption, commit, subscribe } from './store.js';

/**
 * Options that get no field of their own: `state` asks for an extra output the page always
 * requests for display; `alphaLogits` is the API's other spelling of `alpha` (the sliders).
 */
const NO_FIELD = new Set(['state', 'weights', 'causal', 'alphaLogits']);

/**
 * Defaults that depend on the sizes (lab.options gives them as null): the text and value the
 * placeholder shows.
 */
const DERIVED_DEFAULT = {
  scale: (s) => `1/√d = ${fmt(1 / Math.sqrt(s.d || 1))}`,
};

function meta(name) {
  return store.lab.options?.[name] ?? { type: 'json', default: null, description: '' };
}

function fieldLabel(id, name, m) {
  return el('label', { for: id }, `${name} `, m.description ? el('span', { class: 'muted', text: `(${m.description})` }) : null);
}

function placeholderOf(name, m) {
  if (DERIVED_DEFAULT[name]) return `default ${DERIVED_DEFAULT[name](store.state)}`;
  return m.default == null ? 'default' : `default ${typeof m.default === 'number' ? fmt(m.default) : m.default}`;
}

function numberField(v, name, m) {
  const id = `opt-${name}`;
  const integer = m.type === 'integer';
  const inp = el('input', {
    id, type: 'number', step: integer ? '1' : 'any', min: m.min != null ? String(m.min) : null, inputmode: integer ? 'numeric' : 'decimal',
    placeholder: placeholderOf(name, m), dataset: { option: name, default: JSON.stringify(m.default ?? null) },
  });
  inp.value = store.state.opts[v.id]?.[name] ?? '';
  inp.addEventListener('input', () => {
    setOption(name, inp.value === '' ? null : Number(inp.value));
    commit({ light: true });
  });
  return el('div', { class: 'field' }, fieldLabel(id, name, m), inp);
}

function enumField(v, name, m, value) {
  const id = `opt-${name}`;
  const sel = el('select', { id, dataset: { option: name, default: JSON.stringify(m.default ?? null) } },
    // the library's default is named as such: the page may start on another (fixed: previous)
    (m.values ?? []).map((x) => el('option', { value: x, text: x === m.default ? `${x} (library default)` : x })));
  sel.value = value ?? m.default;
  sel.addEventListener('change', () => {
    setOption(name, sel.value);
    commit({ light: true });
  });
  return el('div', { class: 'field' }, fieldLabel(id, name, m), sel);
}

function booleanField(v, name, m, value) {
  const id = `opt-${name}`;
  const cb = el('input', { type: 'checkbox', id, checked: !!(value ?? m.default), dataset: { option: name } });
  cb.addEventListener('change', () => {
    setOption(name, cb.checked);
    commit({ light: true });
  });
  return el('label', { class: 'check', for: id }, cb, ` ${name}`, m.description ? el('span', { class: 'muted', text: ` (${m.description})` }) : null);
}

/** A list of ids to choose from (components): one checkbox per accepted value. */
function listField(v, name, m, value) {
  const choices = name === 'components' ? mixableIds(store.lab) : m.values ?? [];
  const chosenNow = value ?? [];
  const fs = el('fieldset', { class: 'sub', dataset: { option: name } }, el('legend', { text: `${name}${m.description ? ` (${m.description})` : ''}` }));
  for (const c of choices) {
    const id = `opt-${name === 'components' ? 'comp' : name}-${c}`;
    const cb = el('input', { type: 'checkbox', id, checked: chosenNow.includes(c), dataset: { value: c } });
    cb.addEventListener('change', () => {
      const cur = effectiveOpts(v.id);
      const chosen = new Set(cur[name] ?? []);
      if (cb.checked) chosen.add(c);
      else chosen.delete(c);
      const list = choices.filter((x) => chosen.has(x));
      setOption(name, list);
      if (name === 'components' && v.options.includes('alpha')) {
        // keep each remaining component's slider where it was; new ones start at 1
        setOption('alpha', list.map((x) => {
          const i = (cur.components ?? []).indexOf(x);
          return i >= 0 && cur.alpha && cur.alpha[i] != null ? cur.alpha[i] : 1;
        }));
      }
      commit({ options: true, arrays: true, dims: true });
    });
    fs.append(el('label', { class: 'check', for: id }, cb, ` ${store.byId[c]?.label ?? c}`));
  }
  return fs;
}

/** The α actually used for raw slider values, and the note when they were all zero. */
function showAlpha(fs, raw) {
  const norm = normaliseAlpha(raw);
  fs.querySelectorAll('output').forEach((op, k) => (op.textContent = norm ? fmt(norm.alpha[k], 3) : '—'));
  const note = fs.querySelector('.alpha-note');
  note.hidden = !norm?.uniform;
  note.textContent = norm?.uniform ? `Every α is 0, so the mixture uses equal weights (1/${raw.length} each).` : '';
}

/**
 * The mixture's weights: one slider per chosen component, each at its share of the sum (0.5 /
 * 0.5 sit in the middle, not both at the end). Moving one rescales the others so the shares
 * still sum to 1 (all the rest at 0: they share what is left equally).
 */
function alphaSliders(v, name, m, o) {
  const comps = o.components ?? [];
  const raw = o.alpha ?? comps.map(() => 1);
  const shares = normaliseAlpha(raw)?.alpha ?? comps.map(() => 1 / comps.length);
  const fs = el('fieldset', { class: 'sub', dataset: { option: name } }, el('legend', { text: `α (${m.description || name}; the shares sum to 1: moving one slider moves the others)` }));
  comps.forEach((c, i) => {
    const id = `opt-alpha-${c}`;
    const out = el('output', { for: id });
    const r = el('input', { type: 'range', id, min: '0', max: '1', step: '0.01', value: String(shares[i] ?? 0), 'aria-label': `α for ${c}` });
    r.addEventListener('input', () => {
      const cur = effectiveOpts(v.id);
      const before = normaliseAlpha(cur.alpha ?? cur.components.map(() => 1))?.alpha ?? cur.components.map(() => 1 / cur.components.length);
      const x = Math.min(1, Math.max(0, Number(r.value)));
      const rest = before.reduce((sum, t, k) => (k === i ? sum : sum + t), 0);
      const others = before.length - 1;
      const a = before.map((t, k) => (k === i ? x : rest > 0 ? (t / rest) * (1 - x) : others ? (1 - x) / others : 0));
      setOption('alpha', a);
      fs.querySelectorAll('input[type=range]').forEach((s, k) => { if (k !== i) s.value = String(a[k]); });
      showAlpha(fs, a);
      commit({ light: true });
    });
    fs.append(el('div', { class: 'slider' }, el('label', { for: id, text: store.byId[c]?.label ?? c }), r, out));
  });
  fs.append(el('p', { class: 'note alpha-note', role: 'status' }));
  if (comps.length) showAlpha(fs, raw);
  else fs.append(el('p', { class: 'note', text: 'Pick at least one component.' }));
  return fs;
}

/** Anything else (numbers lists, future types): text, read as JSON or comma-separated numbers. */
function textField(v, name, m) {
  const id = `opt-${name}`;
  const inp = el('input', { id, type: 'text', placeholder: placeholderOf(name, m), dataset: { option: name } });
  const cur = store.state.opts[v.id]?.[name];
  inp.value = cur == null ? '' : Array.isArray(cur) ? cur.join(', ') : String(cur);
  inp.addEventListener('change', () => {
    const t = inp.value.trim();
    let val = t === '' ? null : t;
    if (val != null) {
      try {
        val = JSON.parse(m.type === 'numbers' && !t.startsWith('[') ? `[${t}]` : t);
      } catch {
        /* keep the text: the binding says what is wrong with it */
      }
    }
    setOption(name, val);
    commit({ light: true });
  });
  return el('div', { class: 'field' }, fieldLabel(id, name, m), inp);
}

function fieldFor(v, name, o) {
  const m = meta(name);
  if (name === 'alpha' && v.composite) return alphaSliders(v, name, m, o);
  switch (m.type) {
    case 'number':
    case 'integer':
      return numberField(v, name, m);
    case 'enum':
      return enumField(v, name, m, o[name]);
    case 'boolean':
      return booleanField(v, name, m, o[name]);
    case 'list':
      return listField(v, name, m, o[name]);
    default:
      return textField(v, name, m);
  }
}

/**
 * For a variant with components (a mixture): the mixable variants an option belongs to
 * (lab.options[name].appliesTo), or null when it is the variant's own option.
 */
function componentOwners(v, name) {
  if (!v.composite) return null;
  const owners = (meta(name).appliesTo ?? []).filter((id) => id !== v.id && store.byId[id]?.mixable);
  return owners.length ? owners : null;
}

export function renderOptions() {
  const v = info();
  const box = $('#variant-options');
  box.replaceChildren();
  const o = effectiveOpts(v.id);
  const settable = v.options.filter((name) => !NO_FIELD.has(name));
  const unused = [];
  for (const name of settable) {
    const owners = componentOwners(v, name);
    if (owners && !owners.some((c) => o.components?.includes(c))) unused.push([name, owners]);
    else box.append(fieldFor(v, name, o));
  }
  if (unused.length) {
    box.append(el('p', { class: 'note', id: 'component-options-note', text: `${unused.map(([name, owners]) => `${name} (for ${owners.map((c) => store.byId[c]?.label ?? c).join(', ')})`).join('; ')}: shown when a component that takes it is chosen.` }));
  }
  if (!settable.length) box.append(el('p', { class: 'note', text: `${v.label} has no options besides causal.` }));
  refreshOptions();
}

/** What depends on other controls: causal, placeholders derived from the sizes, causal-only values. */
function refreshOptions() {
  const s = store.state;
  // a variant causal by construction (the recurrent family) is causal whatever the box said
  const causalOnly = !!info()?.causalOnly;
  $('#causal').checked = s.causal || causalOnly;
  $('#causal').disabled = causalOnly;
  $('#causal').title = causalOnly ? 'causal by construction: the state at token i holds tokens 0..i only' : '';
  for (const inp of document.querySelectorAll('#variant-options input[type="number"][data-option]')) {
    const name = inp.dataset.option;
    if (DERIVED_DEFAULT[name]) inp.placeholder = placeholderOf(name, meta(name));
  }
  for (const sel of document.querySelectorAll('#variant-options select[data-option]')) {
    const allowed = meta(sel.dataset.option).causalValues;
    for (const opt of sel.options) opt.disabled = !!(s.causal && allowed && !allowed.includes(opt.value));
    sel.title = s.causal && allowed ? `with causal on: ${allowed.join(', ')}` : '';
  }
}

export function initOptionsForm() {
  subscribe((what) => {
    if (what.options) renderOptions();
    else refreshOptions();
  });
}
