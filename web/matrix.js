// The input matrices panel: one tab per array the call needs, a paged cell editor, paste as
// CSV / JSON, copy as CSV. Edits are stored as cells over the generated arrays (store.state.edits).
// A cell typed as something that is not a number is kept (the binding reports it and the outputs
// go stale) but never written to the link; store.ui.badCells keeps what was typed, for the message.

import { $, el, toast, copyText, fmtCell } from './dom.js';
import { generateArray, f32str } from './gen.js';
import { parseMatrixText } from './paste.js';
import { store, requestFor, validateDims, commit, subscribe } from './store.js';

const EDITOR_ROWS = 32;

function currentArrays() {
  try {
    return requestFor(store.state.variant);
  } catch {
    return null;
  }
}

function selectArray(name) {
  store.ui.activeArray = name;
  store.ui.editorRow = 0;
  store.ui.editorCell = null;
  renderArrays();
  $(`#tab-${name}`)?.focus();
}

export function renderArrays() {
  const { ui, state } = store;
  const tabs = $('#array-tabs');
  const panel = $('#array-panel');
  if (validateDims()) {
    tabs.replaceChildren();
    panel.replaceChildren(el('p', { class: 'note', text: 'Fix the sizes above to see the inputs.' }));
    return;
  }
  const req = currentArrays();
  if (!req) return;
  const names = req.arrays.map((a) => a.name);
  if (!names.includes(ui.activeArray)) {
    ui.activeArray = names[0];
    ui.editorRow = 0;
  }
  tabs.replaceChildren();
  for (const a of req.arrays) {
    const sel = a.name === ui.activeArray;
    const nEdits = Object.keys(state.edits[a.name]?.cells ?? {}).length;
    const t = el('button', {
      type: 'button', role: 'tab', id: `tab-${a.name}`, 'aria-selected': String(sel), 'aria-controls': 'array-panel', tabIndex: sel ? 0 : -1,
      class: `tab${nEdits ? ' edited' : ''}`, dataset: { array: a.name },
    }, a.name, el('span', { class: 'muted', text: ` ${a.shape.join('×')}` }));
    t.addEventListener('click', () => selectArray(a.name));
    t.addEventListener('keydown', (e) => {
      const i = names.indexOf(a.name);
      let j = null;
      if (e.key === 'ArrowRight') j = (i + 1) % names.length;
      if (e.key === 'ArrowLeft') j = (i - 1 + names.length) % names.length;
      if (j != null) {
        e.preventDefault();
        selectArray(names[j]);
      }
    });
    tabs.append(t);
  }
  panel.setAttribute('aria-labelledby', `tab-${ui.activeArray}`);
  const spec = req.arrays.find((a) => a.name === ui.activeArray);
  if (spec) renderMatrixEditor(panel, spec, req.inputs[spec.name], req.dims);
}

