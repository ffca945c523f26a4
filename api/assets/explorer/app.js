// The explorer's router: `/` searches agents, `/agents/{id}` shows one, `/ecosystem` the
// whole index. Links inside the explorer change the page without a reload; the URL always
// says what is shown (filters, page cursor), so it can be shared, reloaded or bookmarked, and
// Back returns to the same results at the same scroll position.

import { connect } from './live.js';
import { renderSearch } from './search.js';
import { renderAgent } from './agent.js';
import { renderEcosystem } from './ecosystem.js';
import { failure } from './dom.js';
import { navigate, onNavigate, rememberScroll } from './navigation.js';

const main = document.getElementById('main');
const ROUTES = [
  { pattern: /^\/$/, nav: 'search', render: (params) => renderSearch(main, params) },
  { pattern: /^\/ecosystem\/?$/, nav: 'ecosystem', render: () => renderEcosystem(main) },
  { pattern: /^\/agents\/(.+)$/, nav: 'search', render: (params, match) => renderAgent(main, decodeURIComponent(match[1])) },
];

let page = null; // what the shown page returned: { stop() } ends its live updates
let generation = 0;

async function show({ restoreScroll, focus = null }) {
  const shown = ++generation;
  if (page && page.stop) page.stop();
  page = null;
  const route = ROUTES.find((r) => r.pattern.test(location.pathname));
  for (const link of document.querySelectorAll('[data-nav]')) {
    link.toggleAttribute('aria-current', Boolean(route) && link.dataset.nav === route.nav);
  }
  main.replaceChildren();
  main.dataset.loaded = 'false';
  main.setAttribute('aria-busy', 'true');
  if (!route) {
    main.append(failure('this page', new Error(`${location.pathname} is not a page of the explorer`)));
  } else {
    try {
      const result = await route.render(new URLSearchParams(location.search), location.pathname.match(route.pattern));
      if (shown !== generation) {
        if (result && result.stop) result.stop();
        return;
      }
      page = result;
    } catch (error) {
      if (shown !== generation) return;
      main.replaceChildren(failure('this page', error));
    }
  }
  main.removeAttribute('aria-busy');
  main.dataset.loaded = 'true';
  const scroll = restoreScroll && history.state && history.state.scrollY;
  window.scrollTo(0, scroll || 0);
  // Keyboard and screen-reader users land on the new page's heading, or stay in the control
  // they were using when that control changed the page (typing a search, picking a filter).
  const kept = focus && main.querySelector(focus);
  if (kept) {
    kept.focus({ preventScroll: true });
    if (typeof kept.setSelectionRange === 'function' && /^(text|search)$/.test(kept.type)) {
      kept.setSelectionRange(kept.value.length, kept.value.length);
    }
  } else if (!restoreScroll) {
    const heading = main.querySelector('h1');
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }
}

onNavigate(show);

function isExplorerPath(pathname) {
  return ROUTES.some((r) => r.pattern.test(pathname));
}

document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = event.target.closest('a[href]');
  if (!link || link.target || link.hasAttribute('download')) return;
  const url = new URL(link.href);
  if (url.origin !== location.origin || !isExplorerPath(url.pathname)) return;
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  event.preventDefault();
  navigate(url.pathname + url.search + url.hash);
});

window.addEventListener('popstate', () => show({ restoreScroll: true }));
window.addEventListener('pagehide', rememberScroll);
history.scrollRestoration = 'manual';
connect();
show({ restoreScroll: true });
