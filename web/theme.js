// The colour theme: auto (follows the system), light or dark, saved in localStorage. Panels with
// canvases redraw on the store's 'theme' event.

import { $ } from './dom.js';
import { emit } from './store.js';

const THEMES = ['auto', 'light', 'dark'];

const currentTheme = () => document.documentElement.dataset.theme ?? 'auto';

function retheme() {
  const root = document.documentElement;
  root.dataset.scheme = root.dataset.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  emit('theme');
}

function setTheme(t) {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  try {
    localStorage.setItem('attnlab-theme', t);
  } catch {
    /* private mode */
  }
  const b = $('#theme-toggle');
  b.textContent = { auto: '◐ Auto', light: '☀ Light', dark: '☾ Dark' }[t];
  b.setAttribute('aria-label', `Colour theme: ${t}${t === 'auto' ? ' (follows the system)' : ''}. Click to change.`);
  retheme();
}

export function initTheme() {
  setTheme(currentTheme());
  $('#theme-toggle').addEventListener('click', () => setTheme(THEMES[(THEMES.indexOf(currentTheme()) + 1) % THEMES.length]));
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', retheme);
}
