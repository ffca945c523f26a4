// Drives the explorer in Debian's headless Chromium (playwright-core, which never downloads a
// browser of its own) the way a user would, with every request that leaves loopback refused:
// search narrows by skill, an agent's page shows its name, skills, reputation components and
// a chart of its payments, a payment made on the chain appears on that page without a reload,
// the ecosystem page shows the totals the API reports and follows a payment live, a Masumi
// agent's page shows its registry entry and escrows, an agent
// whose registration file is markup runs no script, and GraphiQL runs a query. Writes
// screenshots of the three pages at desktop and phone widths.
//
// stdin: {"explorer": "http://127.0.0.1:PORT/", "rpc": "http://127.0.0.1:PORT", "usdc": "0x…",
//         "screenshots": "/path/to/dir", "skill": "translate",
//         "hostile": {"id": "<an agent whose documents are markup>", "name": "<its name>"}}
// stdout: one JSON object of what was seen; any check that fails exits 1 naming it.

import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => (text += chunk));
  process.stdin.on('end', () => resolve(text));
}));
const base = new URL(input.explorer);
const seen = { blocked: [] };

async function api(query, variables = {}) {
  const response = await fetch(new URL('/graphql', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  assert.ok(!body.errors, `the API refused ${query}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

async function rpc(method, params) {
  const response = await fetch(input.rpc, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await response.json();
  assert.ok(!body.error, `${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

// An ERC-20 transfer(to, amount) from an account anvil holds unlocked, mined at once.
async function payUsdc(from, to, amount) {
  const word = (hex) => hex.replace(/^0x/, '').padStart(64, '0');
  const data = `0xa9059cbb${word(to)}${word(BigInt(amount).toString(16))}`;
  const hash = await rpc('eth_sendTransaction', [{ from, to: input.usdc, data }]);
  for (;;) {
    const receipt = await rpc('eth_getTransactionReceipt', [hash]);
    if (receipt) {
      assert.equal(receipt.status, '0x1', `the USDC transfer ${hash} reverted`);
      return hash;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const isLoopback = (hostname) => hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});

async function contextFor(viewport, isMobile = false) {
  const context = await browser.newContext({ viewport, isMobile, hasTouch: isMobile, deviceScaleFactor: 1, serviceWorkers: 'block' });
  // The network is cut off from everything but loopback: any other request is refused and
  // recorded, and the run fails if there was one.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || isLoopback(url.hostname)) return route.continue();
    seen.blocked.push(url.href);
    return route.abort('internetdisconnected');
  });
  return context;
}

async function loaded(page, name) {
  await page.waitForSelector(`main[data-page="${name}"][data-loaded="true"]`);
}

const errors = [];
function watch(page) {
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  page.on('dialog', (dialog) => {
    errors.push(`a dialog opened: ${dialog.message()}`);
    dialog.dismiss();
  });
  return page;
}

const desktop = await contextFor({ width: 1280, height: 900 });
const page = watch(await desktop.newPage());

// Search narrows by skill, typed into the form as a user would.
await page.goto(base.href);
await loaded(page, 'search');
const everyone = Number(await page.getAttribute('.summary', 'data-total'));
const bySkill = (await api(`query($skill: String!) { agents(filter: { skill: $skill }, first: 100) {
  totalCount edges { node { id name paymentAddress source skills { id } } } } }`, { skill: input.skill })).agents;
await page.fill('#f-skill', input.skill);
await page.press('#f-skill', 'Enter');
await page.waitForURL((url) => url.searchParams.get('skill') === input.skill);
await loaded(page, 'search');
const shown = await page.$$eval('.agent-card', (cards) => cards.map((c) => c.dataset.agentId));
assert.equal(Number(await page.getAttribute('.summary', 'data-total')), bySkill.totalCount, 'the page counts what the API counts');
assert.ok(bySkill.totalCount > 0 && bySkill.totalCount < everyone, `the skill narrows ${everyone} agents (to ${bySkill.totalCount})`);
assert.deepEqual(new Set(shown), new Set(bySkill.edges.map((e) => e.node.id)), 'the cards are the agents with the skill');
assert.ok(await page.$$eval('.agent-card .meter[role="meter"]', (m) => m.length) === shown.length, 'each card has a reputation bar');
seen.search = { total: everyone, withSkill: bySkill.totalCount };
await page.screenshot({ path: shot('search-desktop.png'), fullPage: true });

// The agent's page, reached by keyboard: the first result's link, Enter.
const chosen = bySkill.edges.map((e) => e.node).find((n) => n.source === 'ERC8004' && n.paymentAddress) || bySkill.edges[0].node;
await page.focus(`.agent-card[data-agent-id="${chosen.id}"] h3 a`);
await page.keyboard.press('Enter');
await page.waitForURL((url) => decodeURIComponent(url.pathname) === `/agents/${chosen.id}`);
await loaded(page, 'agent');
const truth = (await api(`query($id: ID!) { agent(id: $id) { name skills { id }
  reputation { score components { payments trust feedback validations ratings } }
  payments(first: 1) { totalCount } } }`, { id: chosen.id })).agent;
assert.equal(await page.textContent('h1'), truth.name, 'the page is titled with the agent name');
const skillsShown = await page.$$eval('li.skill', (items) => items.map((i) => i.dataset.skill));
assert.deepEqual(skillsShown, truth.skills.map((s) => s.id), 'every skill is listed');
const components = await page.$$eval('tr[data-component]', (rows) => rows.map((r) => [r.dataset.component, r.querySelector('[role="meter"]').getAttribute('aria-valuenow')]));
assert.deepEqual(components.map(([name]) => name), ['payments', 'trust', 'feedback', 'validations', 'ratings'], 'every reputation component');
for (const [name, value] of components) {
  const expected = truth.reputation.components[name];
  assert.equal(value, expected === null ? null : Math.min(100, expected).toFixed(1), `the ${name} component shows the API's value`);
}
assert.equal(await page.textContent('.composite .big'), truth.reputation.score.toFixed(1), 'the composite score');
const chartTotal = () => page.$$eval('#payments-chart rect.bar', (bars) => bars.reduce((sum, b) => sum + Number(b.dataset.value), 0));
const paymentsBefore = truth.payments.totalCount;
assert.ok(paymentsBefore > 0, 'the chosen agent has payments to chart');
assert.equal(await chartTotal(), paymentsBefore, 'the chart holds every payment');
seen.agent = { id: chosen.id, name: truth.name, skills: skillsShown, payments: paymentsBefore, score: truth.reputation.score };

// A payment made now appears on the open page without a reload.
await page.evaluate(() => { window.__sameDocument = true; });
const [, payer] = await rpc('eth_accounts', []);
await payUsdc(payer, chosen.paymentAddress, 1234567);
await page.waitForSelector(`.payment-list[data-total="${paymentsBefore + 1}"] tr[data-fresh="true"]`);
assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
assert.equal(await chartTotal(), paymentsBefore + 1, 'the chart counts the new payment');
const freshRow = await page.textContent('tr[data-fresh="true"]');
assert.ok(freshRow.includes('1.234567 USDC'), `the new payment's amount is shown: ${freshRow}`);
seen.live = { paymentsAfter: paymentsBefore + 1 };
await page.screenshot({ path: shot('agent-desktop.png'), fullPage: true });

// The ecosystem page shows the totals the API reports.
await page.click('nav a[data-nav="ecosystem"]');
await loaded(page, 'ecosystem');
const totals = (await api('{ totals { agents payments feedback validationRequests } }')).totals;
const sum = (key) => totals.reduce((s, t) => s + t[key], 0);
for (const key of ['agents', 'payments', 'feedback', 'validationRequests']) {
  assert.equal(Number(await page.getAttribute(`.tile[data-total="${key}"]`, 'data-value')), sum(key), `the ${key} total`);
}
assert.ok(await page.$('#indexer tr[data-chain]'), 'the indexer status per chain');
assert.ok(await page.$('#registrations-chart rect.bar'), 'the daily registrations chart');
seen.ecosystem = { agents: sum('agents'), payments: sum('payments') };
// A payment shows in the live feed, and the totals follow it, without a reload.
await page.evaluate(() => { window.__sameDocument = true; });
await payUsdc(payer, chosen.paymentAddress, 2000000);
const fed = `#live-feed a[href="/agents/${encodeURIComponent(chosen.id)}"]`;
await page.waitForFunction(([selector, name]) => document.querySelector(selector)?.textContent === name, [fed, truth.name]);
await page.waitForSelector(`.tile[data-total="payments"][data-value="${sum('payments') + 1}"]`);
assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the ecosystem page was not reloaded');
await page.screenshot({ path: shot('ecosystem-desktop.png'), fullPage: true });

// Back returns to the agent, Back again to the search at the place it was.
await page.goBack();
await loaded(page, 'agent');
await page.goBack();
await loaded(page, 'search');
assert.equal(new URL(page.url()).searchParams.get('skill'), input.skill, 'Back keeps the search');

// What a document says is text: a name made of markup is shown as written, runs nothing,
// and a javascript: endpoint is not a link.
await page.goto(new URL(`/agents/${encodeURIComponent(input.hostile.id)}`, base).href);
await loaded(page, 'agent');
assert.equal(await page.textContent('h1'), input.hostile.name, 'the hostile name is shown as text');
assert.equal(await page.$$eval('main img, main script', (found) => found.length), 0, 'no element came from the document');
assert.equal(await page.$$eval('a[href^="javascript:" i]', (found) => found.length), 0, 'no javascript: link');
seen.hostile = await page.textContent('h1');

// A Masumi agent's page (Cardano): its registry entry and its escrows, as the API has them.
const masumi = (await api(`{ agents(filter: { sources: [MASUMI] }, first: 20) { edges { node { id name
  masumi { unit paymentCounts { released refunded disputed open } payments(first: 25) { escrowKey } } } } } }`))
  .agents.edges.map((e) => e.node)
  .find((a) => a.masumi && a.masumi.paymentCounts.released > 0);
assert.ok(masumi, 'the demo has a Masumi agent with released escrows');
await page.goto(new URL(`/agents/${encodeURIComponent(masumi.id)}`, base).href);
await loaded(page, 'agent');
await page.waitForSelector('#masumi');
const masumiText = await page.textContent('#masumi');
assert.ok(masumiText.includes(masumi.masumi.unit), 'the section shows the NFT unit');
const escrowRows = await page.$$eval('#masumi tbody tr', (rows) => rows.length);
assert.equal(escrowRows, masumi.masumi.payments.length, 'one row per escrow the API lists');
assert.ok(masumiText.includes(`${masumi.masumi.paymentCounts.released} released`), 'the counts are the API\'s');
seen.masumi = { rows: escrowRows, released: masumi.masumi.paymentCounts.released };

// GraphiQL, from the embedded files only, runs a query.
await page.goto(new URL('/graphql', base).href);
await page.waitForSelector('.graphiql-container .graphiql-execute-button');
await page.click('.graphiql-execute-button');
await page.waitForFunction(() => (document.querySelector('.result-window') || {}).textContent?.includes('totalCount'));
seen.graphiql = true;

// Phone widths.
const phone = await contextFor({ width: 390, height: 844 }, true);
const small = watch(await phone.newPage());
for (const [path, name, file] of [[`/?skill=${encodeURIComponent(input.skill)}`, 'search', 'search-phone.png'],
  [`/agents/${encodeURIComponent(chosen.id)}`, 'agent', 'agent-phone.png'], ['/ecosystem', 'ecosystem', 'ecosystem-phone.png']]) {
  await small.goto(new URL(path, base).href);
  await loaded(small, name);
  const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${path} fits a phone's width (overflows by ${overflow}px)`);
  await small.screenshot({ path: shot(file) });
}

await browser.close();
assert.deepEqual(seen.blocked, [], 'nothing was asked of the network beyond loopback');
assert.deepEqual(errors, [], 'no script error and no dialog');
console.log(JSON.stringify(seen));

function shot(file) {
  mkdirSync(input.screenshots, { recursive: true });
  return join(input.screenshots, file);
}
