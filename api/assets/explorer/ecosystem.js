// The ecosystem page: totals per chain, daily registrations and payments, the skills and tags
// agents advertise, the best-reputed agents, and how far the indexer is on each chain. Totals
// follow new agents and payments live; the indexer's status is asked for every few seconds.

import { gql } from './api.js';
import { h, section, table, failure } from './dom.js';
import { count, meter, shortHex, sourceName } from './format.js';
import { barChart } from './chart.js';
import { subscribe, debounce } from './live.js';

const STATUS_EVERY_MS = 5000;

const OVERVIEW = `{
  totals { chainId agents factoryAgents registryAgents erc8004Agents payments feedback validationRequests }
  indexerStatus { chainId name headBlock finalizedBlock indexedBlock lag }
  skillFacets(first: 15) { value count }
  tagFacets(first: 15) { value count }
  topAgents(first: 10) { id name source chainId reputation { score paymentCount uniquePayers } }
}`;

const SERIES = `query Series($chain: Int!) {
  registrations: dailySeries(chainId: $chain, series: REGISTRATIONS, days: 90) { day value }
  payments: dailySeries(chainId: $chain, series: PAYMENTS, days: 90) { day value }
}`;

const STATUS = '{ indexerStatus { chainId name headBlock finalizedBlock indexedBlock lag } }';

export async function renderEcosystem(main) {
  // The first chain's series is asked for beside the overview (most indexes have one chain).
  const firstSeries = gql('{ indexerStatus { chainId } }')
    .then((s) => (s.indexerStatus.length ? gql(SERIES, { chain: s.indexerStatus[0].chainId }) : null));
  firstSeries.catch(() => {});
  const data = await gql(OVERVIEW);
  main.dataset.page = 'ecosystem';
  document.title = 'Ecosystem · agentindex';
  const chains = data.indexerStatus.map((s) => s.chainId);
  const slots = {
    totals: h('div', { id: 'totals-slot' }),
    status: h('div', { id: 'status-slot' }),
    series: h('div', { id: 'series-slot', class: 'charts' }),
    top: h('div', { id: 'top-slot' }),
    feed: h('ol', { id: 'live-feed', class: 'feed', 'aria-live': 'polite' }),
  };
  const chainPicker = chains.length > 1 ? h('label', { class: 'field inline' }, h('span', { text: 'Chain' }),
    h('select', { id: 'series-chain', on: { change: (e) => showSeries(Number(e.target.value)) } },
      chains.map((c) => h('option', { value: c, text: chainName(data.indexerStatus, c) })))) : null;
  const showSeries = async (chain, ready = null) => {
    try {
      const series = (await ready) || (await gql(SERIES, { chain }));
      slots.series.replaceChildren(
        barChart(series.registrations, { title: `Registrations per day · ${chainName(data.indexerStatus, chain)}`, unit: 'agents', id: 'registrations-chart' }),
        barChart(series.payments, { title: `Payments per day · ${chainName(data.indexerStatus, chain)}`, unit: 'payments', id: 'ecosystem-payments-chart' }));
    } catch (error) {
      slots.series.replaceChildren(failure('the daily series', error));
    }
  };

  main.append(
    h('h1', { text: 'Ecosystem' }),
    slots.totals,
    h('div', { class: 'eco-grid' },
      section('activity', 'Activity', chainPicker, slots.series),
      section('live', 'Live', h('p', { class: 'muted', text: 'Agents and payments as they are indexed.' }), slots.feed),
      section('skills', 'Skills', facetList(data.skillFacets, 'skill')),
      section('tags', 'Tags', facetList(data.tagFacets, 'tag')),
      section('top-agents', 'Top agents', slots.top),
      section('indexer', 'Indexer', slots.status)));
  slots.totals.append(totals(data.totals, data.indexerStatus));
  slots.status.append(status(data.indexerStatus));
  slots.top.append(topAgents(data.topAgents));
  slots.feed.append(h('li', { class: 'muted', text: 'Waiting for the next block…' }));
  if (chains.length) await showSeries(chains[0], firstSeries);

  const refresh = debounce(async () => {
    try {
      const again = await gql(OVERVIEW);
      slots.totals.replaceChildren(totals(again.totals, again.indexerStatus));
      slots.top.replaceChildren(topAgents(again.topAgents));
      const picker = document.getElementById('series-chain');
      await showSeries(picker ? Number(picker.value) : chains[0]);
    } catch (error) {
      console.warn(error);
    }
  }, 500);
  const note = (item) => {
    const placeholder = slots.feed.querySelector('li.muted');
    if (placeholder) placeholder.remove();
    slots.feed.prepend(item);
    while (slots.feed.children.length > 12) slots.feed.lastElementChild.remove();
    refresh();
  };
  const stops = [
    subscribe('subscription { agentsChanged { id name source chainId } }', {}, ({ agentsChanged: a }) =>
      note(h('li', {}, h('span', { class: 'badge source', text: sourceName(a.source) }), ' ', h('a', { href: `/agents/${encodeURIComponent(a.id)}`, text: a.name || a.id }), ' registered or changed'))),
    subscribe('subscription { newPayments { agentId payer amount x402 blockNumber } }', {}, ({ newPayments: p }) => {
      const link = h('a', { href: `/agents/${encodeURIComponent(p.agentId)}`, text: p.agentId });
      note(h('li', {}, h('span', { class: 'badge good', text: p.x402 ? 'x402' : 'paid' }), ' ', link, ' from ', shortHex(p.payer)));
      nameOf(p.agentId).then((name) => { if (name) link.textContent = name; });
    }),
  ];
  const timer = setInterval(async () => {
    try {
      const again = await gql(STATUS);
      slots.status.replaceChildren(status(again.indexerStatus));
    } catch (error) {
      slots.status.replaceChildren(failure('the indexer status', error));
    }
  }, STATUS_EVERY_MS);
  return { stop: () => { clearInterval(timer); stops.forEach((stop) => stop()); } };
}

