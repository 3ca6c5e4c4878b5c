// node bench/wasm/bench.mjs FILE [WASM] [--parse-only] [--chunk BYTES] [--profile]: feeds
// FILE to the wasm core in 4 MiB chunks (or BYTES). --parse-only times the parser stage
// alone (lines split, their kind found, stats lines read into records) without the
// analyzer's timeline and report. --profile prints each chunk's time over the first
// 96 MiB and the warm-up: what the first 32 MiB took beyond the steady rate (V8 runs a
// function in its baseline tier until its optimizing compiler has compiled it).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const parseOnly = args.includes("--parse-only");
const chunkAt = args.indexOf("--chunk");
const CHUNK = chunkAt >= 0 ? Number(args[chunkAt + 1]) : 4 << 20;
const profileAt = args.indexOf("--profile");
const [file, wasmArg] = args.filter(
  (a, i) =>
    a !== "--parse-only" && a !== "--profile" && (chunkAt < 0 || (i !== chunkAt && i !== chunkAt + 1))
);
const wasmPath =
  wasmArg ??
  path.join(here, "target/wasm32-unknown-unknown/release/batchlens_wasm_bench.wasm");
const module = new WebAssembly.Module(fs.readFileSync(wasmPath));
// The core links wasm-bindgen glue (the chart crate's canvas backend) that the
// parser never calls: stub every import so the raw module loads without JS glue.
const imports = {};
for (const imp of WebAssembly.Module.imports(module)) {
  imports[imp.module] ??= {};
  imports[imp.module][imp.name] = () => {
    throw new Error(`unexpected call to ${imp.module}.${imp.name}`);
  };
}
const instance = new WebAssembly.Instance(module, imports);
const w = instance.exports;
const fd = fs.openSync(file, "r");
const staging = Buffer.alloc(CHUNK);
let total = 0;
let inFeed = 0n;
const chunkMs = []; // [bytes fed after the chunk, ms, bytes], with --profile
const t0 = process.hrtime.bigint();
if (parseOnly) w.parse_start();
else w.start();
const ptr = w.alloc(CHUNK);
for (;;) {
  const n = fs.readSync(fd, staging, 0, CHUNK, null);
  if (n === 0) break;
  // The memory may have grown: take a fresh view each time.
  new Uint8Array(w.memory.buffer, ptr, n).set(staging.subarray(0, n));
  const f0 = process.hrtime.bigint();
  if (parseOnly) w.parse_feed(n);
  else w.feed(n);
  const dt = process.hrtime.bigint() - f0;
  inFeed += dt;
  if (profileAt >= 0 && total < 96 << 20) {
    chunkMs.push([total + n, Number(dt) / 1e6, n]);
    console.log(`${total >> 20} MiB: ${(Number(dt) / 1e6).toFixed(1)} ms`);
  }
  total += n;
}
if (profileAt >= 0) {
  const until = (a, b) => chunkMs.filter(([end]) => end > a && end <= b);
  const ms = (cs) => cs.reduce((t, [, m]) => t + m, 0);
  const first = until(0, 32 << 20);
  const steady = until(48 << 20, 96 << 20);
  const bytes = (cs) => cs.reduce((t, [, , n]) => t + n, 0);
  const perByte = ms(steady) / Math.max(1, bytes(steady));
  const firstBytes = bytes(first);
  console.log(`warm-up: ${(ms(first) - perByte * firstBytes).toFixed(1)} ms beyond the steady rate in the first ${firstBytes >> 20} MiB`);
}
const stats = parseOnly ? w.parse_finish() : w.finish();
const t1 = process.hrtime.bigint();
const secs = Number(t1 - t0) / 1e9;
const feedSecs = Number(inFeed) / 1e9;
console.log(
  (parseOnly
    ? `wasm parser stage: ${total} bytes, ${stats} lines read; `
    : `wasm: ${total} bytes, ${w.lines()} lines, ${stats} stats lines; `) +
    `${secs.toFixed(3)} s total (${(total / secs / 1e9).toFixed(2)} GB/s incl. read+copy), ` +
    `${feedSecs.toFixed(3)} s in feed (${(total / feedSecs / 1e9).toFixed(2)} GB/s)`
);
