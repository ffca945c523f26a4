// Moving between the explorer's pages without a reload: `navigate` records the new URL in the
// history (keeping the scroll position of the page left) and has the router show it. Pages
// call `navigate`; the router (app.js) says how a page is shown with `onNavigate`, so pages
// never import the router that imports them.

let showPage = () => {};

// Has `show({ restoreScroll, focus })` called whenever `navigate` changes the page.
export function onNavigate(show) {
  showPage = show;
}

// Keeps the current scroll position in the current history entry, for Back.
export function rememberScroll() {
  history.replaceState({ ...(history.state || {}), scrollY: window.scrollY }, '');
}

// Shows `url` (a path of the explorer), as a new history entry unless `replace`; `focus` is a
// selector of the new page's element to focus instead of its heading.
export function navigate(url, { replace = false, state = {}, focus = null } = {}) {
  if (replace) history.replaceState(state, '', url);
  else {
    rememberScroll();
    history.pushState(state, '', url);
  }
  showPage({ restoreScroll: false, focus });
}
