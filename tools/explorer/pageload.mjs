// Times the explorer's pages in Debian's headless Chromium against a warm server: from the
// start of navigation until the page's data is shown (`main[data-loaded="true"]`), each page
// loaded once (its queries new to the server) and then `rounds` times, beside a bare
// navigation to `/healthz` in the same browser (the baseline: what any page costs there).
//
// stdin: {"base": "http://127.0.0.1:PORT", "agent": "<an agent id>", "rounds": 20}
// stdout: {"pages": [{"name", "path", "first_ms", "median_ms", "p95_ms", "max_ms"}], "baseline": {…}}

import { chromium } from 'playwright-core';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => (text += chunk));
  process.stdin.on('end', () => resolve(text));
}));
const rounds = input.rounds || 20;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();

async function time(path, ready) {
  const started = performance.now();
  await page.goto(input.base + path, { waitUntil: ready ? 'commit' : 'load' });
  if (ready) await page.waitForSelector('main[data-loaded="true"]', { timeout: 10000 });
  return performance.now() - started;
}

function summary(name, path, samples, first) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { name, path, first_ms: first === undefined ? null : +first.toFixed(1), median_ms: +at(0.5).toFixed(1), p95_ms: +at(0.95).toFixed(1), max_ms: +sorted[sorted.length - 1].toFixed(1) };
}

const pages = [
  ['search', '/'],
  ['search by skill', '/?skill=translate&x402=yes&minrep=1'],
  ['full-text search', '/?q=weather+forecast'],
  ['agent', `/agents/${encodeURIComponent(input.agent)}`],
  ['ecosystem', '/ecosystem'],
];
const results = [];
const bare = [];
await time('/healthz', false);
for (const [name, path] of pages) {
  // The first load finds no answer in the server's response cache (its queries are new);
  // the rounds after it are answered from the cache while the database is unchanged.
  const first = await time(path, true);
  const samples = [];
  for (let i = 0; i < rounds; i += 1) {
    bare.push(await time('/healthz', false));
    samples.push(await time(path, true));
  }
  results.push(summary(name, path, samples, first));
}
await browser.close();
console.log(JSON.stringify({ pages: results, baseline: summary('bare navigation to /healthz', '/healthz', bare) }));
