// node bench/browser.mjs FILE [DIST]: drops FILE on the built page (dist/) in headless
// Chromium and times it until the report is shown (issue 6: 1 GB in under 5 s).
// Needs `trunk build --release` and e2e/node_modules (npm ci in e2e/).
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../e2e/package.json'));
const { chromium } = require('playwright-core');
const file = path.resolve(process.argv[2]);
const dist = path.resolve(process.argv[3] ?? path.join(here, '../dist'));

const server = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dist], {
  stdio: ['ignore', 'pipe', 'ignore'],
});
const port = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/port (\d+)/);
    if (m) resolve(Number(m[1]));
  });
  setTimeout(() => reject(new Error('http.server did not start')), 10000);
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/index.html`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true' || document.getElementById('status'));
  const name = path.basename(file);
  const t0 = Date.now();
  await page.setInputFiles('#file', file);
  await page.waitForFunction((n) => {
    const s = document.getElementById('status').textContent;
    return s.startsWith(`Read ${n}`) && document.body.dataset.result;
  }, name, { timeout: 600000, polling: 50 });
  const secs = (Date.now() - t0) / 1000;
  const bytes = statSync(file).size;
  const status = await page.textContent('#status');
  console.log(`browser: ${bytes} bytes in ${secs.toFixed(2)} s (${(bytes / secs / 1e9).toFixed(2)} GB/s) — ${status.trim()}`);
} finally {
  await browser.close();
  server.kill();
}
