// The sections of an agent's page, each built from the agent as the API returns it.

import { h, section, table, external } from './dom.js';
import { amount, badge, count, LIVENESS, meter, percent, score, shortHex, time, wholeUnits } from './format.js';
import { barChart } from './chart.js';

export { section };

const COMPONENTS = [
  ['payments', 'Payments', 'distinct payers and how often they pay, decayed by age'],
  ['trust', 'Trust', 'trust rank of the payment graph: who pays its payers'],
  ['feedback', 'Feedback', 'ERC-8004 feedback weighed by the evidence behind it'],
  ['validations', 'Validations', 'average latest validation response'],
  ['ratings', 'Ratings', 'average latest rating on its contract'],
];

// Card and registration file: skills, endpoints, modes and payment terms.
export function overview(agent, tokens) {
  const docs = agent.documents || [];
  const registration = docs.find((d) => d.kind === 'registration' && d.projection);
  const card = docs.find((d) => d.kind === 'card' && d.projection);
  const endpoints = [];
  for (const service of (registration && registration.projection.services) || []) {
    endpoints.push({ kind: service.name, url: service.endpoint, version: service.version, from: 'registration file' });
  }
  for (const iface of (card && card.projection.interfaces) || []) {
    endpoints.push({ kind: iface.binding, url: iface.url, version: iface.version, from: 'card' });
  }
  const terms = Array.isArray(agent.paymentTerms) ? agent.paymentTerms : [];
  return section('overview', 'Overview',
    h('h3', { text: 'Skills' }),
    agent.skills.length ? h('ul', { class: 'skills' }, agent.skills.map((s) => h('li', { class: 'skill', data: { skill: s.id } },
      h('strong', {}, h('a', { href: `/?skill=${encodeURIComponent(s.id)}`, text: s.name || s.id })),
      s.name && s.name !== s.id ? h('span', { class: 'mono muted', text: ` ${s.id}` }) : null,
      s.description ? h('p', { text: s.description }) : null,
      s.tags.length ? h('ul', { class: 'chips' }, s.tags.map((t) => h('li', {}, h('a', { href: `/?tag=${encodeURIComponent(t)}`, text: t })))) : null)))
      : h('p', { class: 'empty', text: 'No skills declared.' }),
    h('h3', { text: 'Endpoints' }),
    table('Endpoints', [
      ['Kind', (e) => e.kind],
      ['Where', (e) => external(e.url)],
      ['Version', (e) => e.version || '—'],
      ['From', (e) => e.from],
    ], endpoints, 'No endpoint declared.'),
    agent.inputModes.length || agent.outputModes.length ? h('p', { class: 'modes' },
      h('span', { text: `Accepts ${agent.inputModes.join(', ') || '—'}` }), ' · ',
      h('span', { text: `produces ${agent.outputModes.join(', ') || '—'}` })) : null,
    h('h3', { text: 'Payment terms' }),
    table('Payment terms', [
      ['Declared in', (t) => t.source],
      ['Network', (t) => t.network || '—'],
      ['Asset', (t) => (t.asset ? shortHex(t.asset) : '—')],
      ['Pay to', (t) => (t.pay_to || t.payTo ? shortHex(t.pay_to || t.payTo) : '—')],
      ['Amount', (t) => termAmount(t, agent.chainId, tokens)],
      ['Skill', (t) => t.skill || '—'],
    ], terms, agent.x402 ? 'Declares x402 without stated terms.' : 'No payment terms declared.'));
}

function termAmount(terms, chainId, tokens) {
  if (!terms.amount) return '—';
  if (/^\d+$/.test(terms.amount) && terms.asset) return amount(terms.amount, terms.asset, chainId, tokens);
  return terms.amount;
}

// The kinds of endpoint a prober asks, as a reader names them.
const ENDPOINT_KINDS = {
  A2A_CARD: 'A2A card',
  A2A_JSONRPC: 'A2A JSON-RPC',
  A2A_REST: 'A2A HTTP+JSON',
  MCP: 'MCP',
  X402: 'x402',
  WEB: 'web',
};

