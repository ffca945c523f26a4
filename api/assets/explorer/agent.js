// An agent's page: who it is (card and registration file), how to reach and pay it, whether
// its endpoints answer (liveness), what its documents say of themselves, its reputation with
// every component and input, its payments (a chart per day and the list), top payers,
// feedback, validations and on-chain history; for a Masumi agent its registry entry and escrows
// (`masumi.js`). Payments and rescoring arrive live.

import { gql, paymentTokens } from './api.js';
import { h, failure, external } from './dom.js';
import { agentBadges, shortHex, time, count } from './format.js';
import { subscribe, debounce } from './live.js';
import * as sections from './agent_sections.js';
import { MASUMI_FIELDS, masumiSection } from './masumi.js';

// What is shown of each item of the agent's lists (asked for again page by page).
const FIELDS = {
  payments: 'payer payee token amount x402 blockNumber logIndex timestamp counts excludedBecause',
  feedback: 'client index value valueDecimals tag1 tag2 endpoint uri blockNumber logIndex txHash timestamp revoked responses',
  validations: 'requestHash validator requestUri blockNumber logIndex txHash responses',
  history: 'blockNumber logIndex kind detail',
};
const list = (field, first = 25) => `${field}(first: ${first}) { totalCount pageInfo { hasNextPage endCursor } nodes { ${FIELDS[field]} } }`;

// The next page of one of the agent's lists, after `after`.
function nextPage(id, field, after) {
  return gql(`query($id: ID!, $after: String) { agent(id: $id) { ${field}(first: 50, after: $after) {
    pageInfo { hasNextPage endCursor } nodes { ${FIELDS[field]} } } } }`, { id, after }).then((d) => d.agent[field]);
}

// The parts that change as payments arrive, asked for again on each.
const ACTIVITY = `
  reputation { score paymentScore paymentCount uniquePayers excludedPayments feedbackCount
    feedbackAverage validationAverage ratingAverage asOfBlock
    components { payments trust feedback validations ratings }
    weights { payments trust feedback validations ratings }
    topPayers { payer payments standing contribution cluster { funder size block } }
    trust { epochBlock relative score topPayers { payer trust } }
    feedbackEvidence { evidenceWeight paidClients provenClients unpaidClients burstClients unpaidScale } }
  dailyPayments(days: 90) { day value }
  ${list('payments')}`;

const AGENT = `query Agent($id: ID!) { agent(id: $id) {
  id chainId source address tokenId registry owner operators name description active uri
  agentWallet paymentAddress registeredBlock registeredAt lastEventBlock x402 inputModes outputModes
  skills { id name description tags }
  card { url status protocolVersion signature }
  registrationVerified domainVerified paymentTerms
  documents { role uri status kind signature error fetchedAt projection lints { code severity message path } }
  liveness { status reachable lastSeen checkedAt uptime24h uptime7d latencyP50
    endpoints { kind url source status checkedAt nextCheckAt lastOkAt latencyMs httpStatus protocolVersion reason error }
    mcpTools { name description }
    extendedCard extendedSkills { id name }
    x402Live { live resources { url status checkedAt walletMatches live accepts { scheme network asset amount payTo } } } }
  ${list('feedback')}
  ${list('validations')}
  ${list('history')}
  ${MASUMI_FIELDS}
  ${ACTIVITY}
} }`;

const REFRESH = `query AgentActivity($id: ID!) { agent(id: $id) { id ${ACTIVITY} } }`;

