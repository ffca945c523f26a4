// How numbers, addresses, times and amounts read on the page.

import { h } from './dom.js';

// 0x1234…abcd, the whole address in the tooltip.
export function shortHex(hex) {
  if (!hex) return '—';
  const text = String(hex);
  return text.length > 14 ? h('span', { class: 'mono', title: text, text: `${text.slice(0, 6)}…${text.slice(-4)}` })
    : h('span', { class: 'mono', text });
}

export function count(n) {
  return Number(n ?? 0).toLocaleString('en-US');
}

export function score(n) {
  return n === null || n === undefined ? '—' : Number(n).toFixed(1);
}

// A unix time as a UTC date and time.
export function time(unixSecs) {
  if (!unixSecs) return '—';
  return new Date(unixSecs * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

// An amount in a token's smallest units, in whole tokens when the token is a configured one.
export function amount(atomic, token, chainId, tokens) {
  const known = (tokens || []).find((t) => t.chainId === chainId && t.address === String(token).toLowerCase());
  if (!known) return `${atomic} units`;
  return `${wholeUnits(String(atomic), known.decimals)} ${known.symbol}`;
}

// "1234567", 6 → "1.234567" without losing digits to floating point.
export function wholeUnits(atomic, decimals) {
  const digits = atomic.replace(/^-/, '').padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return (atomic.startsWith('-') ? '-' : '') + BigInt(whole).toLocaleString('en-US') + (fraction ? `.${fraction}` : '');
}

// A 0–100 value as a bar with its number; `label` names it for screen readers.
export function meter(value, label) {
  const known = value !== null && value !== undefined;
  const percent = known ? Math.max(0, Math.min(100, Number(value))) : 0;
  return h('span', { class: 'meter-row' },
    h('span', { class: 'meter', role: 'meter', 'aria-label': label, 'aria-valuemin': 0, 'aria-valuemax': 100,
      'aria-valuenow': known ? percent.toFixed(1) : null, 'aria-valuetext': known ? null : 'no data' },
    h('span', { class: 'meter-fill', style: { width: `${percent}%` } })),
    h('span', { class: 'meter-value', text: score(value) }));
}

// A share (0 to 1) as a percentage to a tenth, never rounded up to 100% when short of it.
export function percent(share) {
  if (share === null || share === undefined) return '—';
  let tenths = Math.round(Number(share) * 1000);
  if (tenths >= 1000 && Number(share) < 1) tenths = 999;
  return `${(tenths / 10).toFixed(1).replace(/\.0$/, '')}%`;
}

// What an agent's liveness status means, and the badge kind it is shown with.
export const LIVENESS = {
  UP: ['every endpoint probed answered as its protocol says', 'good'],
  DEGRADED: ['some endpoints answered, or answered wrongly', 'warn'],
  DOWN: ['no endpoint answered', 'bad'],
  UNKNOWN: ['not probed yet', ''],
};

// The agent's liveness in one badge: its status and, when known, its uptime over 7 days.
export function livenessBadge(liveness) {
  const [meaning, kind] = LIVENESS[liveness.status] || LIVENESS.UNKNOWN;
  const status = String(liveness.status).toLowerCase();
  const uptime = liveness.uptime7d === null || liveness.uptime7d === undefined ? null : percent(liveness.uptime7d);
  return h('span', { class: `badge liveness ${kind}`.trim(), data: { livenessStatus: status },
    title: `Endpoints ${status}: ${meaning}${uptime ? `; answered ${uptime} of probes over 7 days` : ''}`,
    text: uptime ? `${status} · ${uptime} 7d` : status });
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind}`.trim(), text });
}

const SOURCES = { FACTORY: 'factory', REGISTRY: 'registry', ERC8004: 'ERC-8004', MASUMI: 'Masumi' };
export function sourceName(source) {
  return SOURCES[source] || String(source).toLowerCase();
}

// The badges an agent's summary carries.
export function agentBadges(agent) {
  return [
    badge(sourceName(agent.source), 'source'),
    badge(`chain ${agent.chainId}`),
    agent.x402 ? badge('x402', 'good') : null,
    agent.card && agent.card.signature === 'valid' ? badge('signed card', 'good') : null,
    agent.active === false ? badge('inactive', 'warn') : null,
    agent.liveness ? livenessBadge(agent.liveness) : null,
  ];
}