// What an endpoint's last probe found, and the badge kind it is shown with.
const ENDPOINT_STATUS = {
  PENDING: ['not probed yet', ''],
  UP: ['answered as its protocol says', 'good'],
  DEGRADED: ['answered, but not as its protocol says', 'warn'],
  DOWN: ['did not answer, or answered with a server error', 'bad'],
  BLOCKED: ['not probed: the address rules refuse it or where it redirects', 'warn'],
};

// Whether the agent's endpoints answer, as this instance's prober saw them: the status, uptime
// and latency, each endpoint's last probe, the tools its MCP servers list and its x402
// resources. Endpoints are shown as text, not links: they are what the agent declares.
export function liveness(agent, tokens) {
  const live = agent.liveness;
  if (!live) {
    return section('liveness', 'Liveness',
      h('p', { class: 'empty', data: { liveness: 'none' }, text: 'Not probed: the agent declares no endpoint, or this instance does not probe endpoints.' }));
  }
  const [meaning, kind] = LIVENESS[live.status] || LIVENESS.UNKNOWN;
  const status = String(live.status).toLowerCase();
  const x402 = live.x402Live;
  return section('liveness', 'Liveness',
    h('div', { class: 'badges liveness-status' },
      h('span', { class: `badge ${kind}`.trim(), data: { liveness: 'status', status }, title: meaning, text: status }),
      h('span', { class: 'muted', text: meaning })),
    h('dl', { class: 'facts inputs' },
      livenessFact('Reachable', live.reachable ? 'yes' : 'no', 'reachable'),
      livenessFact('Uptime 24 h', percent(live.uptime24h), 'uptime24h'),
      livenessFact('Uptime 7 days', percent(live.uptime7d), 'uptime7d'),
      livenessFact('Median latency', live.latencyP50 === null || live.latencyP50 === undefined ? '—' : `${count(live.latencyP50)} ms`, 'latencyP50'),
      livenessFact('Last seen', time(live.lastSeen), 'lastSeen'),
      livenessFact('Last checked', time(live.checkedAt), 'checkedAt')),
    h('h3', { text: 'Endpoints' }),
    table('Endpoints probed', [
      ['Kind', (e) => ENDPOINT_KINDS[e.kind] || (e.kind ? String(e.kind) : '—')],
      ['URL', (e) => h('span', { class: 'mono url', text: e.url })],
      ['From', (e) => e.source],
      ['Status', (e) => endpointStatus(e.status)],
      ['Latency', (e) => (e.latencyMs === null || e.latencyMs === undefined ? '—' : `${count(e.latencyMs)} ms`)],
      ['Checked', (e) => [h('span', { class: 'when', text: time(e.checkedAt) }), ' ',
        h('small', { class: 'muted block when', text: `next ${time(e.nextCheckAt)}` })]],
      ['Detail', endpointDetail],
    ], live.endpoints.map((e) => ({ ...e, __data: { kind: e.kind || '', status: e.status } })), 'No endpoint probed yet.'),
    h('h3', { text: 'MCP tools' }),
    live.mcpTools.length ? h('ul', { class: 'plain tools' }, live.mcpTools.map((t) => h('li', { class: 'tool', data: { tool: t.name } },
      h('code', { text: t.name }), t.description ? h('span', { class: 'muted', text: ` ${t.description}` }) : null)))
      : h('p', { class: 'empty', text: 'No MCP server listed tools.' }),
    live.extendedCard ? [
      h('h3', { text: 'Extended card' }),
      h('dl', { class: 'facts inputs' }, livenessFact('Authenticated extended card', live.extendedCard, 'extendedCard')),
      live.extendedSkills.length ? h('ul', { class: 'plain tools extended-skills' }, live.extendedSkills.map((s) => h('li', { class: 'tool', data: { skill: s.id } },
        h('code', { text: s.id }), h('span', { class: 'muted', text: ` ${s.name}` })))) : null,
    ] : null,
    h('h3', { text: 'x402 live' }),
    h('dl', { class: 'facts inputs' },
      livenessFact("Live (a 402 asks to pay the agent's wallet)", x402.live ? 'yes' : 'no', 'x402Live')),
    x402.resources.length ? h('ul', { class: 'documents x402-resources' }, x402.resources.map((r) => x402Resource(agent, r, tokens)))
      : h('p', { class: 'empty', text: 'No x402 resource probed.' }));
}

