// The search page: every filter of the API's `agents` query and its full-text search, in a
// form whose values live in the URL; results as cards with reputation bars and, where the
// prober has seen them, whether their endpoints answer, twenty a page,
// keyset pages (`after` in the URL). New agents that match arrive live.

import { gql } from './api.js';
import { h, failure } from './dom.js';
import { agentBadges, count, meter } from './format.js';
import { subscribe, debounce } from './live.js';
import { navigate } from './navigation.js';

const PAGE_SIZE = 20;

const SEARCH = `query Search($filter: AgentFilter, $search: String, $order: AgentOrder, $first: Int, $after: String) {
  agents(filter: $filter, search: $search, orderBy: $order, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id chainId source name description active x402
      skills { id name tags } card { signature }
      reputation { score paymentCount uniquePayers feedbackCount }
      liveness { status uptime7d } } }
  }
}`;

const CHOICES = `{ skillFacets(first: 200) { value count } tagFacets(first: 200) { value count } indexerStatus { chainId name } }`;

// The URL's parameters, named as the form names them.
const FIELDS = ['q', 'skill', 'tag', 'x402', 'signed', 'reachable', 'chain', 'source', 'minrep', 'minprice', 'maxprice', 'order'];

// The API's arguments for the URL's parameters.
export function queryOf(params) {
  const filter = {};
  const text = (name) => (params.get(name) || '').trim();
  if (text('skill')) filter.skill = text('skill');
  const tags = text('tag').split(',').map((t) => t.trim()).filter(Boolean);
  if (tags.length) filter.tags = tags;
  if (text('x402') === 'yes') filter.x402 = true;
  if (text('x402') === 'no') filter.x402 = false;
  if (text('signed') === 'yes') filter.signedCard = true;
  if (text('reachable') === 'yes') filter.reachable = true;
  if (/^\d+$/.test(text('chain'))) filter.chainIds = [Number(text('chain'))];
  if (['FACTORY', 'REGISTRY', 'ERC8004'].includes(text('source'))) filter.sources = [text('source')];
  if (text('minrep') && Number.isFinite(Number(text('minrep')))) filter.minReputation = Number(text('minrep'));
  if (/^\d+$/.test(text('minprice'))) filter.minPrice = text('minprice');
  if (/^\d+$/.test(text('maxprice'))) filter.maxPrice = text('maxprice');
  const order = ['RELEVANCE', 'REPUTATION', 'NEWEST'].includes(text('order')) ? text('order') : null;
  return {
    filter,
    search: text('q') || null,
    order: order || (text('q') ? 'RELEVANCE' : 'REPUTATION'),
    first: PAGE_SIZE,
    after: text('after') || null,
  };
}

export async function renderSearch(main, params) {
  const variables = queryOf(params);
  const [results, choices] = await Promise.allSettled([gql(SEARCH, variables), gql(CHOICES)]);
  const form = searchForm(params, choices.status === 'fulfilled' ? choices.value : null);
  const heading = h('h1', { text: 'Find agents' });
  const outcome = h('div', { id: 'results', 'aria-live': 'polite' });
  const banner = h('div', { class: 'banner', hidden: true });
  main.append(h('div', { class: 'search-layout' }, h('div', { class: 'search-head' }, heading, form), h('div', {}, banner, outcome)));
  main.dataset.page = 'search';
  if (results.status === 'rejected') {
    outcome.append(failure('the agents', results.reason));
    return null;
  }
  outcome.append(resultList(results.value.agents, params));

  // Live: agents registered or changed that match the filter. On the first page of a
  // non-text search the list refreshes itself; elsewhere a banner offers to.
  let fresh = 0;
  const refresh = debounce(async () => {
    try {
      const again = await gql(SEARCH, variables);
      outcome.replaceChildren(resultList(again.agents, params));
    } catch (error) {
      console.warn(error);
    }
  }, 400);
  const stop = subscribe('subscription($filter: AgentFilter) { agentsChanged(filter: $filter) { id } }',
    { filter: variables.filter }, () => {
      if (!variables.after && !variables.search) return refresh();
      fresh += 1;
      banner.hidden = false;
      banner.replaceChildren(`${fresh} agent${fresh === 1 ? '' : 's'} registered or changed since this page loaded. `,
        h('button', { type: 'button', text: 'Show', on: { click: () => navigate(location.pathname + location.search, { replace: true }) } }));
    });
  return { stop };
}