function renderMatrixEditor(panel, spec, values, dims) {
  const { state, ui } = store;
  const { name, rows, cols } = spec;
  const gen = generateArray(name, spec.shape, dims, state.seed, state.preset);
  const edits = state.edits[name];
  const editedCells = edits && edits.len === values.length ? edits.cells : {};
  const nEdits = Object.keys(editedCells).length;
  const start = Math.min(ui.editorRow, Math.max(0, rows - 1));
  const end = Math.min(rows, start + EDITOR_ROWS);
  const head = el('div', { class: 'editor-head' },
    el('span', {}, el('strong', { text: name }), ` — ${spec.shape.join('×')} = ${rows}×${cols}`, el('span', { class: 'muted edit-count', text: editCountText(nEdits) })),
    el('button', {
      type: 'button', class: 'small reset-array', text: `Reset ${name}`, hidden: !nEdits, onclick: () => {
        delete state.edits[name];
        commit({ arrays: true });
      },
    }),
  );
  const frag = [head];
  if (rows > EDITOR_ROWS) {
    const page = (row) => () => {
      ui.editorRow = row;
      renderArrays();
    };
    frag.push(el('div', { class: 'pager', role: 'group', 'aria-label': `Rows of ${name}` },
      el('button', { type: 'button', class: 'small', text: '◀ Previous rows', disabled: start === 0, onclick: page(Math.max(0, start - EDITOR_ROWS)) }),
      el('span', { text: ` rows ${start}–${end - 1} of ${rows} ` }),
      el('button', { type: 'button', class: 'small', text: 'Next rows ▶', disabled: end >= rows, onclick: page(end) }),
    ));
  }
  // cells as wide as their longest text on this page of rows (monospace: 1ch per character)
  let chars = 4;
  for (let t = start * cols; t < end * cols; t++) chars = Math.max(chars, fmtCell(values[t]).length);
  const table = el('table', { class: 'matrix', 'aria-label': `${name} values (${rows}×${cols})`, style: `--cell-ch:${chars}` });
  const thead = el('thead', {}, el('tr', {}, el('th', { scope: 'col', class: 'corner', text: 'i \\ j' }), Array.from({ length: cols }, (_, j) => el('th', { scope: 'col', text: String(j) }))));
  const tbody = el('tbody');
  // the grid's one Tab stop: the cell last focused, if it is on this page of rows
  const last = ui.editorCell;
  const current = last && last.row >= start && last.row < end && last.col < cols ? last : { row: start, col: 0 };
  for (let i = start; i < end; i++) {
    const tr = el('tr', {}, el('th', { scope: 'row', text: String(i) }));
    for (let j = 0; j < cols; j++) tr.append(el('td', {}, cellInput(name, values, gen, editedCells, i, j, cols, current)));
    tbody.append(tr);
  }
  table.append(thead, tbody);
  frag.push(el('p', { id: 'matrix-keys', class: 'visually-hidden', text: 'One Tab stop for the whole grid: the arrow keys move between cells, Enter applies a value and moves down.' }),
    el('div', { class: 'table-scroll matrix-scroll' }, table));
  // paste box
  const pid = `paste-${name}`;
  const ta = el('textarea', { id: pid, rows: '4', spellcheck: false, placeholder: `${rows} rows × ${cols} columns, e.g.\n0.1, -0.2, ...\nor JSON: [[0.1, -0.2, ...], ...]` });
  const perr = el('p', { class: 'inline-error', role: 'alert', hidden: true, id: `paste-error-${name}` });
  const apply = el('button', { type: 'button', text: `Apply to ${name}`, onclick: () => applyPaste(spec, values.length, ta.value, perr, gen) });
  const copy = el('button', { type: 'button', text: `Copy ${name} as CSV`, onclick: () => copyText(toCsv(values, rows, cols), `${name} copied as CSV`) });
  frag.push(el('details', { class: 'paste' }, el('summary', { text: 'Paste CSV / JSON' }),
    el('label', { for: pid, text: `Values for ${name} (${rows}×${cols}): one row per line, separated by commas or spaces; or a JSON array (nested or flat).` }),
    ta, el('div', { class: 'inline' }, apply, copy), perr));
  const cellErr = el('p', { class: 'inline-error', role: 'alert', id: 'cell-error', hidden: true });
  frag.splice(frag.length - 1, 0, cellErr);
  panel.replaceChildren(...frag);
  renderBadCells(name, cols);
}

/**
 * One cell of the editor. The grid is one Tab stop (the cell last focused; the first at first):
 * Tab leaves the grid, the arrow keys move inside it — ↑ ↓ and Enter always, ← → once the caret
 * is at the text's start or end (or the whole text is selected, as after moving in), so they
 * still move the caret while editing.
 */
function cellInput(name, values, gen, editedCells, i, j, cols, current) {
  const idx = i * cols + j;
  const x = values[idx];
  const inp = el('input', {
    type: 'text', inputmode: 'decimal', class: `cell${idx in editedCells ? ' edited' : ''}`, value: fmtCell(x), title: f32str(x),
    'aria-label': `${name}[${i}, ${j}]`, dataset: { index: String(idx), array: name, row: String(i), col: String(j) }, spellcheck: false, autocomplete: 'off',
    tabindex: i === current.row && j === current.col ? '0' : '-1', 'aria-describedby': 'matrix-keys',
  });
  if (!Number.isFinite(x)) inp.setAttribute('aria-invalid', 'true');
  // (not when the text is what the last edit left: Enter applied it, and clearing shows the generated value)
  inp.addEventListener('change', () => inp.value !== inp.defaultValue && editCell(name, values.length, idx, inp, gen[idx], cols));
  inp.addEventListener('focus', () => {
    for (const c of document.querySelectorAll('#array-panel input.cell[tabindex="0"]')) if (c !== inp) c.tabIndex = -1;
    inp.tabIndex = 0;
    store.ui.editorCell = { row: i, col: j };
  });
  inp.addEventListener('keydown', (e) => {
    const all = inp.selectionStart === 0 && inp.selectionEnd === inp.value.length;
    const caret = inp.selectionStart === inp.selectionEnd ? inp.selectionStart : null;
    let ni = i, nj = j;
    if (e.key === 'Enter' || e.key === 'ArrowDown') ni = i + 1;
    else if (e.key === 'ArrowUp') ni = i - 1;
    else if (e.key === 'ArrowLeft' && (all || caret === 0)) nj = j - 1;
    else if (e.key === 'ArrowRight' && (all || caret === inp.value.length)) nj = j + 1;
    else return;
    e.preventDefault();
    // Apply the edit, then move to the neighbouring cell (Enter and ↓ move down).
    if (inp.value !== inp.defaultValue) editCell(name, values.length, idx, inp, gen[idx], cols);
    const next = $(`#array-panel input.cell[data-row="${ni}"][data-col="${nj}"]`);
    if (next) {
      next.focus();
      next.select();
    }
  });
  return inp;
}

