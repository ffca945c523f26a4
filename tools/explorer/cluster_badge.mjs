// Opens one agent's page in Debian's headless Chromium (playwright-core) and reports what its
// top payers say about funding clusters: each payer shown and the badge beside it, if any. Every
// request that leaves loopback is refused.
//
// stdin: {"base": "http://127.0.0.1:PORT", "agent": "<an agent id>"}
// stdout: {"payers": [{"payer": "<shown>", "badge": "<badge text or null>", "title": "…"}]}

import { chromium } from 'playwright-core';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => (text += chunk));
  process.stdin.on('end', () => resolve(text));
}));

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
  await page.goto(`${input.base}/agents/${encodeURIComponent(input.agent)}`);
  await page.waitForSelector('main[data-page="agent"][data-loaded="true"]', { timeout: 20000 });
  // The payers' table is the one whose first header is "Payer".
  const payers = await page.$$eval('table', (tables) => {
    const table = tables.find((t) => t.querySelector('th')?.textContent === 'Payer');
    if (!table) return [];
    return [...table.querySelectorAll('tbody tr')].map((row) => {
      const cell = row.querySelector('td');
      const badge = cell.querySelector('.badge');
      return {
        payer: cell.querySelector('.mono')?.textContent ?? cell.textContent,
        badge: badge ? badge.textContent : null,
        title: badge ? badge.getAttribute('title') : null,
      };
    });
  });
  if (errors.length) throw new Error(`the page raised: ${errors.join('; ')}`);
  process.stdout.write(JSON.stringify({ payers }));
} finally {
  await browser.close();
}