function livenessFact(term, value, key) {
  return h('div', { data: { liveness: key } }, h('dt', { text: term }), h('dd', { text: value }));
}

function endpointStatus(status) {
  const [meaning, kind] = ENDPOINT_STATUS[status] || ENDPOINT_STATUS.PENDING;
  return h('span', { class: `badge ${kind}`.trim(), title: meaning, text: String(status).toLowerCase() });
}

// The HTTP status and protocol version of an endpoint's last answer, and why it is not up.
function endpointDetail(e) {
  const parts = [
    e.httpStatus ? `HTTP ${e.httpStatus}` : null,
    e.protocolVersion ? `version ${e.protocolVersion}` : null,
    e.lastOkAt && e.status !== 'UP' ? `last answered ${time(e.lastOkAt)}` : null,
  ].filter(Boolean);
  if (!parts.length && !e.reason && !e.error) return '—';
  return h('span', { class: 'detail' },
    parts.length ? h('span', { class: 'muted', text: parts.join(' · ') }) : null,
    e.reason ? [parts.length ? ' · ' : null, h('code', { class: 'reason', text: e.reason })] : null,
    e.error ? [parts.length || e.reason ? ': ' : null, h('span', { class: 'error-text', text: e.error })] : null);
}

// One x402 resource: whether it asks to be paid to the agent, and what it asks.
function x402Resource(agent, r, tokens) {
  // The prober's rule: the agent's on-chain wallet, else its payment address.
  const own = (agent.agentWallet || agent.paymentAddress || '').toLowerCase();
  const wallet = r.walletMatches === true ? badge("pays the agent's wallet", 'good')
    : r.walletMatches === false ? badge("pays another address", 'bad')
      : h('span', { class: 'muted', text: 'wallet not known yet' });
  return h('li', { class: 'document x402-resource', data: { live: r.live ? 'true' : 'false' } },
    h('div', { class: 'doc-head' }, h('span', { class: 'mono url', text: r.url })),
    h('div', { class: 'badges' },
      r.live ? badge('live', 'good') : badge('not live'),
      r.status ? endpointStatus(r.status.toUpperCase()) : null,
      wallet,
      r.checkedAt ? h('span', { class: 'muted', text: `checked ${time(r.checkedAt)}` }) : null),
    table('Payment requirements', [
      ['Scheme', (a) => a.scheme || '—'],
      ['Network', (a) => a.network || '—'],
      ['Amount', (a) => acceptAmount(a, agent.chainId, tokens)],
      ['Pay to', (a) => (a.payTo ? [shortHex(a.payTo), own && own === a.payTo.toLowerCase() ? [' ', badge('the agent', 'good')] : null] : '—')],
    ], r.accepts, 'No payment requirements read.'));
}

// An x402 amount in whole tokens when its asset is a configured token of its network's chain.
function acceptAmount(a, chainId, tokens) {
  if (!a.amount) return '—';
  if (!/^\d+$/.test(a.amount) || !a.asset) return a.amount;
  const network = /^eip155:(\d+)$/.exec(a.network || '');
  return amount(a.amount, a.asset, network ? Number(network[1]) : chainId, tokens);
}

