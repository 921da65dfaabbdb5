// A small Markdown reader for experiments/results.md (what `npm run experiments` writes):
// headings, paragraphs, bullet lists, pipe tables, images, **bold**, *emphasis*, `code` and
// links. It builds DOM nodes (never HTML from the text), so nothing in the file can run as code.
// Relative links and images resolve against the file's own URL.

import { el } from '../dom.js';

/** Inline Markdown of one line as DOM nodes. */
function inline(text, base) {
  const out = [];
  const re = /(!?\[([^\]]*)\]\(([^)\s]+)\))|(\*\*([^*]+)\*\*)|(`([^`]+)`)|(\*([^*\s][^*]*)\*)/g;
  let at = 0;
  for (let m; (m = re.exec(text));) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1]) {
      let url;
      try { url = new URL(m[3], base); } catch { url = null; }
      const safe = url && /^(https?|blob):$/.test(url.protocol) ? url.href : null;
      if (m[1].startsWith('!')) out.push(safe ? el('img', { src: safe, alt: m[2], loading: 'lazy' }) : m[2]);
      else out.push(safe ? el('a', { href: safe, target: '_blank', rel: 'noopener', text: m[2] }) : m[2]);
    } else if (m[4]) out.push(el('strong', { text: m[5] }));
    else if (m[6]) out.push(el('code', { text: m[7] }));
    else if (m[8]) out.push(el('em', { text: m[9] }));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

const cells = (line) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());

/** The document's nodes, to put in a container. base: the file's URL. */
export function renderMarkdown(md, base) {
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  const nodes = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      const level = Math.min(6, h[1].length + 2); // the page's own h2 holds the dialog: start below it
      nodes.push(el(`h${level}`, {}, ...inline(h[2], base)));
      i++;
      continue;
    }
    if (/^\s*\|/.test(line) && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1] ?? '')) {
      const head = cells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && /^\s*\|/.test(lines[i])) rows.push(cells(lines[i++]));
      nodes.push(el('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'table' },
        el('table', { class: 'x-table md-table' },
          el('thead', {}, el('tr', {}, ...head.map((c) => el('th', { scope: 'col' }, ...inline(c, base))))),
          el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, ...inline(c, base)))))))));
      continue;
    }
    if (/^\s*[-*]\s+/.test(line)) {
      const items = [];
      while (i < lines.length && /^\s*[-*]\s+/.test(lines[i])) {
        let item = lines[i++].replace(/^\s*[-*]\s+/, '');
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*[-*]\s+/.test(lines[i])) item += ` ${lines[i++].trim()}`;
        items.push(el('li', {}, ...inline(item, base)));
      }
      nodes.push(el('ul', {}, ...items));
      continue;
    }
    let para = line.trim();
    i++;
    while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*\||\s*[-*]\s+)/.test(lines[i])) para += ` ${lines[i++].trim()}`;
    nodes.push(el('p', {}, ...inline(para, base)));
  }
  return nodes;
}