export async function renderAgent(main, id) {
  // The indexed block before the agent is read: its live updates replay what was committed
  // after it, so a payment that lands while the page loads is not missed.
  const status = await gql('{ indexerStatus { chainId indexedBlock } }');
  const [data, tokens] = await Promise.all([gql(AGENT, { id }), paymentTokens()]);
  const agent = data.agent;
  main.dataset.page = 'agent';
  if (!agent) {
    main.append(h('h1', { text: 'No such agent' }),
      h('p', {}, 'Nothing is indexed under ', h('code', { text: id }), '. ', h('a', { href: '/', text: 'Search agents' })));
    return null;
  }
  document.title = `${agent.name || agent.id} · agentindex`;
  const live = {
    reputation: h('div', { id: 'reputation-slot' }),
    payments: h('div', { id: 'payments-slot' }),
    payers: h('div', { id: 'payers-slot' }),
  };
  const fill = (activity, freshFrom) => {
    live.reputation.replaceChildren(sections.reputation(activity.reputation));
    live.payments.replaceChildren(sections.payments(agent, activity, tokens, freshFrom, morePayments));
    live.payers.replaceChildren(sections.topPayers(activity.reputation));
  };
  const more = (field) => (after) => nextPage(id, field, after);
  const morePayments = more('payments');

  main.append(
    header(agent),
    h('nav', { class: 'jump', 'aria-label': 'On this page' },
      [['overview', 'Overview'], ...(agent.masumi ? [['masumi', 'Masumi']] : []), ['liveness', 'Liveness'], ['reputation', 'Reputation'], ['payments', 'Payments'], ['feedback', 'Feedback'],
        ['validations', 'Validations'], ['documents', 'Documents'], ['history', 'History']]
        .map(([target, label]) => h('a', { href: `#${target}`, text: label }))),
    h('div', { class: 'agent-grid' },
      sections.overview(agent, tokens),
      masumiSection(agent),
      sections.liveness(agent, tokens),
      sections.section('reputation', 'Reputation', live.reputation),
      sections.section('top-payers', 'Top payers', live.payers),
      sections.section('payments', 'Payments', live.payments),
      sections.feedback(agent, more('feedback')),
      sections.validations(agent, more('validations')),
      sections.documents(agent),
      sections.history(agent, more('history'))));
  fill(agent, null);

  // Live: each payment credited (or rescoring) asks for the changing parts again; the
  // payments newer than what was shown are marked.
  let newestShown = agent.payments.nodes[0] ? [agent.payments.nodes[0].blockNumber, agent.payments.nodes[0].logIndex] : [0, -1];
  const refresh = debounce(async () => {
    try {
      const again = await gql(REFRESH, { id });
      if (!again.agent) return;
      fill(again.agent, newestShown);
      const newest = again.agent.payments.nodes[0];
      if (newest) newestShown = [newest.blockNumber, newest.logIndex];
    } catch (error) {
      live.payments.prepend(failure('new payments', error));
    }
  }, 250);
  const chain = status.indexerStatus.find((c) => c.chainId === agent.chainId);
  const since = chain ? chain.indexedBlock : null;
  const stops = [
    subscribe('subscription($id: ID, $since: Int) { newPayments(agentId: $id, sinceBlock: $since) { blockNumber logIndex } }', { id, since }, refresh),
    subscribe('subscription($id: ID!, $since: Int) { reputationChanged(agentId: $id, sinceBlock: $since) { id } }', { id, since }, refresh),
  ];
  return { stop: () => stops.forEach((stop) => stop()) };
}

function header(agent) {
  return h('header', { class: 'agent-head' },
    h('h1', { text: agent.name || agent.id }),
    h('p', { class: 'agent-id mono', text: agent.id }),
    h('div', { class: 'badges' }, agentBadges(agent),
      agent.registrationVerified ? h('span', { class: 'badge good', text: 'registration names it' }) : null,
      agent.domainVerified ? h('span', { class: 'badge good', text: 'domain confirms it' }) : null),
    agent.description ? h('p', { class: 'lead', text: agent.description }) : null,
    h('dl', { class: 'facts' },
      fact('Owner', shortHex(agent.owner)),
      fact('Paid at', agent.paymentAddress ? shortHex(agent.paymentAddress) : 'no bound address'),
      agent.address ? fact('Contract', shortHex(agent.address)) : null,
      agent.tokenId ? fact('Token id', agent.tokenId) : null,
      fact('Registered', `block ${count(agent.registeredBlock)} · ${time(agent.registeredAt)}`),
      agent.uri ? fact('Agent URI', external(agent.uri)) : null,
      agent.operators.length ? fact('Operators', agent.operators.map((o) => [shortHex(o), ' '])) : null));
}

function fact(term, value) {
  return h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}