// The composite, each component with its weight, and the inputs behind them.
export function reputation(rep) {
  const evidence = rep.feedbackEvidence;
  return h('div', { class: 'reputation' },
    h('div', { class: 'composite' }, h('span', { class: 'big', data: { score: rep.score }, text: score(rep.score) }),
      h('span', { class: 'muted', text: ` / 100, as of block ${count(rep.asOfBlock)}` })),
    h('table', { class: 'components' },
      h('caption', { class: 'sr-only', text: 'Reputation components' }),
      h('thead', {}, h('tr', {}, ['Component', 'Score', 'Weight'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, COMPONENTS.map(([key, label, what]) => h('tr', { data: { component: key } },
        h('th', { scope: 'row' }, label, h('small', { text: what })),
        h('td', {}, meter(rep.components[key], `${label} component`)),
        h('td', { class: 'num', text: `${Math.round((rep.weights[key] || 0) * 100)}%` }))))),
    h('h3', { text: 'Inputs' }),
    h('dl', { class: 'facts inputs' },
      input('Payments that count', count(rep.paymentCount), 'paymentCount'),
      input('Distinct payers', count(rep.uniquePayers), 'uniquePayers'),
      input('Payments left out', count(rep.excludedPayments), 'excludedPayments'),
      input('Payment score', score(rep.paymentScore), 'paymentScore'),
      input('Feedback (unrevoked)', count(rep.feedbackCount), 'feedbackCount'),
      input('Feedback average', score(rep.feedbackAverage), 'feedbackAverage'),
      input('Validation average', score(rep.validationAverage), 'validationAverage'),
      input('Rating average', score(rep.ratingAverage), 'ratingAverage'),
      rep.trust ? input('Trust vs. average agent', `${rep.trust.relative.toFixed(2)}× (block ${count(rep.trust.epochBlock)})`, 'trust') : null,
      evidence ? input('Feedback evidence', `${evidence.paidClients} paid · ${evidence.provenClients} proven · ${evidence.unpaidClients} unpaid · ${evidence.burstClients} in bursts`, 'evidence') : null,
      evidence && evidence.unpaidScale < 1 ? input('Unpaid feedback scaled by', evidence.unpaidScale.toFixed(2), 'unpaidScale') : null));
}

function input(term, value, key) {
  return h('div', { data: { input: key } }, h('dt', { text: term }), h('dd', { text: value }));
}

// The chart of payments per day and the newest payments; rows newer than `freshFrom`
// ([block, log index]) are marked as just arrived.
export function payments(agent, activity, tokens, freshFrom, loadMore) {
  const connection = activity.payments;
  const isFresh = (p) => freshFrom && (p.blockNumber > freshFrom[0] || (p.blockNumber === freshFrom[0] && p.logIndex > freshFrom[1]));
  const rows = (nodes) => nodes.map((p) => Object.assign(p, { __data: { block: p.blockNumber, log: p.logIndex, fresh: isFresh(p) ? 'true' : 'false' } }));
  const columns = [
    ['When', (p) => time(p.timestamp)],
    ['Payer', (p) => shortHex(p.payer)],
    ['Amount', (p) => amount(p.amount, p.token, agent.chainId, tokens)],
    ['How', (p) => (p.x402 ? badge('x402', 'good') : 'transfer')],
    ['Counts', (p) => (p.counts ? 'yes' : badge(`no: ${String(p.excludedBecause || '').replace('_', ' ')}`, 'warn'))],
    ['Block', (p) => count(p.blockNumber)],
  ];
  const list = h('div', { class: 'payment-list', data: { total: connection.totalCount } },
    h('p', { class: 'summary', text: `${count(connection.totalCount)} payment${connection.totalCount === 1 ? '' : 's'} credited` }),
    table('Payments', columns, rows(connection.nodes), 'No payments yet.'));
  if (connection.pageInfo.hasNextPage) list.append(moreButton(connection.pageInfo.endCursor, loadMore, (page) => table('More payments', columns, rows(page.nodes))));
  return h('div', {}, barChart(activity.dailyPayments, { title: 'Payments per day', unit: 'payments', id: 'payments-chart' }), list);
}

// A list's first page as a table, with a button for the pages after it.
function paged(caption, columns, connection, loadMore, empty) {
  const shown = table(caption, columns, connection.nodes, empty);
  if (!connection.pageInfo.hasNextPage) return shown;
  return h('div', {}, shown, moreButton(connection.pageInfo.endCursor, loadMore, (page) => table(caption, columns, page.nodes)));
}

// A button that loads the next page of a list below itself and moves down.
function moreButton(cursor, load, render) {
  const button = h('button', { type: 'button', class: 'subtle', text: 'Show more' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const page = await load(cursor);
      const next = page.pageInfo.hasNextPage ? moreButton(page.pageInfo.endCursor, load, render) : null;
      button.replaceWith(render(page), ...(next ? [next] : []));
    } catch (error) {
      button.disabled = false;
      button.textContent = `Show more (failed: ${error.message})`;
    }
  });
  return button;
}

// A payer, and when it stands for a funding cluster, which one (payers whose money came from
// one account shortly before they paid count as one payer).
function payerCell(p) {
  if (!p.cluster) return shortHex(p.payer);
  const c = p.cluster;
  const funder = `${c.funder.slice(0, 6)}…${c.funder.slice(-4)}`;
  const why = `cluster of ${count(c.size)} funded by ${funder} at block ${c.block}`;
  return h('span', { class: 'badges' }, shortHex(p.payer),
    h('span', { class: 'badge warn', title: `Funded by ${c.funder}: these payers count as one`, text: why }));
}

export function topPayers(rep) {
  return h('div', {},
    table('Top payers', [
      ['Payer', payerCell],
      ['Payments', (p) => count(p.payments)],
      ['Standing', (p) => meter(p.standing * 100, 'Standing in the trust rank')],
      ['Adds', (p) => p.contribution.toFixed(2)],
    ], rep.topPayers, 'No payer counts yet.'),
    rep.trust && rep.trust.topPayers.length ? h('p', { class: 'muted' }, 'Most trust passed by ',
      rep.trust.topPayers.slice(0, 3).map((p, i) => [i ? ', ' : '', shortHex(p.payer), ` (${p.trust.toFixed(2)})`]), '.') : null);
}

export function feedback(agent, loadMore) {
  const connection = agent.feedback;
  return section('feedback', `Feedback (${count(connection.totalCount)})`,
    paged('Feedback', [
      ['When', (f) => time(f.timestamp)],
      ['Client', (f) => shortHex(f.client)],
      ['Value', (f) => [feedbackValue(f), f.revoked ? [' ', badge('revoked', 'warn')] : null]],
      ['Tags', (f) => [f.tag1, f.tag2].filter(Boolean).join(' · ') || '—'],
      ['File', (f) => (f.uri ? external(f.uri, 'file') : '—')],
      ['Responses', (f) => responses(f.responses)],
    ], connection, loadMore, 'No ERC-8004 feedback.'));
}

function feedbackValue(f) {
  return f.valueDecimals ? wholeUnits(String(f.value), f.valueDecimals) : String(f.value);
}

function responses(list) {
  if (!Array.isArray(list) || !list.length) return '—';
  return h('ul', { class: 'plain' }, list.map((r) => h('li', {}, shortHex(r.responder),
    r.uri ? [' ', external(r.uri, 'response')] : null, r.block ? h('span', { class: 'muted', text: ` block ${count(r.block)}` }) : null)));
}

export function validations(agent, loadMore) {
  const connection = agent.validations;
  return section('validations', `Validations (${count(connection.totalCount)})`,
    paged('Validations', [
      ['Validator', (v) => shortHex(v.validator)],
      ['Request', (v) => (v.requestUri ? external(v.requestUri, 'request') : shortHex(v.requestHash))],
      ['Responses', (v) => (Array.isArray(v.responses) && v.responses.length
        ? v.responses.map((r) => badge(`${r.response}${r.tag ? ` ${r.tag}` : ''}`, r.response >= 50 ? 'good' : 'warn'))
        : 'pending')],
      ['Block', (v) => count(v.blockNumber)],
    ], connection, loadMore, 'No validation requests.'));
}

// What a document's status means to someone reading it.
const STATUS = {
  ok: 'read and usable',
  invalid: 'fetched, but not a usable document',
  failed: 'could not be fetched',
  pending: 'not fetched yet',
  hash_mismatch: 'does not hash to the hash anchored on-chain: not used',
};

// What a signature status means.
const SIGNATURE = {
  valid: 'signature valid',
  unsigned: 'unsigned',
  invalid: 'signature invalid',
  key_unavailable: 'signing key not found',
  unsupported: 'signature of an unsupported kind',
};

// Every document with its status, signature and lint report.
export function documents(agent) {
  const docs = agent.documents || [];
  return section('documents', 'Documents',
    docs.length ? h('ul', { class: 'documents' }, docs.map((d) => h('li', { class: 'document', data: { role: d.role, status: d.status || 'pending' } },
      h('div', { class: 'doc-head' }, h('strong', { text: d.role }), ' ', external(d.uri)),
      h('div', { class: 'badges' },
        h('span', { class: `badge ${d.status === 'ok' ? 'good' : d.status ? 'bad' : ''}`.trim(), title: STATUS[d.status || 'pending'] || d.status,
          text: (d.status || 'pending').replace('_', ' ') }),
        h('span', { class: 'muted', text: STATUS[d.status || 'pending'] || '' }),
        d.kind ? badge(d.kind) : null,
        d.signature ? badge(SIGNATURE[d.signature] || `signature ${d.signature}`, d.signature === 'valid' ? 'good' : d.signature === 'unsigned' ? '' : 'bad') : null,
        d.fetchedAt ? h('span', { class: 'muted', text: `fetched ${time(d.fetchedAt)}` }) : null),
      d.error ? h('p', { class: 'error-text', text: d.error }) : null,
      d.lints.length ? h('details', {}, h('summary', { text: `${d.lints.length} finding${d.lints.length === 1 ? '' : 's'} (${lintSummary(d.lints)})` }),
        h('ul', { class: 'lints' }, d.lints.map((l) => h('li', { class: `lint ${l.severity}` },
          badge(l.severity, l.severity === 'error' ? 'bad' : l.severity === 'warning' ? 'warn' : ''), ' ',
          h('code', { text: l.code }), ' ', l.message, l.path ? h('span', { class: 'muted mono', text: ` at ${l.path}` }) : null))))
        : h('p', { class: 'muted', text: 'No findings.' }))))
      : h('p', { class: 'empty', text: 'The chain points at no document.' }));
}

function lintSummary(lints) {
  const by = {};
  for (const l of lints) by[l.severity] = (by[l.severity] || 0) + 1;
  return Object.entries(by).map(([severity, n]) => `${n} ${severity}`).join(', ');
}

export function history(agent, loadMore) {
  const connection = agent.history;
  return section('history', `On-chain history (${count(connection.totalCount)})`,
    paged('On-chain history', [
      ['Block', (e) => count(e.blockNumber)],
      ['Event', (e) => e.kind.replaceAll('_', ' ')],
      ['Detail', (e) => detail(e.detail)],
    ], connection, loadMore, 'No events.'));
}

function detail(value) {
  if (!value || typeof value !== 'object') return String(value ?? '—');
  return h('span', { class: 'detail' }, Object.entries(value).map(([key, v], i) => [i ? ' · ' : '', h('span', { class: 'muted', text: `${key} ` }),
    typeof v === 'string' && /^0x[0-9a-f]{40}$/i.test(v) ? shortHex(v) : typeof v === 'object' ? JSON.stringify(v) : String(v)]));
}
