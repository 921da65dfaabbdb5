// ngram.mjs — character n-gram models with interpolated Witten–Bell smoothing: the baselines a
// text model's bits per character stand beside (a model that does not beat a 4-gram has learnt
// local statistics, not more). Fitted on the training chapters only; scored on the test
// chapters in the two ways the study scores its models:
//   'windows' each test character predicted once, its context only what lies before it inside
//             its 64-character window (the task's heldOutWindows(), as train() and the study
//             score a transformer), so the first characters of a window see little;
//   'full'    each test character predicted once with all of its order − 1 characters before
//             it (the corpus's own, reaching into the chapter before where it starts a chapter).
//
// Interpolated Witten–Bell, for a context h of k characters and h' its last k − 1:
//   P(w | h) = (c(h w) + T(h) · P(w | h')) / (c(h) + T(h))     when h was seen (c(h) > 0),
//   P(w | h) = P(w | h')                                        when it was not,
// with c(·) the training counts, T(h) the number of distinct characters seen after h, and below
// the empty context the uniform 1 / V. Every P(· | h) sums to 1 over the vocabulary.
//
//   const m = new WittenBell(5, vocab);
//   for (const [a, b] of parsed.runs.train) m.fit(parsed.ids, a, b);   // runs never join
//   m.prob(ids, at, contextFrom, order)   // P(ids[at] | ids[max(contextFrom, at − order + 1) .. at − 1])

export class WittenBell {
  /** order: the longest n-gram counted (context order − 1); vocab: ids are 0 .. vocab − 1. */
  constructor(order, vocab) {
    if (!Number.isInteger(order) || order < 1) throw new RangeError(`order must be a whole number ≥ 1, got ${order}`);
    if (!Number.isInteger(vocab) || vocab < 1) throw new RangeError(`vocab must be a whole number ≥ 1, got ${vocab}`);
    // a context is keyed by its ids + 1 as digits in base vocab + 1 (the newest most significant):
    // exact below 2^53
    if ((vocab + 1) ** (order - 1) > Number.MAX_SAFE_INTEGER) throw new RangeError(`vocab ${vocab} at order ${order}: context keys would not be exact`);
    this.order = order;
    this.vocab = vocab;
    // levels[k]: context of k characters → { n: c(h), next: Map(id → c(h w)) }
    this.levels = Array.from({ length: order }, () => new Map());
  }

  /** Counts every n-gram (n ≤ order) that lies inside ids[from .. to − 1]. */
  fit(ids, from = 0, to = ids.length) {
    const V = this.vocab;
    for (let i = from; i < to; i++) {
      const w = ids[i];
      if (!(w >= 0 && w < V)) throw new RangeError(`id ${w} at ${i} is outside the vocabulary 0..${V - 1}`);
      let key = 0;
      for (let k = 0; k < this.order && i - k >= from; k++) {
        if (k > 0) key = key * (V + 1) + ids[i - k] + 1;
        const level = this.levels[k];
        let e = level.get(key);
        if (!e) level.set(key, (e = { n: 0, next: new Map() }));
        e.n++;
        e.next.set(w, (e.next.get(w) ?? 0) + 1);
      }
    }
    return this;
  }

  /** The counts of a context (an array of ids, oldest first): { n, next } or null when unseen. */
  counts(context) {
    let key = 0;
    for (let j = context.length - 1; j >= 0; j--) key = key * (this.vocab + 1) + context[j] + 1;
    return this.levels[context.length]?.get(key) ?? null;
  }

  /**
   * P(ids[at] | its context): the up to order − 1 ids before `at`, none before contextFrom.
   * order: a shorter model from the same counts (2 … this.order).
   */
  prob(ids, at, contextFrom = 0, order = this.order) {
    const V = this.vocab;
    const w = ids[at];
    let p = 1 / V;
    let key = 0;
    for (let k = 0; k < order && at - k >= contextFrom; k++) {
      if (k > 0) key = key * (V + 1) + ids[at - k] + 1;
      const e = this.levels[k].get(key);
      if (!e) break; // a longer context than an unseen one is unseen too
      const T = e.next.size;
      p = ((e.next.get(w) ?? 0) + T * p) / (e.n + T);
    }
    return p;
  }
}

/**
 * Bits per character of a corpus's test (or validation) chapters under each order's model,
 * fitted on its training chapters. parsed: tasks.js's prepareCorpus(corpus); task: the text task
 * on it (its heldOutWindows() give the 'windows' scoring). Returns
 * { [order]: { windows, full } } in bits per character, and count: the characters scored.
 * visit(scoring, at, contextFrom?): called for each character scored (the tests check the sets).
 */
export function ngramLines(parsed, task, { orders = [2, 3, 4, 5], split = 'heldout', visit = null } = {}) {
  const top = Math.max(...orders);
  const m = new WittenBell(top, parsed.chars.length);
  for (const [a, b] of parsed.runs.train) m.fit(parsed.ids, a, b);
  const ids = parsed.ids;
  const sums = Object.fromEntries(orders.map((o) => [o, { windows: 0, full: 0 }]));
  // full context: every character of the split's runs, with whatever precedes it in the corpus
  let full = 0;
  for (const [a, b] of parsed.runs[split]) {
    for (let at = a; at < b; at++) {
      full++;
      visit?.('full', at);
      for (const o of orders) sums[o].full -= Math.log2(m.prob(ids, at, 0, o));
    }
  }
  // windows: each owned position of each window, its context inside the window only
  const set = split === 'heldout' ? task.heldOutWindows() : task.validationWindows();
  const L = task.seqLen;
  let windows = 0;
  for (let s = 0; s < set.starts.length; s++) {
    for (let i = 0; i < L; i++) {
      if (set.targets[s * L + i] < 0) continue;
      const at = set.starts[s] + i + 1;
      windows++;
      visit?.('windows', at, set.starts[s]);
      for (const o of orders) sums[o].windows -= Math.log2(m.prob(ids, at, set.starts[s], o));
    }
  }
  const out = { count: { windows, full } };
  for (const o of orders) out[o] = { windows: sums[o].windows / windows, full: sums[o].full / full };
  return out;
}
