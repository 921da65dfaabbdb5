// Pasted matrices: CSV / whitespace-separated lines or JSON, read against the shape the array
// must have, [rows, cols]. Errors say which row and column is wrong. No DOM, no state.

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

const isNum = (f) => NUMBER.test(f) && Number.isFinite(Math.fround(Number(f)));

const shown = (f) => (String(f).length > 24 ? `${String(f).slice(0, 24)}…` : String(f));

/**
 * Parses `text` as the rows×cols matrix `name`. CSV: one row per line, values separated by
 * commas, semicolons, tabs or spaces; blank lines and lines starting with # are skipped; a first
 * line with no number in it is a header and is skipped (the note says so). A 1-D array
 * (rows = 1) may also be one value per line. JSON: nested rows, or a flat list of rows·cols numbers.
 * Returns { values: number[], note }; throws an Error that names the row and column at fault.
 */
export function parseMatrixText(text, name, rows, cols) {
  const t = text.trim();
  const shape = `${name} is ${rows}×${cols}`;
  if (!t) throw new Error('nothing to apply: the box is empty');
  if (t.startsWith('[') || t.startsWith('{')) return { values: parseJson(t, name, rows, cols, shape), note: '' };
  let lines = t.split(/\r?\n/).map((l, k) => ({ line: k + 1, fields: l.trim().split(/[,;\s]+/).filter((f) => f !== '') }))
    .filter((l) => l.fields.length && !l.fields[0].startsWith('#'));
  let note = '';
  if (lines.length && lines[0].fields.every((f) => !isNum(f))) {
    note = `skipped the header row on line ${lines[0].line}: ${shown(lines[0].fields.join(', '))}`;
    lines = lines.slice(1);
    if (!lines.length) throw new Error(`${name}: only a header row (${shown(note)}), no numbers`);
  }
  // a column of values for a 1-D array
  if (rows === 1 && lines.length === cols && cols > 1 && lines.every((l) => l.fields.length === 1)) lines = [{ line: lines[0].line, fields: lines.map((l) => l.fields[0]) }];
  const values = [];
  lines.forEach((l, i) => {
    l.fields.forEach((f, j) => {
      if (!isNum(f)) throw new Error(`${name}: row ${i}, column ${j} (line ${l.line}): “${shown(f)}” is not a number${/^\d+,\d+$/.test(f) ? ' (decimals take a point)' : ''}`);
    });
  });
  if (lines.length === 1 && rows > 1 && lines[0].fields.length === rows * cols) {
    throw new Error(`${shape}: all ${rows * cols} values are on one line; put one row of ${cols} values per line (${rows} lines)`);
  }
  for (let i = 0; i < lines.length && i < rows; i++) {
    const k = lines[i].fields.length;
    if (k !== cols) throw new Error(`${shape}: row ${i} (line ${lines[i].line}) has ${k} value${k === 1 ? '' : 's'}, expected ${cols}`);
  }
  if (lines.length !== rows) throw new Error(`${shape}: got ${lines.length} row${lines.length === 1 ? '' : 's'} of ${cols} values, expected ${rows} rows`);
  for (const l of lines) for (const f of l.fields) values.push(Number(f));
  return { values, note };
}

function parseJson(t, name, rows, cols, shape) {
  let j;
  try {
    j = JSON.parse(t);
  } catch (err) {
    throw new Error(`${name}: JSON: ${err.message}`);
  }
  if (!Array.isArray(j)) j = j.values ?? j.data ?? Object.values(j)[0];
  if (!Array.isArray(j)) throw new Error(`${name}: JSON: expected an array of numbers (nested rows or flat)`);
  const check = (x, i, c) => {
    if (typeof x !== 'number' || !Number.isFinite(Math.fround(x))) throw new Error(`${name}: row ${i}, column ${c}: ${shown(JSON.stringify(x))} is not a finite number`);
    return x;
  };
  if (j.some(Array.isArray)) {
    if (rows === 1 && j.length === 1 && Array.isArray(j[0])) j = [j[0]];
    j.forEach((row, i) => {
      if (!Array.isArray(row)) throw new Error(`${shape}: JSON row ${i} is not an array`);
      if (i < rows && row.length !== cols) throw new Error(`${shape}: JSON row ${i} has ${row.length} values, expected ${cols}`);
    });
    if (j.length !== rows) throw new Error(`${shape}: JSON has ${j.length} rows, expected ${rows}`);
    return j.flatMap((row, i) => row.map((x, c) => check(x, i, c)));
  }
  if (j.length !== rows * cols) throw new Error(`${shape}: the flat JSON list has ${j.length} values, expected ${rows * cols}`);
  return j.map((x, t2) => check(x, Math.floor(t2 / cols), t2 % cols));
}
