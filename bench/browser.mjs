// node bench/browser.mjs FILE [DIST]: drops FILE on the built page (dist/) in headless
// Chromium and times it until the report is shown (target: 1 GB in under 5 s).
// Needs `trunk build --release` and e2e/node_modules (npm ci in e2e/).
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launchChromium } from '../e2e/serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.resolve(process.argv[2]);
const dist = path.resolve(process.argv[3] ?? path.join(here, '../dist'));

const { proc: server, origin } = await serve(dist);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`${origin}/index.html`);
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