function searchForm(params, choices) {
  const value = (name) => params.get(name) || '';
  const field = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
  const input = (name, props = {}) => h('input', { name, id: `f-${name}`, value: value(name), ...props });
  const select = (name, options) => h('select', { name, id: `f-${name}` },
    options.map(([v, label]) => h('option', { value: v, selected: value(name) === v, text: label })));
  const skills = choices ? choices.skillFacets : [];
  const tags = choices ? choices.tagFacets : [];
  const chains = choices ? choices.indexerStatus : [];
  // On a phone the filters fold away under the search box, saying how many are set.
  const narrow = window.matchMedia('(max-width: 800px)').matches;
  const setCount = FIELDS.filter((name) => !['q', 'order'].includes(name) && value(name)).length;

  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Agents' },
    field('Search', input('q', { type: 'search', placeholder: 'name, description, skill…', autocomplete: 'off' })),
    h('details', { class: 'more-filters', open: !narrow },
      h('summary', { text: setCount ? `Filters (${setCount} set)` : 'Filters' }),
      h('div', { class: 'filter-grid' },
        field('Skill', input('skill', { list: 'skill-list', placeholder: 'id or tag' })),
        h('datalist', { id: 'skill-list' }, skills.map((s) => h('option', { value: s.value, text: `${s.count} agents` }))),
        field('Tags (all of)', input('tag', { list: 'tag-list', placeholder: 'a, b' })),
        h('datalist', { id: 'tag-list' }, tags.map((t) => h('option', { value: t.value, text: `${t.count} agents` }))),
        field('x402', select('x402', [['', 'any'], ['yes', 'accepts x402'], ['no', 'no x402']])),
        field('Min reputation', input('minrep', { type: 'number', min: 0, max: 100, step: 1, inputmode: 'numeric' })),
        field('Min price (units)', input('minprice', { inputmode: 'numeric', pattern: '[0-9]*' })),
        field('Max price (units)', input('maxprice', { inputmode: 'numeric', pattern: '[0-9]*' })),
        field('Chain', select('chain', [['', 'all'], ...chains.map((c) => [String(c.chainId), `${c.name} (${c.chainId})`])])),
        field('Source', select('source', [['', 'all'], ['ERC8004', 'ERC-8004'], ['FACTORY', 'factory'], ['REGISTRY', 'registry']])),
        field('Order', select('order', [['', 'best first'], ['RELEVANCE', 'relevance'], ['REPUTATION', 'reputation'], ['NEWEST', 'newest']])),
        h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'signed', value: 'yes', checked: value('signed') === 'yes' }), ' Signed card'),
        h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'reachable', id: 'f-reachable', value: 'yes', checked: value('reachable') === 'yes' }),
          ' Reachable only (an endpoint answered its last probe)'))),
    h('div', { class: 'form-actions' },
      h('button', { type: 'submit', text: 'Search' }),
      h('a', { href: '/', class: 'button subtle', text: 'Clear' })));

  const apply = (replace, from) => {
    const next = new URLSearchParams();
    for (const name of FIELDS) {
      const control = form.elements[name];
      if (!control) continue;
      const v = control.type === 'checkbox' ? (control.checked ? control.value : '') : control.value.trim();
      if (v) next.set(name, v);
    }
    const query = next.toString();
    navigate(query ? `/?${query}` : '/', { replace, focus: from ? `[name="${from}"]` : null });
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    apply(false);
  });
  // A choice (select, checkbox) applies at once and keeps focus where it was; a typed field
  // applies on Enter or Search, so Tab moves on through the form as usual.
  form.addEventListener('change', (event) => {
    if (event.target.tagName === 'SELECT' || event.target.type === 'checkbox') apply(false, event.target.name);
  });
  // Search as you type, without a history entry per keystroke.
  const typed = debounce(() => apply(true, 'q'), 350);
  form.elements.q.addEventListener('input', typed);
  return form;
}

function resultList(connection, params) {
  const after = params.get('after');
  const summary = h('p', { class: 'summary', data: { total: connection.totalCount } },
    `${count(connection.totalCount)} agent${connection.totalCount === 1 ? '' : 's'}`);
  const cards = connection.edges.length
    ? h('ol', { class: 'cards' }, connection.edges.map(({ node }) => h('li', {}, agentCard(node))))
    : h('p', { class: 'empty', text: 'No agent matches. Loosen a filter or search for fewer words.' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' },
    after ? h('button', { type: 'button', text: history.state && history.state.paged ? '← Previous' : '← First page',
      on: { click: () => (history.state && history.state.paged ? history.back() : navigate(withParam(params, 'after', null))) } }) : null,
    connection.pageInfo.hasNextPage ? h('a', { class: 'button', rel: 'next', href: withParam(params, 'after', connection.pageInfo.endCursor),
      on: { click: (event) => { event.preventDefault(); navigate(withParam(params, 'after', connection.pageInfo.endCursor), { state: { paged: true } }); } },
      text: 'Next →' }) : null);
  return h('div', {}, summary, cards, pager);
}

function withParam(params, name, value) {
  const next = new URLSearchParams(params);
  if (value) next.set(name, value);
  else next.delete(name);
  const query = next.toString();
  return query ? `/?${query}` : '/';
}

// One result: name (a link to its page), badges, description, skills, reputation.
export function agentCard(agent) {
  const rep = agent.reputation;
  return h('article', { class: 'agent-card', data: { agentId: agent.id } },
    h('h3', {}, h('a', { href: `/agents/${encodeURIComponent(agent.id)}`, text: agent.name || agent.id })),
    h('div', { class: 'badges' }, agentBadges(agent)),
    agent.description ? h('p', { class: 'description', text: agent.description }) : null,
    agent.skills.length ? h('ul', { class: 'chips', 'aria-label': 'Skills' },
      agent.skills.slice(0, 6).map((s) => h('li', {}, h('a', { href: `/?skill=${encodeURIComponent(s.id)}`, text: s.name || s.id })))) : null,
    h('div', { class: 'rep' }, h('span', { class: 'rep-label', text: 'Reputation' }), meter(rep.score, `Reputation of ${agent.name || agent.id}`),
      h('span', { class: 'rep-facts', text: `${count(rep.paymentCount)} payments · ${count(rep.uniquePayers)} payers · ${count(rep.feedbackCount)} feedback` })));
}
