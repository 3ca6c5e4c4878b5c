// The built page served and a headless Chromium, shared by the end-to-end tests
// (page.test.mjs) and the page benchmark (bench/browser.mjs).
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

/** Serves `dir` on 127.0.0.1 with python's http.server; resolves to { proc, origin }. */
export async function serve(dir) {
  const proc = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve(Number(m[1]));
    });
    proc.stderr.on('data', () => {});
    proc.on('exit', (c) => reject(new Error(`http.server exited (${c}): ${out}`)));
    setTimeout(() => reject(new Error(`http.server did not start: ${out}`)), 10000);
  });
  return { proc, origin: `http://127.0.0.1:${port}` };
}

/** Headless Chromium (CHROMIUM or /usr/bin/chromium) with no background traffic of its own. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
