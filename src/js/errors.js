// errors.js — AttnError, which every bad input throws (its `code` says which kind:
// docs/contract.md, "Errors"), and how messages describe a value they did not expect.

/** Thrown for every bad input; `code` says which kind (docs/contract.md, "Errors"). */
export class AttnError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'AttnError';
    this.code = code;
  }
}

/** A short description of a value for an error message: "abc", an array of 3, null, Float64Array. */
export function describe(x) {
  if (typeof x === 'string') return JSON.stringify(x);
  if (Array.isArray(x)) return `an array of ${x.length}`;
  if (x === null) return 'null';
  if (typeof x === 'object') return Object.prototype.toString.call(x).slice(8, -1);
  return String(x);
}

/** attn_status values, by number, as AttnError codes (attnlab.h's enum order). */
export const STATUS_CODES = Object.freeze([null, 'SHAPE', 'VALUE', 'UNKNOWN', 'UNSUPPORTED', 'MEMORY']);

/** x rounded up to a multiple of `to`. */
export function align(x, to) {
  return Math.ceil(x / to) * to;
}

/** %TypedArray%.prototype.length: a typed array's true length, which an own `length` cannot fake. */
export const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length').get;
