// registry.js — the registry as a module describes it (attn_metadata_json: variants.def,
// options.def, attnlab.h's lists, the layouts of the model's structs), read once per instance,
// and lab.options / lab.dims built from it. Nothing here knows a particular variant or option.

/** Every variant takes these (options.def). */
export const COMMON_OPTIONS = ['causal', 'weights', 'keep'];
// How options.def's kinds look from JavaScript (lab.options[name].type).
const KIND_TYPES = {
  BOOL: 'boolean', CALL: 'boolean', NUMBER: 'number', OPTIONAL: 'number', ENUM: 'enum',
  INT: 'integer', VARIANTS: 'list', WEIGHTS: 'numbers',
};

/** The metadata JSON, parsed: the lists without their trailing null, option fields with offsets. */
export function parseMetadata(json) {
  const meta = JSON.parse(json);
  const list = (xs) => xs.filter((x) => x !== null);
  const words = (text) => text.trim().split(/\s+/).filter(Boolean);
  // the families' facts (internal.h, ATTN_FAMILY_LIST), given to each variant of the family
  const families = new Map(list(meta.families).map((f) => [f.name, f]));
  const variants = list(meta.variants).map((v) => Object.freeze({
    id: v.id,
    label: v.label,
    family: v.family,
    keepsLse: families.get(v.family).keepsLse === 1,
    keepsState: families.get(v.family).keepsState === 1,
    keepsNormalizer: families.get(v.family).keepsNormalizer === 1,
    quadratic: families.get(v.family).quadratic === 1,
    causalOnly: families.get(v.family).causalOnly === 1,
    inModels: families.get(v.family).inModels === 1,
    signedWeights: families.get(v.family).signedWeights === 1,
    inputFree: families.get(v.family).inputFree === 1,
    learnedLogits: families.get(v.family).learnedLogits === 1,
    composite: words(v.options).includes('components'),
    mixable: v.mixable === 1,
    summary: v.summary,
    formula: v.formula,
    cost: v.cost,
    dims: Object.freeze(words(v.dims)),
    // "q:n*d", or "s0?:d*dv" for an array the caller may leave out
    inputs: Object.freeze(words(v.inputs).map((spec) => {
      const [word, shape] = spec.split(':');
      const optional = word.endsWith('?');
      return Object.freeze({ name: optional ? word.slice(0, -1) : word, shape: Object.freeze(shape.split('*')), ...(optional ? { optional } : {}) });
    })),
    options: Object.freeze(words(v.options)),
  }));
  let offset = 0;
  const optionFields = new Map();
  for (const f of list(meta.optionFields)) {
    optionFields.set(f.name, { offset, float: f.type === 'float', count: f.count });
    offset += 4 * f.count;
  }
  const patterns = list(meta.patterns);
  const tilings = list(meta.tilings);
  const lists = {
    patterns: patterns.map((p) => p.name),
    tilings: tilings.map((t) => t.name),
    mixable: variants.filter((v) => v.mixable).map((v) => v.id),
  };
  const options = list(meta.options).map((o) => ({
    ...o,
    values: lists[o.values] ?? null,
    appliesTo: variants.filter((v) => COMMON_OPTIONS.includes(o.name) || v.options.includes(o.name)).map((v) => v.id),
  }));
  return {
    version: meta.version,
    simd: meta.simd === 1,
    fma: meta.fma === 1,
    maxComponents: meta.maxComponents,
    maxDim: meta.maxDim,
    inputFields: words(meta.inputFields),
    dims: list(meta.dims),
    dimFields: list(meta.dims).map((d) => d.name),
    optionFields,
    optionsBytes: offset,
    patterns,
    lists,
    options,
    variants,
    modelConfig: structLayout(meta.modelConfig),
    modelParam: structLayout(meta.modelParam),
  };
}

// A struct's layout as registry.c publishes it (offsetof): { bytes, fields: name -> { type, offset, count } }.
function structLayout(layout) {
  return { bytes: layout.bytes, fields: new Map(layout.fields.map((f) => [f.name, { type: f.type, offset: f.offset, count: f.count }])) };
}

/** lab.options: every option of options.def, for building forms; the checks are the rule. */
export function describeOptions(meta) {
  const info = {};
  for (const o of meta.options) {
    const entry = {
      type: KIND_TYPES[o.kind],
      default: o.default,
      description: o.description,
      appliesTo: Object.freeze(o.appliesTo),
      grad: o.kind !== 'CALL', // attentionGrad takes it too (weights, state and keep are attention()'s)
    };
    if (o.values) entry.values = Object.freeze(o.values.slice());
    if (o.min !== null) entry.min = o.min;
    if (o.kind === 'VARIANTS') entry.max = meta.maxComponents;
    if (o.values === meta.lists.patterns) {
      entry.causalValues = Object.freeze(meta.patterns.filter((p) => !p.lookAhead).map((p) => p.name));
    }
    info[o.name] = Object.freeze(entry);
  }
  return Object.freeze(info);
}

/** lab.dims: what each dimension means, and which one a missing value stands for (L: n). */
export function describeDims(meta) {
  const info = {};
  for (const d of meta.dims) {
    info[d.name] = Object.freeze({ description: d.description, ...(d.defaultsTo !== 'none' ? { defaultsTo: d.defaultsTo } : {}) });
  }
  return Object.freeze(info);
}