function toCsv(values, rows, cols) {
  const lines = [];
  for (let i = 0; i < rows; i++) lines.push(Array.from(values.subarray(i * cols, (i + 1) * cols), f32str).join(','));
  return lines.join('\n');
}

function editCountText(k) {
  return k ? ` · ${k} cell${k > 1 ? 's' : ''} edited` : '';
}

/** What is wrong with the typed cells of `name` that are not numbers (they stay out of the link). */
function renderBadCells(name, cols) {
  const box = $('#cell-error');
  if (!box) return;
  const cells = store.state.edits[name]?.cells ?? {};
  const bad = Object.keys(cells).filter((i) => !Number.isFinite(cells[i])).map(Number);
  box.hidden = !bad.length;
  if (!bad.length) return (box.textContent = '');
  const what = bad.slice(0, 4).map((i) => {
    const typed = store.ui.badCells?.[`${name}:${i}`] ?? String(cells[i]);
    const hint = /^[-+]?\d+,\d+$/.test(typed) ? ` (write ${typed.replace(',', '.')}: a point, not a comma)` : '';
    return `${name}[${Math.floor(i / cols)}, ${i % cols}] = “${typed}”${hint}`;
  });
  box.textContent = `Not a finite number: ${what.join('; ')}${bad.length > 4 ? ` and ${bad.length - 4} more` : ''}. ` +
    'Fix or clear the cell; until then the outputs are stale and the link keeps the cell\'s previous value.';
}

/** Applies one typed cell. Updates the editor in place (no re-render, so focus and clicks stay). */
function editCell(name, len, idx, inp, genValue, cols) {
  const { state } = store;
  const t = inp.value.trim();
  let e = state.edits[name];
  if (!e || e.len !== len) e = state.edits[name] = { len, cells: {} };
  let value;
  if (t === '') {
    delete e.cells[idx];
    value = genValue;
    inp.value = fmtCell(genValue);
  } else {
    value = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Math.fround(Number(t)) : NaN;
    if (Number.isFinite(value) && value === genValue) delete e.cells[idx];
    else e.cells[idx] = value; // NaN / Infinity stay (the binding reports them, AttnError VALUE), not in the link
  }
  store.ui.badCells ??= {};
  if (Number.isFinite(value) || t === '') delete store.ui.badCells[`${name}:${idx}`];
  else store.ui.badCells[`${name}:${idx}`] = t;
  const k = Object.keys(e.cells).length;
  if (!k) delete state.edits[name];
  if (Number.isFinite(value)) inp.value = fmtCell(value); // shown like every other cell; the title has all digits
  const table = inp.closest('table');
  if (table && inp.value.length > Number(table.style.getPropertyValue('--cell-ch'))) table.style.setProperty('--cell-ch', String(inp.value.length));
  inp.defaultValue = inp.value;
  inp.title = f32str(value);
  inp.classList.toggle('edited', idx in e.cells);
  if (Number.isFinite(value)) inp.removeAttribute('aria-invalid');
  else inp.setAttribute('aria-invalid', 'true');
  const panel = $('#array-panel');
  panel.querySelector('.edit-count').textContent = editCountText(k);
  panel.querySelector('.reset-array').hidden = !k;
  $(`#tab-${name}`)?.classList.toggle('edited', k > 0);
  renderBadCells(name, cols);
  commit({});
}

function applyPaste(spec, len, text, perr, gen) {
  const { state } = store;
  const { name, rows, cols } = spec;
  perr.hidden = true;
  let parsed;
  try {
    parsed = parseMatrixText(text, name, rows, cols);
  } catch (err) {
    perr.textContent = err.message;
    perr.hidden = false;
    return;
  }
  const cells = {};
  parsed.values.forEach((x, i) => {
    const f = Math.fround(x);
    if (!(Number.isFinite(f) && f === gen[i])) cells[i] = f;
  });
  if (Object.keys(cells).length) state.edits[name] = { len, cells };
  else delete state.edits[name];
  for (const k of Object.keys(store.ui.badCells ?? {})) if (k.startsWith(`${name}:`)) delete store.ui.badCells[k];
  commit({ arrays: true });
  toast(`Applied ${len} values to ${name}${parsed.note ? ` (${parsed.note})` : ''}`);
}

export function initMatrixEditor() {
  $('#reset-edits').addEventListener('click', () => {
    store.state.edits = {};
    commit({ arrays: true });
  });
  subscribe((what) => {
    if (what.arrays) renderArrays();
  });
}
