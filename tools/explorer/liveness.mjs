// Opens one agent's page in Debian's headless Chromium (playwright-core) and reports what its
// Liveness section shows: the status, reachability, uptimes, latency, each endpoint probed, the
// MCP tools and whether x402 is live; then opens the search page, ticks "Reachable only" as a
// user would and reports the agents it lists. Every request that leaves loopback is refused.
// Exits 1 naming what went wrong when the section never appears or the page raises.
//
// stdin: {"base": "http://127.0.0.1:PORT", "agent": "<an agent id>", "timeout_ms": 20000 (optional)}
// stdout: {"agent": "<id>", "probed": true,
//          "status": "up", "reachable": "yes", "uptime24h": "100%", "uptime7d": "99.5%",
//          "latencyP50": "37 ms", "lastSeen": "2026-11-27 14:00 UTC", "checkedAt": "…",
//          "endpoints": [{"kind": "MCP", "kindEnum": "MCP", "url": "…", "source": "registration",
//                         "status": "up", "statusEnum": "UP", "latency": "40 ms", "detail": "…"}],
//          "mcpTools": [{"name": "translate_text", "description": "…" or null}],
//          "extendedCard": "fetched" or null, "extendedSkills": ["premium_translate"],
//          "x402Live": "yes",
//          "x402Resources": [{"url": "…", "live": true,
//                             "badges": ["live", "up", "pays the agent's wallet", "checked … UTC"],
//                             "accepts": [{"scheme", "network", "amount", "payTo"}]}],
//          "headerBadge": "up · 99.5% 7d" or null,
//          "search": {"url": "/?reachable=yes", "checked": true, "total": 2,
//                     "agents": [{"id": "…", "name": "…", "liveness": "up · 99.5% 7d" or null}]}}
// When the agent has no liveness (it declares no endpoint, or probing is off), "probed" is false,
// "message" is what the section says instead, and the fields above it are null or empty.

import { chromium } from 'playwright-core';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => (text += chunk));
  process.stdin.on('end', () => resolve(text));
}));
const timeout = Number(input.timeout_ms) || 20000;
const at = (path) => new URL(path, input.base).href;

function fail(message) {
  process.stderr.write(`tools/explorer/liveness.mjs: ${message}\n`);
  process.exitCode = 1;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    return url.hostname === '127.0.0.1' ? route.continue() : route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  const loaded = (name) => page.waitForSelector(`main[data-page="${name}"][data-loaded="true"]`, { timeout });

  // The agent's page and its Liveness section.
  await page.goto(at(`/agents/${encodeURIComponent(input.agent)}`));
  // The section is built with the page: once the page is loaded it is there, or it never comes.
  const section = await page.waitForSelector('main[data-loaded="true"]', { timeout })
    .then(() => page.waitForSelector('main[data-page="agent"] section#liveness', { timeout: 2000 })).catch(() => null);
  if (!section) {
    const shown = (await page.textContent('main').catch(() => '')).trim().replace(/\s+/g, ' ').slice(0, 500);
    throw new Error(`the page of agent ${input.agent} (${page.url()}) never showed its Liveness section (section#liveness) `
      + `within ${timeout} ms; the page shows: ${shown || '(nothing)'}${errors.length ? `; it raised: ${errors.join('; ')}` : ''}`);
  }
  const seen = await section.evaluate((root) => {
    const text = (node) => (node ? node.textContent.trim() : null);
    const fact = (key) => text(root.querySelector(`[data-liveness="${key}"] dd`));
    const none = root.querySelector('[data-liveness="none"]');
    const endpointTable = [...root.querySelectorAll('table')].find((t) => text(t.querySelector('caption')) === 'Endpoints probed');
    const headers = endpointTable ? [...endpointTable.querySelectorAll('thead th')].map(text) : [];
    const cell = (row, header) => text(row.children[headers.indexOf(header)]);
    return {
      probed: !none,
      message: none ? text(none) : null,
      status: text(root.querySelector('[data-liveness="status"]')),
      reachable: fact('reachable'),
      uptime24h: fact('uptime24h'),
      uptime7d: fact('uptime7d'),
      latencyP50: fact('latencyP50'),
      lastSeen: fact('lastSeen'),
      checkedAt: fact('checkedAt'),
      endpoints: endpointTable ? [...endpointTable.querySelectorAll('tbody tr')].map((row) => ({
        kind: cell(row, 'Kind'),
        kindEnum: row.dataset.kind || null,
        url: cell(row, 'URL'),
        source: cell(row, 'From'),
        status: cell(row, 'Status'),
        statusEnum: row.dataset.status || null,
        latency: cell(row, 'Latency'),
        detail: cell(row, 'Detail'),
      })) : [],
      mcpTools: [...root.querySelectorAll('ul.tools:not(.extended-skills) li.tool')].map((li) => ({
        name: li.dataset.tool,
        description: text(li.querySelector('.muted')),
      })),
      extendedCard: fact('extendedCard'),
      extendedSkills: [...root.querySelectorAll('ul.extended-skills li')].map((li) => li.dataset.skill),
      x402Live: fact('x402Live'),
      x402Resources: [...root.querySelectorAll('li.x402-resource')].map((li) => {
        const table = li.querySelector('table');
        const heads = table ? [...table.querySelectorAll('thead th')].map(text) : [];
        const column = (row, header) => row.children[heads.indexOf(header)];
        return {
          url: text(li.querySelector('.url')),
          live: li.dataset.live === 'true',
          badges: [...li.querySelectorAll('.badges > *')].map(text),
          accepts: table ? [...table.querySelectorAll('tbody tr')].map((row) => ({
            scheme: text(column(row, 'Scheme')),
            network: text(column(row, 'Network')),
            amount: text(column(row, 'Amount')),
            // The whole address (shown shortened, whole in its tooltip).
            payTo: column(row, 'Pay to').querySelector('[title]')?.getAttribute('title') ?? text(column(row, 'Pay to')),
          })) : [],
        };
      }),
    };
  });
  const headerBadge = await page.$eval('.agent-head .badge.liveness', (b) => b.textContent).catch(() => null);

  // The search page with "Reachable only" ticked, as a user would.
  await page.goto(at('/'));
  await loaded('search');
  const control = await page.$('input[name="reachable"]');
  if (!control) throw new Error('the search page has no "Reachable only" control (input[name="reachable"])');
  await page.click('input[name="reachable"]');
  await page.waitForURL((url) => url.searchParams.get('reachable') === 'yes', { timeout });
  await loaded('search');
  const search = await page.evaluate(() => ({
    url: location.pathname + location.search,
    checked: document.querySelector('input[name="reachable"]')?.checked ?? false,
    total: Number(document.querySelector('.summary')?.dataset.total ?? NaN),
    failed: document.querySelector('#results .error')?.textContent ?? null,
    agents: [...document.querySelectorAll('.agent-card')].map((card) => ({
      id: card.dataset.agentId,
      name: card.querySelector('h3')?.textContent ?? null,
      liveness: card.querySelector('.badge.liveness')?.textContent ?? null,
    })),
  }));
  if (search.failed) throw new Error(`the search with "Reachable only" failed: ${search.failed}`);
  delete search.failed;
  if (errors.length) throw new Error(`the page raised: ${errors.join('; ')}`);
  process.stdout.write(JSON.stringify({ agent: input.agent, ...seen, headerBadge, search }));
} catch (error) {
  fail(error.message);
} finally {
  await browser.close();
}
