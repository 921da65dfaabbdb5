// The page's one tooltip, shared by the heatmaps and the scaling chart: hover shows it, a click
// locks it to its owner until a second click or Esc. Its state stays in here; read it through
// tooltipState(), tooltipLocked() and ownsTooltip(). It never outlives what it describes: on a
// scroll or resize a locked tooltip follows its cell (owner.anchorPoint()) or goes away, a hover
// tooltip goes away; clearTooltip() is for the panels (new sizes, variant, an open dialog).

const tip = { el: null, owner: null, locked: false };

function tipEl() {
  if (!tip.el) {
    tip.el = document.createElement('div');
    tip.el.className = 'tooltip';
    tip.el.setAttribute('role', 'tooltip');
    tip.el.id = 'heatmap-tooltip';
    tip.el.hidden = true;
    document.body.append(tip.el);
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && tip.el && !tip.el.hidden) {
        unlockTooltip();
        hideTooltip(null, true);
      }
    });
    document.addEventListener('scroll', reanchor, { capture: true, passive: true });
    window.addEventListener('resize', reanchor);
  }
  return tip.el;
}

export function tooltipState() {
  return { visible: !!tip.el && !tip.el.hidden, locked: tip.locked, text: tip.el?.textContent ?? '' };
}

/** content: { title, lines: string[] } ; (x, y): viewport coordinates to place it near. */
export function showTooltip(owner, x, y, content) {
  if (tip.locked && tip.owner !== owner) return;
  if (tip.locked && tip.owner === owner && !content.force) return;
  const el = tipEl();
  el.replaceChildren();
  const h = document.createElement('div');
  h.className = 'tt-title';
  h.textContent = content.title;
  el.append(h);
  for (const line of content.lines ?? []) {
    const p = document.createElement('div');
    p.className = 'tt-line';
    p.textContent = line;
    el.append(p);
  }
  if (tip.locked) {
    const p = document.createElement('div');
    p.className = 'tt-hint';
    p.textContent = 'locked — click again or press Esc to unlock';
    el.append(p);
  }
  el.classList.toggle('locked', tip.locked);
  el.hidden = false;
  tip.owner = owner;
  place(x, y);
}

function place(x, y) {
  const el = tip.el;
  const pad = 14;
  const r = el.getBoundingClientRect();
  let left = x + pad, top = y + pad;
  if (left + r.width > window.innerWidth - 4) left = Math.max(4, x - pad - r.width);
  if (top + r.height > window.innerHeight - 4) top = Math.max(4, y - pad - r.height);
  el.style.left = `${left}px`;
  el.style.top = `${top}px`;
}

export function hideTooltip(owner, force = false) {
  if (!tip.el) return;
  if (tip.locked && !force) return;
  if (owner && tip.owner !== owner && !force) return;
  tip.el.hidden = true;
  tip.owner = null;
}

export function lockTooltip(owner) {
  tip.locked = true;
  tip.owner = owner;
  tip.el?.classList.add('locked');
}

export function unlockTooltip() {
  tip.locked = false;
  tip.el?.classList.remove('locked');
  tip.onUnlock?.();
}

export function tooltipLocked() {
  return tip.locked;
}

export function ownsTooltip(owner) {
  return tip.owner === owner;
}

/** Unlocks and hides the tooltip, whoever owns it. */
export function clearTooltip() {
  if (!tip.el) return;
  if (tip.locked) unlockTooltip();
  hideTooltip(null, true);
}

/** After a scroll or resize: a locked tooltip moves with its cell (or goes when it is out of view). */
function reanchor() {
  if (!tip.el || tip.el.hidden) return;
  const at = tip.locked ? tip.owner?.anchorPoint?.() : null;
  if (at) place(at.x, at.y);
  else clearTooltip();
}
