// heap.js — an instance's WebAssembly memory as the binding uses it: typed views (made again
// whenever memory has grown, which detaches the old buffer), C strings, growth that fails with
// MEMORY naming what needed it, and the blocks that outlive a call (a model's), first fit above
// the control block. A call lays its buffers out above the last such block (scratchBase()).
//
//   heap base ─ control block (attnlab.js) ─ blocks (models) ─ scratch of the call in progress
import { AttnError, align } from './errors.js';

export const PAGE = 65536;
export const MAX_MEMORY = 4 * 1024 * 1024 * 1024; // wasm32, and the modules' declared maximum

export class Heap {
  #memory;
  #views = null;
  #start = 0; // the first byte a block may use: above the control block
  #blocks = []; // memory that outlives a call: [{ offset, bytes }] by offset

  constructor(memory) {
    this.#memory = memory;
  }

  /** The WebAssembly.Memory itself (for the tests' internal hook). */
  get memory() { return this.#memory; }

  /** Bytes of WebAssembly memory held now. */
  get byteLength() { return this.#memory.buffer.byteLength; }

  /** Keeps [0, start) for the control block (growing memory to hold it): blocks go above. */
  reserve(start, what) {
    this.ensure(start, what);
    this.#start = start;
  }

  f32() { return this.#view().f32; }
  i32() { return this.#view().i32; }
  u32() { return this.#view().u32; }
  u8() { return this.#view().u8; }

  #view() {
    const buffer = this.#memory.buffer;
    if (!this.#views || this.#views.buffer !== buffer) {
      this.#views = { buffer, f32: new Float32Array(buffer), i32: new Int32Array(buffer), u32: new Uint32Array(buffer), u8: new Uint8Array(buffer) };
    }
    return this.#views;
  }

  /** The NUL-terminated string at ptr. */
  cString(ptr) {
    const u8 = this.u8();
    let end = ptr;
    while (u8[end] !== 0) end++;
    return new TextDecoder().decode(u8.slice(ptr, end)); // a copy: browsers do not decode shared memory
  }

  /** Grows memory to hold `end` bytes; the engine's own error if it refuses. */
  growTo(end) {
    if (end > this.byteLength) this.#memory.grow(Math.ceil((end - this.byteLength) / PAGE));
  }

  /** Grows memory to hold `end` bytes, or throws MEMORY naming `what` needed it. */
  ensure(end, what) {
    if (!(end <= MAX_MEMORY)) {
      throw new AttnError('MEMORY', `${what} needs ${(end / 2 ** 30).toFixed(1)} GiB, more than WebAssembly's 4 GiB memory`);
    }
    try {
      this.growTo(end);
    } catch (err) {
      throw new AttnError('MEMORY', `${what} needs ${(end / 2 ** 20).toFixed(0)} MiB of WebAssembly memory ` +
        `and the engine refused to grow it (${err.message})`);
    }
  }

  /** A block of `bytes` that outlives calls (first fit above the control block); its offset. */
  alloc(bytes) {
    let start = this.#start;
    let at = this.#blocks.length;
    for (let i = 0; i < this.#blocks.length; i++) {
      if (this.#blocks[i].offset - start >= bytes) { at = i; break; }
      start = align(this.#blocks[i].offset + this.#blocks[i].bytes, 64);
    }
    this.ensure(start + bytes, `a model of ${(bytes / 2 ** 20).toFixed(1)} MiB`);
    this.#blocks.splice(at, 0, { offset: start, bytes });
    return start;
  }

  free(offset) {
    const i = this.#blocks.findIndex((b) => b.offset === offset);
    if (i >= 0) this.#blocks.splice(i, 1);
  }

  /** Where a call may lay out its buffers: above every block. */
  scratchBase() {
    const last = this.#blocks[this.#blocks.length - 1];
    return last ? align(last.offset + last.bytes, 64) : this.#start;
  }

  /** Lets the memory go (the instance's dispose()): nothing may read it after this. */
  dispose() {
    this.#memory = null;
    this.#views = null;
  }
}
