// The Masumi section of an agent's page (agents of source MASUMI, on Cardano): its registry
// entry (the NFT, the metadata in one shape whichever version minted it, what reading it found)
// and the escrows of Masumi's payment contract that pay it, each with how it ended. Text from
// the chain is only ever put in text nodes (dom.js).

import { h, section, table, external } from './dom.js';
import { badge, count, time } from './format.js';

// The fields the agent query asks for.
export const MASUMI_FIELDS = `masumi {
  unit policyId assetName registryVersion updates deregisteredBlock metadataVariant metadataVersion
  kind apiUrl agentCardUrl a2aProtocolVersions image tags
  pricing { pricingType fixed { amount unit } }
  author { name contactEmail contactOther organization } legal { privacyPolicy terms other }
  capability { name version } exampleOutputs { name mimeType url }
  unknownFields lints metadataError
  paymentCounts { open released refunded disputed }
  payments(first: 25) { escrowKey contractVersion buyer seller unit amount state outcome lockedBlock lockedAt settledBlock settledAt lockTx }
}`;

const OUTCOMES = { released: 'good', refunded: 'warn', disputed: 'bad' };

// Ada in lovelace shown as ada; a token's amount as written, with its unit shortened.
function price(amount, unit) {
  if (unit === 'lovelace' || unit === '') return `${(Number(amount) / 1e6).toLocaleString('en')} ada`;
  return `${amount} of ${unit.slice(0, 12)}…`;
}

function fact(term, value) {
  return value === null || value === undefined || value === '' ? null
    : h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}

export function masumiSection(agent) {
  const m = agent.masumi;
  if (!m) return null;
  const counts = m.paymentCounts;
  const lints = Array.isArray(m.lints) ? m.lints : [];
  const unknown = Object.keys(m.unknownFields || {});
  return section('masumi', 'Masumi on Cardano',
    h('dl', { class: 'facts' },
      fact('NFT unit', h('span', { class: 'mono', text: m.unit })),
      fact('Registry', `V${m.registryVersion} · policy ${m.policyId.slice(0, 16)}…`),
      fact('Metadata', `${m.metadataVariant}${m.metadataVersion ? ` (metadata_version ${m.metadataVersion})` : ''}`),
      m.updates ? fact('Updates', count(m.updates)) : null,
      m.deregisteredBlock !== null ? fact('Deregistered', `block ${count(m.deregisteredBlock)}`) : null,
      m.apiUrl ? fact('API', external(m.apiUrl)) : null,
      m.agentCardUrl ? fact('Agent card', external(m.agentCardUrl)) : null,
      m.capability ? fact('Capability', [m.capability.name, m.capability.version].filter(Boolean).join(' ')) : null,
      m.author ? fact('Author', [m.author.name, m.author.organization, m.author.contactEmail].filter(Boolean).join(' · ')) : null,
      m.pricing ? fact('Pricing', [m.pricing.pricingType, ...m.pricing.fixed.map((p) => price(p.amount, p.unit))].filter(Boolean).join(' · ')) : null,
      m.tags.length ? fact('Tags', m.tags.join(', ')) : null,
      unknown.length ? fact('Other fields', unknown.join(', ')) : null,
      m.metadataError ? fact('Metadata', m.metadataError) : null),
    lints.length ? h('ul', { class: 'lints' }, lints.map((l) => h('li', {}, badge(l.severity, l.severity === 'error' ? 'bad' : 'warn'), ' ', h('code', { text: l.code }), ' ', l.message))) : null,
    h('h3', { text: 'Escrow payments' }),
    h('p', {}, `${count(counts.released)} released to it (these count for its reputation), ${count(counts.refunded)} refunded, ${count(counts.disputed)} disputed, ${count(counts.open)} open.`),
    table('Escrow payments, newest first', [
      ['Outcome', (p) => (p.outcome ? badge(p.outcome, OUTCOMES[p.outcome]) : badge(p.state || 'open'))],
      ['Price', (p) => price(p.amount, p.unit)],
      ['Buyer', (p) => h('span', { class: 'mono', text: `${p.buyer.slice(0, 10)}…` })],
      ['Locked', (p) => `block ${count(p.lockedBlock)} · ${time(p.lockedAt)}`],
      ['Paid out', (p) => (p.settledBlock !== null ? `block ${count(p.settledBlock)}` : '—')],
      ['Contract', (p) => `V${p.contractVersion}`],
    ], m.payments, 'No escrow pays it yet.'));
}
