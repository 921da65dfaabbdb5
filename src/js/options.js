// options.js — an instance's attention options: each option of options.def read from the
// caller's object into the binding's own checked copy (read), and that copy written into an
// attn_options struct in module memory (writeAt). Used by attention(), attentionGrad() and the
// models (src/js/model.js).
import { AttnError, describe, typedLength } from './errors.js';
import { COMMON_OPTIONS } from './registry.js';

export class Options {
  #meta;
  #byId; // variant id -> its registry entry with its index
  #info; // option name -> options.def entry with its field offsets
  #heap;
  #exports; // () -> the module's exports (the instance's, checked alive)

  constructor({ meta, byId, heap, exports }) {
    this.#meta = meta;
    this.#byId = byId;
    this.#info = new Map(meta.options.map((o) => [o.name, o]));
    this.#heap = heap;
    this.#exports = exports;
  }

  // The JavaScript side of each option: its type, and the names an enum or a list takes (the C
  // core cannot see strings or arrays). Value rules (ranges, alpha summing to 1, mixable
  // components, patterns that cannot be causal) are the core's, checked once by attn_plan_make.
  // excluded: names this caller sets itself (a model's causal, its learned alpha), mapped to
  // the reason given when the caller passes one anyway.
  read(variant, options, excluded = new Map()) {
    const accepted = [...COMMON_OPTIONS, ...variant.options].filter((name) => !excluded.has(name));
    // every key and value read once, here: a getter or proxy trap runs once per option
    const raw = new Map();
    for (const key of Object.keys(options)) raw.set(key, options[key]);
    for (const [key, value] of raw) {
      if (value === undefined) continue;
      if (excluded.has(key)) throw new AttnError('UNSUPPORTED', `option "${key}": ${excluded.get(key)}`);
      if (!this.#info.has(key)) {
        throw new AttnError('UNKNOWN', `unknown option "${key}"; ${variant.id} accepts ${accepted.join(', ')}`);
      }
      if (!accepted.includes(key)) {
        throw new AttnError('UNSUPPORTED', `option "${key}" does not apply to ${variant.id}, which accepts ${accepted.join(', ')}`);
      }
    }
    const opt = { given: new Map() };
    for (const name of accepted) {
      const info = this.#info.get(name);
      const given = raw.get(name);
      if (info.kind === 'WEIGHTS') continue; // read with the components they weigh
      // null: the default, for every option; a variant causal by construction defaults to causal
      const fallback = name === 'causal' && variant.causalOnly ? true : info.default;
      const value = given === undefined || given === null ? fallback : given;
      opt[name] = this.#readOption(info, value, given !== undefined && given !== null);
      // what writeAt writes over the core's defaults: the options given, and a causal-only default
      if ((given !== undefined && given !== null) || value !== info.default) opt.given.set(name, opt[name]);
    }
    if (opt.components && !excluded.has('alpha')) this.#readWeights(variant, raw, opt);
    return opt;
  }

