// The page's two views: Explore (one attention call at a time: the original page) and Experiment
// (train variants side by side). The view is part of the link: #view=experiment&x.… opens the
// Experiment view with its config; every other hash (all links made before the views existed)
// opens Explore. The link holds both views' state (store.js writeHash), and switching views is a
// step of history: Back returns to the other view as it was.

import { $ } from './dom.js';
import { setViewHash, setOtherViewKeys, writeHash } from './store.js';

let current = 'explore';
let experimentHash = () => null;
let onShow = () => {};

export const currentView = () => current;

export function showView(view) {
  current = view === 'experiment' ? 'experiment' : 'explore';
  for (const e of document.querySelectorAll('[data-view="explore"]')) e.hidden = current !== 'explore';
  $('#experiment-view').hidden = current !== 'experiment';
  for (const tab of document.querySelectorAll('.view-tab')) {
    const on = tab.dataset.target === current;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
  }
  // the header's badge names the build of the view shown: Explore's, or the experiment's form's
  $('#build-badge').hidden = current !== 'explore';
  $('#threads-badge').hidden = current !== 'explore';
  $('#x-build-badge').hidden = current !== 'experiment';
  document.body.dataset.currentView = current; // (not data-view: that marks the Explore view's parts)
  setViewHash(current === 'experiment' ? experimentHash : null);
  // the skip link goes to this view's own main part
  const skip = $('#skip-link');
  skip.textContent = current === 'experiment' ? 'Skip to Train' : 'Skip to the outputs';
  skip.setAttribute('href', current === 'experiment' ? '#x-run' : '#outputs');
  onShow(current);
}

/**
 * hashOf(): the Experiment view's hash (its module knows its config); shown(view): after a view
 * is shown (the Experiment view fetches what it needs the first time); keysOf(): its keys to keep
 * in Explore's link ('' for the default config).
 */
export function initViews(hashOf, shown = () => {}, keysOf = () => '') {
  experimentHash = hashOf;
  setOtherViewKeys(keysOf);
  onShow = shown;
  // "Skip to …" moves the focus only: through the URL hash it would load a link of its own
  // (#outputs: Explore at its defaults, every edit gone)
  $('#skip-link').addEventListener('click', (e) => {
    e.preventDefault();
    const target = $(current === 'experiment' ? '#x-run' : '#outputs');
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: 'start' });
  });
  for (const tab of document.querySelectorAll('.view-tab')) {
    tab.addEventListener('click', () => {
      const from = current;
      showView(tab.dataset.target);
      writeHash({ push: current !== from });
    });
    // arrow keys move between the tabs (the tablist pattern)
    tab.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const other = [...document.querySelectorAll('.view-tab')].find((t) => t !== tab);
      other.focus();
      other.click();
    });
  }
}
