#!/usr/bin/env bash
# bench/wasm/run.sh FILE: builds the core for wasm32 with simd128 and times it in node (V8):
# the whole analysis, then the parser stage alone.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
(cd "$HERE" && RUSTFLAGS="-C target-feature=+simd128" cargo build -q --release --target wasm32-unknown-unknown)
node --version
node "$HERE/bench.mjs" "$1"
node "$HERE/bench.mjs" "$1" --parse-only
