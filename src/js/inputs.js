// inputs.js — how a call's inputs are read: the dimensions a variant needs, the arrays it reads
// (plain arrays element by element into the binding's own Float32Arrays; typed arrays checked by
// their true length, then copied straight into WebAssembly memory), and the checks that every
// value is a finite float32, each error naming the input, its index and its value.

import { AttnError, describe, typedLength } from './errors.js';

// The dimensions the variant (or a mixture's components) reads: present, positive int32 values.
// Their relations (L >= n, a*b = L) are the core's to check.
export function readDims(parts, inputs, meta) {
  const names = new Set(['n', 'dv']);
  for (const part of parts) for (const dim of part.dims) names.add(dim);
  const defaultsTo = new Map(meta.dims.filter((d) => d.defaultsTo !== 'none').map((d) => [d.name, d.defaultsTo]));
  const dims = {};
  for (const name of names) {
    const value = inputs[name];
    if (value === undefined && defaultsTo.has(name)) continue;
    if (value === undefined) {
      const defaults = [...defaultsTo].filter(([dim]) => names.has(dim)).map(([dim, to]) => `${dim} defaults to ${to}`);
      throw new AttnError('SHAPE', `${name} is missing: ${parts.map((p) => p.id).join(' + ')} needs dimensions ${[...names].join(', ')}` +
        (defaults.length ? ` (${defaults.join(', ')})` : ''));
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 0x7fffffff) {
      throw new AttnError('SHAPE', `${name} must be a positive integer, got ${describe(value)}`);
    }
    dims[name] = value;
  }
  for (const [name, to] of defaultsTo) if (names.has(name) && dims[name] === undefined) dims[name] = dims[to];
  return dims;
}

// The arrays the variant reads (a mixture: its components', then v), each with its shape.
export function arraySpecs(parts) {
  if (parts.length === 1 && !parts[0].composite) return [...parts[0].inputs];
  const specs = new Map();
  for (const part of parts) for (const spec of part.inputs) specs.set(spec.name, spec);
  specs.delete('v');
  specs.set('v', { name: 'v', shape: ['n', 'dv'] }); // last, as in every component's list
  return [...specs.values()];
}


// The arrays the variant (or a mixture's components, then v) reads, checked; an optional one left
// out (undefined or null) is not among them, and the core reads its pointer as NULL. Plain arrays are
// read first, each element once, into Float32Arrays of the binding's own (reading them may run
// the caller's code: getters, proxies); typed arrays come last, checked by their true length and
// copied into WebAssembly memory straight from their internal storage, so no caller code runs
// between their check and their copy.
export function readArrays(specs, inputs, dims, given, parts) {
  const needs = () => specs.map((s) => `${s.name} [${s.shape.join(', ')}]${s.optional ? ' (optional)' : ''}`).join(', ');
  const arrays = specs.flatMap((spec) => {
    const value = given.has(spec.name) ? inputs[spec.name] : undefined;
    if ((value === undefined || value === null) && spec.optional) return [];
    if (value === undefined || value === null) {
      throw new AttnError('SHAPE', `${spec.name} is missing: ${parts.map((p) => p.id).join(' + ')} needs ${needs()}`);
    }
    const typed = ArrayBuffer.isView(value) && !(value instanceof DataView) &&
      !(value instanceof BigInt64Array) && !(value instanceof BigUint64Array);
    if (!typed && !Array.isArray(value)) {
      throw new AttnError('SHAPE', `${spec.name} must be a Float32Array or an array of numbers, got ${describe(value)}`);
    }
    const count = spec.shape.reduce((p, dim) => p * dims[dim], 1);
    return [{ name: spec.name, shape: spec.shape, count, cols: dims[spec.shape[spec.shape.length - 1]], value, typed }];
  });
  for (const a of arrays.filter((x) => !x.typed)) a.data = copyPlain(a);
  for (const a of arrays.filter((x) => x.typed)) {
    const length = typedLength.call(a.value);
    if (length !== a.count) throw lengthError(a, length);
    a.data = a.value; // read by WebAssembly memory's set(), which converts other element types
    if (!(a.value instanceof Float32Array)) checkFloat32(a, (i) => a.value[i], true);
  }
  return arrays;
}

// keep goes alone: a kept forward pass returns what its backward needs, nothing else.
export function checkKeepAlone(opt) {
  for (const flag of ['weights', 'state']) {
    if (opt[flag]) {
      throw new AttnError('UNSUPPORTED', `options "keep" and "${flag}" do not go together: a kept forward pass returns ` +
        `output and lse for result.backward(); call attention() without keep for ${flag}`);
    }
  }
}

function lengthError(a, length) {
  return new AttnError('SHAPE', `${a.name} has ${length} values, expected ${a.shape.join('*')} = ${a.count}`);
}

function copyPlain(a) {
  const { value } = a;
  const length = value.length;
  if (length !== a.count) throw lengthError(a, length);
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const x = value[i];
    if (typeof x !== 'number') throw new AttnError('VALUE', `${a.name}[${i}] is ${describe(x)}, not a number`);
    data[i] = x;
    if (data[i] - data[i] !== 0) throw nonFinite(a, i, x); // NaN, or infinite as float32
  }
  return data;
}

// NaN or values infinite as float32 (1e39 from a Float64Array), reported with their original value.
function checkFloat32(array, original, convert = false) {
  const data = array.data;
  for (let i = 0; i < array.count; i++) {
    const x = convert ? Math.fround(data[i]) : data[i];
    if (x - x !== 0) throw nonFinite(array, i, original(i));
  }
}

export function nonFinite(a, index, value) {
  const row = Math.floor(index / a.cols), col = index % a.cols;
  const where = a.shape.length > 1 ? `${a.name}[${row}][${col}] (index ${index})` : `${a.name}[${index}]`;
  const what = Number.isFinite(value) ? `${value}, which overflows float32` : describe(value);
  return new AttnError('VALUE', `${where} is ${what}; inputs must be finite float32 numbers`);
}

// Before memory grows (a call that fails must not grow it): NaN/Infinity in Float32Array inputs,
// which are copied without a per-element check.
export function checkFiniteInJs(arrays) {
  for (const a of arrays) checkFloat32(a, (i) => a.data[i]);
}