// Agents' names by id, asked for once each (a payment event carries only the id).
const names = new Map();
function nameOf(id) {
  if (!names.has(id)) {
    names.set(id, gql('query($id: ID!) { agent(id: $id) { name } }', { id })
      .then((d) => (d.agent ? d.agent.name : null))
      .catch(() => null));
  }
  return names.get(id);
}

function chainName(statuses, chainId) {
  const known = statuses.find((s) => s.chainId === chainId);
  return known ? `${known.name} (${chainId})` : String(chainId);
}

const TOTALS = [
  ['agents', 'Agents'], ['erc8004Agents', 'ERC-8004'], ['factoryAgents', 'Factory'], ['registryAgents', 'Registry'],
  ['payments', 'Payments'], ['feedback', 'Feedback'], ['validationRequests', 'Validations'],
];

// Tiles with the sums over chains, then the same per chain.
function totals(perChain, statuses) {
  const sum = (key) => perChain.reduce((s, t) => s + t[key], 0);
  return h('div', {},
    h('ul', { class: 'tiles', 'aria-label': 'Totals over every chain' }, TOTALS.map(([key, label]) => h('li', { class: 'tile', data: { total: key, value: sum(key) } },
      h('span', { class: 'tile-value', text: count(sum(key)) }), h('span', { class: 'tile-label', text: label })))),
    perChain.length > 1 ? table('Totals per chain', [['Chain', (t) => chainName(statuses, t.chainId)], ...TOTALS.map(([key, label]) => [label, (t) => count(t[key])])], perChain) : null);
}

function status(statuses) {
  return table('Indexer status per chain', [
    ['Chain', (s) => `${s.name} (${s.chainId})`],
    ['Head', (s) => count(s.headBlock)],
    ['Finalized', (s) => count(s.finalizedBlock)],
    ['Indexed', (s) => count(s.indexedBlock)],
    ['Lag', (s) => h('span', { class: s.lag > 10 ? 'warn-text' : '', text: `${count(s.lag)} blocks` })],
  ], statuses.map((s) => Object.assign(s, { __data: { chain: s.chainId, lag: s.lag } })), 'No chain is configured.');
}

function facetList(facets, param) {
  if (!facets.length) return h('p', { class: 'empty', text: 'None yet.' });
  const max = Math.max(...facets.map((f) => f.count));
  return h('ol', { class: 'facets' }, facets.map((f) => h('li', { data: { facet: f.value, count: f.count } },
    h('a', { href: `/?${param}=${encodeURIComponent(f.value)}`, text: f.value }),
    h('span', { class: 'facet-bar', 'aria-hidden': 'true' }, h('span', { style: { width: `${(100 * f.count) / max}%` } })),
    h('span', { class: 'num', text: count(f.count) }))));
}

function topAgents(agents) {
  if (!agents.length) return h('p', { class: 'empty', text: 'No agent is scored yet.' });
  return h('ol', { class: 'top-agents' }, agents.map((a) => h('li', {},
    h('a', { href: `/agents/${encodeURIComponent(a.id)}`, text: a.name || a.id }),
    meter(a.reputation.score, `Reputation of ${a.name || a.id}`),
    h('span', { class: 'muted', text: `${count(a.reputation.paymentCount)} payments · ${count(a.reputation.uniquePayers)} payers` }))));
}
