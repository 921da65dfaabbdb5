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

/**
 * The VALUE error of an output that came out NaN or infinite from finite inputs: what[row][col]
 * (index of an array of `cols` columns) and the likely cause: for a variant that keeps a state
 * without a normaliser (the recurrences), the state, with advice for the arrays it reads (g, beta);
 * for the others, an intermediate.
 */
export function overflowError(variant, opt, what, index, cols, value) {
  const reads = (name) => variant.inputs.some((i) => i.name === name);
  const stateAdvice = [
    ...(reads('g') ? ['keep g <= 0 (a decay e^g above 1 grows the state every token)'] : []),
    ...(reads('beta') ? ['beta in [0, 1] and keys of unit norm'] : []),
  ];
  return new AttnError('VALUE', `${what}[${Math.floor(index / cols)}][${index % cols}] came out ${value}: ` +
    (variant.keepsState && !variant.keepsNormalizer
      ? `the recurrent state left float32's range; ${stateAdvice.length ? `${stateAdvice.join(', ')}, or ` : ''}scale the inputs down`
      : 'an intermediate (a logit, exp or normaliser) left float32\'s range; scale the inputs down' +
        (opt.scale != null ? ` or use a smaller scale than ${opt.scale}` : '') + (opt.eps === 0 ? ' or use eps > 0' : '')));
}

/** x rounded up to a multiple of `to`. */
export function align(x, to) {
  return Math.ceil(x / to) * to;
}

/** %TypedArray%.prototype.length: a typed array's true length, which an own `length` cannot fake. */
export const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length').get;
