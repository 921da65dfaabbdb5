// Small DOM helpers shared by every panel. No state.
import { BUILDS } from '../dist/builds.js';

export const $ = (sel) => document.querySelector(sel);

/** el('div', { class, text, dataset, onclick, ...attributes }, ...children) */
export function el(tag, props = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v == null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid != null) e.append(kid);
  return e;
}

let toastTimer = null;
export function toast(msg) {
  const t = $('#global-status');
  t.textContent = msg;
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 2600);
}

export async function copyText(text, okMsg) {
  try {
    await navigator.clipboard.writeText(text);
    toast(okMsg);
    return true;
  } catch {
    // Clipboard not allowed (insecure context or denied): fall back to a selectable box.
    const ta = el('textarea', { class: 'copy-fallback', readonly: true, 'aria-label': 'Copy this text' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    ta.remove();
    toast(ok ? okMsg : 'Could not copy: select the text and copy it by hand');
    return ok;
  }
}

export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

/** Compact cell text (matrix editor, numbers table). */
export function fmtCell(x) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : String(Number(x.toPrecision(4)));
}

export const BUILD_LABEL = { ...Object.fromEntries(BUILDS.map((b) => [b.name, b.label])), webgpu: 'WebGPU' };

/** The adapter a WebGPU run named, for labels: "google swiftshader"; '' when the browser keeps it private. */
export function adapterName(adapter) {
  return adapter ? [adapter.vendor, adapter.architecture].filter(Boolean).join(' ') || adapter.description || '' : '';
}

/** Chromium's software adapter: correct, but its speed says nothing about GPUs. */
export function softwareAdapter(adapter) {
  return /swiftshader|software|cpu/i.test(`${adapter?.architecture ?? ''} ${adapter?.description ?? ''}`);
}

/**
 * Shows "label… 1.2 s" in `box` once a computation has taken `afterMs`, updated as it goes;
 * returns stop(), which hides it. The text goes to box's .computing-text child, or box itself.
 */
export function elapsedIndicator(box, label = 'computing', afterMs = 300) {
  const t0 = performance.now();
  const text = box.querySelector('.computing-text') ?? box;
  const tick = () => {
    box.hidden = false;
    text.textContent = `${label}… ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  };
  let timer = setTimeout(function loop() {
    tick();
    timer = setTimeout(loop, 100);
  }, afterMs);
  return () => {
    clearTimeout(timer);
    box.hidden = true;
  };
}
