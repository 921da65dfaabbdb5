// The verdict of each variant once its runs have ended: learned (held-out accuracy ≥ 90 %, the
// study's threshold) or not learned in the run's steps, on how many of its seeds; a run stopped
// before its last step is not judged (only a threshold it had already crossed is said) and never
// set beside the recorded study as if it were a full run; for text, bits per character (no
// threshold). Beside it, the recorded study's count and interval for the same task and variant,
// and whether the two are the same runs: the differences are named (another text, other steps,
// another learning rate...), so unlike is never set beside unlike without saying so.

import { el } from '../dom.js';
import { labelOf, knobsOf, textOf, heldOutRepeats, LEARNED } from './config.js';
import { variantColor } from './colors.js';
import { verdictOf, stoppedAt, VERDICT_TEXT } from './curves.js';
import { recordedVerdict, differences, recordedSeedValue, headlineOf, summaryNow } from './study.js';

const pct = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)} %` : '–');
const same6 = (a, b) => Number.isFinite(a) && Number.isFinite(b) && Number(a.toPrecision(6)) === Number(b.toPrecision(6));

/** The verdicts of the ended runs (root: #x-verdicts). task: the runs' task; chance: its level. */
export function renderVerdicts(root, cfg, task, runs, chance) {
  const ended = runs.filter((r) => (r.status === 'done' || r.status === 'cancelled') && !r.untrained && r.history.length);
  if (!cfg || !task || !ended.length) {
    root.replaceChildren(el('p', { class: 'note', text: runs.length
      ? 'The verdicts come when the runs end.'
      : `When the runs end, each variant is marked learned (held-out accuracy ≥ ${100 * LEARNED} %) or not learned in the run's steps — text: its bits per character — beside the recorded study's result for the same task and variant.` }));
    return;
  }
  const isText = cfg.task === 'text';
  const items = [];
  const summary = summaryNow();
  for (const name of cfg.variants) {
    const mine = ended.filter((r) => r.name === name);
    if (!mine.length) continue;
    const sw = el('i', { class: 'swatch', 'aria-hidden': 'true' });
    sw.style.background = variantColor(name);
    const finals = mine.map((r) => r.history.at(-1));
    let here;
    let verdict = null;
    // a stopped run ("stopped at step 488 of 1500"), with its seed when there are several
    const stops = mine.map((r) => { const at = stoppedAt(r, cfg); return at && (mine.length > 1 ? `seed ${r.seed} ${at}` : at); }).filter(Boolean);
    if (isText) {
      const bits = finals.map((f) => f.evalBits);
      here = `${bits.map((b) => b.toFixed(3)).join(' / ')} bits per character held out${task.corpus ? ' (128 windows of the test chapters)' : ''}, ${finals.map((f) => pct(f.evalAccuracy)).join(' / ')} of next characters right`;
    } else {
      const each = mine.map((r) => verdictOf(r, false));
      const crossed = each.filter((v) => v === 'learned' || v === 'learned early').length;
      verdict = stops.length ? (crossed === mine.length ? 'learned early' : 'stopped')
        : crossed === mine.length ? 'learned' : crossed ? 'partly' : 'not learned';
      here = mine.length === 1
        ? `${VERDICT_TEXT[each[0]]} (${pct(finals[0].evalAccuracy)} held out at step ${finals[0].step}${stops.length ? ` of ${cfg.train.steps}` : ''})`
        : `${stops.length ? 'at 90 % or more' : 'learned'} on ${crossed} of ${mine.length} seeds (${finals.map((f) => pct(f.evalAccuracy)).join(', ')})`;
    }
    const parts = [el('strong', { class: 'x-verdict-here', text: `${labelOf(name)}: ${here}.` })];
    const rec = recordedVerdict(cfg.task, name);
    if (summary?.missing) parts.push(' The recorded study is not available here.');
    else if (!rec) parts.push(` The recorded study has no ${cfg.task} run of ${labelOf(name)}.`);
    else if (stops.length) {
      // a run that did not finish is not the study's settings, and its numbers are not its results
      const said = stops.join('; ');
      parts.push(el('span', { class: 'x-stopped', text: ` ${said[0].toUpperCase()}${said.slice(1)} — not comparable with the recorded run.` }));
    } else {
      const diff = differences(cfg, name, knobsOf(task)) ?? [];
      parts.push(el('span', { class: 'x-recorded-verdict', text: ` ${rec.text[0].toUpperCase()}${rec.text.slice(1)}.` }));
      if (isText && cfg.source !== 'corpus') {
        const which = cfg.source === 'own' ? 'Your own text' : 'The short paragraph';
        parts.push(el('span', { class: 'x-differs', text: ` ${which} is not the corpus the study used: its numbers do not compare with yours${diff.length ? ` (other differences: ${diff.join('; ')})` : ''}.` }));
      } else if (diff.length) {
        parts.push(el('span', { class: 'x-differs', text: ` Not the same runs: ${diff.join('; ')}.` }));
      } else {
        const same = mine.map((r) => {
          const v = recordedSeedValue(cfg.task, name, r.seed);
          const f = r.history.at(-1);
          if (v == null) return null;
          const value = isText ? null : f.evalAccuracy;
          return value == null ? `seed ${r.seed} is one of its seeds` : `seed ${r.seed}: ${same6(value, v) ? 'the same held-out accuracy as recorded' : `recorded ${pct(v)}, here ${pct(value)} (another build or a changed task?)`}`;
        }).filter(Boolean);
        parts.push(el('span', { class: 'x-same', text: ` The study's settings${same.length ? `; ${same.join('; ')}` : ''}.` }));
      }
    }
    items.push(el('li', { dataset: { variant: name, ...(verdict ? { verdict } : {}) } }, sw, ' ', ...parts));
  }
  const notes = [];
  if (chance) notes.push(isText ? `A uniform guess scores ${chance.value.toFixed(2)} bits per character (${chance.why}).` : `Chance: ${pct(chance.value)} (${chance.why}).`);
  if (isText && chance?.ngram) {
    const b = chance.ngram.bits;
    notes.push(`Character n-gram models fitted on the same training chapters, scored the same way on every test window: ${chance.ngram.orders.map((o) => `${o}-gram ${b[o].toFixed(3)}`).join(', ')} bits per character. A model above the 4-gram line has learnt no more than local statistics; a 5-gram reaches ${b[5].toFixed(3)}.`);
  }
  const text = textOf(cfg);
  if (text != null) {
    const r = heldOutRepeats(text);
    if (r.checked && r.share >= 0.5) notes.push(`${Math.round(100 * r.share)} % of this text's held-out part already occurs in its training part: the held-out numbers measure memorisation, not prediction.`);
  }
  if (headlineOf(cfg.task) && !isText) notes.push(`Learned: held-out accuracy ≥ ${100 * LEARNED} % at the end, as the study counts it.`);
  root.replaceChildren(el('h3', { text: 'Verdicts' }), el('ul', { class: 'x-verdicts-list' }, ...items), ...notes.map((t) => el('p', { class: 'note', text: t })));
}