  #readOption(info, value, given) {
    const { name } = info;
    switch (info.kind) {
      case 'BOOL':
      case 'CALL':
        if (typeof value !== 'boolean') throw new AttnError('VALUE', `option ${name} must be true or false, got ${describe(value)}`);
        return value;
      case 'NUMBER':
      case 'OPTIONAL':
        if (value === null) return null;
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          throw new AttnError('VALUE', `option ${name} must be a finite number, got ${describe(value)}`);
        }
        if (info.min !== null && value < info.min) throw new AttnError('VALUE', `option ${name} must be >= ${info.min}, got ${value}`);
        return value;
      case 'ENUM':
        if (!info.values.includes(value)) {
          throw new AttnError('VALUE', `option ${name} must be one of ${info.values.map((x) => `"${x}"`).join(', ')}, got ${describe(value)}`);
        }
        return value;
      case 'INT':
        if (!Number.isInteger(value) || value > 0x7fffffff || (info.min !== null && value < info.min)) {
          throw new AttnError('VALUE', `option ${name} must be an integer >= ${info.min}, got ${describe(value)}`);
        }
        return value;
      case 'VARIANTS': {
        const max = this.#meta.maxComponents;
        if (!given && value === null) {
          throw new AttnError('VALUE', `option ${name} must be an array of 1 to ${max} variant ids among ${info.values.join(', ')}, got ${describe(value)}`);
        }
        const length = Array.isArray(value) ? value.length : 0; // read once, as each entry below
        if (length < 1 || length > max) {
          throw new AttnError('VALUE', `option ${name} must be an array of 1 to ${max} variant ids among ${info.values.join(', ')}, got ${describe(value)}`);
        }
        const list = [];
        for (let i = 0; i < length; i++) list.push(value[i]);
        for (const c of list) {
          if (!this.#byId.has(c)) throw new AttnError('UNKNOWN', `${name}: unknown variant ${describe(c)}; a mixture combines ${info.values.join(', ')}`);
          if (!info.values.includes(c)) throw new AttnError('UNSUPPORTED', `${name}: ${c} cannot be mixed; a mixture combines ${info.values.join(', ')}`);
        }
        return list;
      }
      default:
        throw new AttnError('LOAD', `option ${name} has kind ${info.kind}, which this binding does not know`);
    }
  }

  // Weights options (alpha, alphaLogits) share one array: exactly one is given, a number per component.
  #readWeights(variant, raw, opt) {
    const names = variant.options.filter((o) => this.#info.get(o).kind === 'WEIGHTS');
    const given = names.filter((o) => raw.get(o) !== undefined && raw.get(o) !== null);
    if (given.length !== 1) {
      throw new AttnError('VALUE', given.length
        ? `give ${given.join(' or ')}, not both`
        : `${variant.id} needs ${names.map((o) => `${o} (${this.#info.get(o).description})`).join(' or ')}`);
    }
    const name = given[0];
    const values = raw.get(name);
    const count = opt.components.length;
    const length = values !== null && typeof values === 'object' ? (ArrayBuffer.isView(values) && !(values instanceof DataView) ? typedLength.call(values) : values.length) : undefined;
    if (typeof length !== 'number' || length !== count) {
      throw new AttnError('VALUE', `${name} must hold one number per component (${count}), got ${describe(values)}`);
    }
    const list = [];
    for (let i = 0; i < count; i++) {
      const x = values[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new AttnError('VALUE', `${name}[${i}] must be a finite number, got ${describe(x)}`);
      list.push(x);
    }
    opt[name] = list;
    opt.given.set(name, list);
  }

  // An attn_options struct at ptr: the defaults, then what opt.given holds.
  writeAt(ptr, opt) {
    const i32 = this.#heap.i32();
    const f32 = this.#heap.f32();
    this.#exports().attn_options_default(ptr);
    const fields = this.#meta.optionFields;
    const at = (field, i = 0) => ((ptr + fields.get(field).offset) >>> 2) + i;
    const put = (field, i, x) => { if (fields.get(field).float) f32[at(field, i)] = x; else i32[at(field, i)] = x; };
    for (const [name, value] of opt.given) {
      const info = this.#info.get(name);
      const hasCompanion = info.companion !== 'none';
      switch (info.kind) {
        case 'BOOL': put(info.field, 0, value ? 1 : 0); break;
        case 'NUMBER': case 'OPTIONAL': case 'INT': put(info.field, 0, value); break;
        case 'ENUM': put(info.field, 0, info.values.indexOf(value)); break;
        case 'VARIANTS': value.forEach((c, i) => put(info.field, i, this.#byId.get(c).index)); break;
        case 'WEIGHTS': value.forEach((x, i) => put(info.field, i, x)); break;
        default: break; // CALL: a flag of the plan
      }
      if (hasCompanion) put(info.companion, 0, info.kind === 'VARIANTS' ? value.length : 1);
    }
  }
}
