// model-file.js — the saved-model format (docs/model.md, "Saved models"): version 2 is
// [u32 header length][JSON header { format, version, config, step }][zero padding to 4 bytes]
// [parameters, AdamW m, AdamW v: 3P float32][u32 CRC-32 of everything before it]; version 1 (still
// read) has no checksum and also holds the gradients. Writing, reading and checking a file; the
// Model class (model.js) makes the model from what readSaved returns. No work at import.

import { AttnError, align, describe } from './errors.js';

export const SAVE_MAGIC = 'attnlab-model';
export const SAVE_VERSION = 2; // 1: no checksum, the gradient section saved too (still loaded)
const HEADER_KEYS = ['format', 'version', 'config', 'step'];
const MAX_HEADER_BYTES = 16 << 20; // a header holds the configuration only: far less than this
// AdamW counts steps from 1 in an int32 (attn_model_adamw): a model at this step can take no more.
export const MAX_STEP = 0x7fffffff - 1;

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib and PNG) of bytes.
let crcTable = null;
function crc32(bytes) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// The bytes loadModel was given, as a Uint8Array over them (no copy), or VALUE.
function bytesOf(bytes) {
  let view = null;
  try {
    if (bytes instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && bytes instanceof SharedArrayBuffer)) view = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch {
    throw new AttnError('VALUE', 'loadModel: the buffer it was given is detached (transferred elsewhere); pass the bytes model.save() gave');
  }
  if (!view) throw new AttnError('VALUE', `loadModel takes the bytes model.save() gave (a Uint8Array or an ArrayBuffer), got ${describe(bytes)}`);
  return view;
}

/**
 * The bytes of a saved model: the configuration (as model.config shows it), the step count, and
 * the parameters [P] and AdamW moments [2P] (m, then v) of the model block.
 */
export function writeSaved(config, step, parameters, moments) {
  const header = new TextEncoder().encode(JSON.stringify({ format: SAVE_MAGIC, version: SAVE_VERSION, config, step }));
  const P = parameters.length;
  const start = 4 + align(header.length, 4);
  const out = new Uint8Array(start + 12 * P + 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, header.length, true);
  out.set(header, 4);
  const floats = new Float32Array(out.buffer, start, 3 * P);
  floats.set(parameters);
  floats.set(moments, P);
  view.setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)), true);
  return out;
}

/**
 * The parts of saved bytes, every check of the format made (VALUE naming what is wrong): { header,
 * step, version, body (the floats' bytes, not yet checked against a configuration: savedFloats) }.
 */
export function readSaved(bytes) {
  const view = bytesOf(bytes);
  const length = view.length >= 4 ? new DataView(view.buffer, view.byteOffset).getUint32(0, true) : 0;
  if (view.length < 8 || length < 2 || 4 + length > view.length || length > MAX_HEADER_BYTES) {
    throw new AttnError('VALUE', `loadModel: these ${view.length} bytes are not a saved attnlab model` +
      (view.length >= 8 && 4 + length > view.length ? ` (its header length, ${length}, runs past the end: truncated?)` : ''));
  }
  const stored = new DataView(view.buffer, view.byteOffset + view.length - 4).getUint32(0, true);
  const checksumOk = crc32(view.subarray(0, view.length - 4)) === stored;
  let header = null;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(view.subarray(4, 4 + length)));
  } catch { /* below */ }
  const readable = header !== null && typeof header === 'object' && !Array.isArray(header) && header.format === SAVE_MAGIC;
  if (!readable || (header.version === SAVE_VERSION && !checksumOk)) {
    throw new AttnError('VALUE', checksumOk || !readable && view.length < 12
      ? 'loadModel: these bytes are not a saved attnlab model'
      : 'loadModel: these bytes are not a saved attnlab model, or one that was corrupted: their CRC-32 checksum does not match');
  }
  if (header.version !== 1 && header.version !== SAVE_VERSION) {
    throw new AttnError('VALUE', `loadModel: saved with format version ${describe(header.version)}; this attnlab reads versions 1 and ${SAVE_VERSION}`);
  }
  for (const key of Object.keys(header)) {
    if (!HEADER_KEYS.includes(key)) throw new AttnError('VALUE', `loadModel: the header has an unknown field "${key}"`);
  }
  const { step } = header;
  if (!Number.isInteger(step) || step < 0 || step > MAX_STEP) {
    throw new AttnError('VALUE', `loadModel: the saved step count ${describe(step)} is not an integer in [0, ${MAX_STEP}] ` +
      '(AdamW counts steps in an int32 and could not continue from it)');
  }
  const start = 4 + align(length, 4);
  const end = header.version === 1 ? view.length : view.length - 4;
  return { header, step, version: header.version, body: view.subarray(Math.min(start, end), end) };
}

// The parameters and AdamW moments of a saved body for a model of P parameters, checked: the size
// its configuration needs, every value finite, every second moment >= 0. Version 1 bodies also
// hold the gradients of the last call (never state: left out, as a failed step may have left them
// NaN).
export function savedFloats({ version, body }, P) {
  const sections = version === 1 ? 4 : 3;
  if (body.length !== sections * 4 * P) {
    throw new AttnError('VALUE', `loadModel: the saved parameters and optimizer state hold ${body.length} bytes, ` +
      `the configuration needs ${sections * 4 * P} (${sections} sections of ${P} floats)`);
  }
  const floats = new Float32Array(body.slice().buffer); // a copy: the body need not be 4-byte aligned
  const parameters = floats.subarray(0, P);
  const moments = floats.subarray((sections - 2) * P); // m, then v
  const names = ['parameter', 'AdamW first moment', 'AdamW second moment'];
  for (const [k, part] of [parameters, moments.subarray(0, P), moments.subarray(P)].entries()) {
    const bad = part.findIndex((x) => !Number.isFinite(x) || (k === 2 && x < 0));
    if (bad >= 0) {
      throw new AttnError('VALUE', `loadModel: saved ${names[k]} ${bad} is ${part[bad]}: a model's parameters and ` +
        'optimizer state must be finite (and second moments >= 0)');
    }
  }
  return { parameters, moments };
}
