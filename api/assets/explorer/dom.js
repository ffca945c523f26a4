// Building the page without HTML strings. Names, descriptions, skills and URLs come from
// documents anyone can publish: they go into the page as text, and a link is made only of an
// http(s) URL or a path of the explorer's own.

const SVG_NS = 'http://www.w3.org/2000/svg';

// An element: `props` sets `class`, `text`, `href` (checked), `on` (events), `data` (dataset)
// and any other attribute; children are nodes, strings (as text), arrays, or null (skipped).
export function h(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

// An SVG element, the same way.
export function svg(tag, props = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}

function fill(element, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') element.setAttribute('class', value);
    else if (key === 'text') element.textContent = String(value);
    else if (key === 'href') element.setAttribute('href', safeHref(value));
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    else if (key === 'data') Object.assign(element.dataset, value);
    else if (key === 'style') Object.assign(element.style, value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// `href` when it is the explorer's own path or an http(s) URL; otherwise nothing to follow.
export function safeHref(href) {
  const text = String(href);
  if (text.startsWith('/') && !text.startsWith('//')) return text;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : '#';
  } catch {
    return '#';
  }
}

// A link out of the explorer (opens in a new tab, tells the page nothing).
export function external(href, text) {
  const target = safeHref(href);
  if (target === '#') return h('span', { class: 'mono', text: text ?? href });
  return h('a', { href: target, rel: 'noopener noreferrer nofollow', target: '_blank', class: 'mono' }, text ?? href);
}

// A titled section with an id (so it can be linked to) and its content.
export function section(id, title, ...content) {
  return h('section', { id, class: 'panel', 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title`, text: title }), ...content);
}

// A table: `columns` are [header, cell(row)] pairs; an empty list says so instead.
export function table(caption, columns, rows, empty = 'None yet.') {
  if (!rows.length) return h('p', { class: 'empty', text: empty });
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('caption', { class: 'sr-only', text: caption }),
      h('thead', {}, h('tr', {}, columns.map(([header]) => h('th', { scope: 'col', text: header })))),
      h('tbody', {}, rows.map((row) => h('tr', { data: row.__data || {} }, columns.map(([, cell]) => h('td', {}, cell(row))))))));
}

// A message in place of content that could not load.
export function failure(what, error) {
  return h('div', { class: 'error', role: 'alert' }, h('strong', { text: `Could not load ${what}. ` }), String(error.message || error));
}
