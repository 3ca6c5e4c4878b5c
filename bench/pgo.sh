#!/usr/bin/env bash
# Builds batchlens with profile-guided optimisation, with cargo-pgo:
#
#   bench/pgo.sh            # prints the optimised binary's path on its last line
#
# The profile is taken on simulated logs (`batchlens simulate`: long runs of SGLang
# with and without DP ranks, vLLM and TensorRT-LLM, and every preset of every
# engine once) and on the bundled examples and fixtures,
# never on the benchmark's own log, so what it teaches the compiler (which
# branches are taken, what is hot enough to inline) is how the tool reads logs in
# general. The profile belongs to the compiler that made it: it is made afresh
# on each run, into target/pgo-profiles (cleared first), and the binary built
# with it lands in target/<host triple>/release/ (the plain release
# build in target/release/ is left alone). Reports are the same byte for byte
# (bench/run.sh checks it); only the machine code's layout changes.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')

rustup component add llvm-tools >&2
if ! cargo pgo --version >/dev/null 2>&1; then
  echo "installing cargo-pgo…" >&2
  cargo install cargo-pgo --locked --version 0.3.0 >&2
fi

cargo pgo clean >&2 || true
echo "building the instrumented binary…" >&2
cargo pgo build -- -q -p batchlens-cli >&2
BIN="$ROOT/target/$TRIPLE/release/batchlens"

TRAIN=$(mktemp -d)
trap 'rm -rf "$TRAIN"' EXIT
echo "taking the profile on simulated logs, examples and fixtures…" >&2
# Long runs, as production logs are (what a long log costs is what matters):
# SGLang with four DP ranks, one rank with millisecond stamps, vLLM V1 and
# TensorRT-LLM; each a single diagnose, read in chunks by both workers.
sim() { # NAME ENGINE JSON
  printf '%s' "$3" > "$TRAIN/$1.json"
  "$BIN" simulate --engine "$2" --config "$TRAIN/$1.json" --out "$TRAIN/$1.log"
  "$BIN" diagnose --no-progress "$TRAIN/$1.log" >/dev/null
}
sim sglang-dp4 sglang '{"dp_size": 4, "rank_prefix_tp0": true, "num_requests": 0, "duration_s": 36000, "seed": 1}'
sim sglang-ms sglang '{"log_ms": true, "num_requests": 0, "duration_s": 36000, "seed": 2}'
sim vllm vllm '{"num_requests": 0, "duration_s": 36000, "seed": 3}'
sim trtllm trtllm '{"num_requests": 0, "duration_s": 3600, "seed": 4}'
# Every preset of every engine, the examples and the fixtures, once each: the
# rarer paths (startup, retractions, other servers' lines, the report) are taken.
k=0
for preset in kv_bound running_cap client_underload prefill_heavy retraction decode_saturated vllm_kv_bound vllm_v0_kv_bound; do
  for engine in sglang vllm vllm-v0 trtllm; do
    k=$((k + 1))
    "$BIN" simulate --preset "$preset" --engine "$engine" --seed "$k" --out "$TRAIN/preset-$preset-$engine.log"
  done
done
for f in "$TRAIN"/preset-*.log examples/*.log tests/fixtures/*/*.log; do
  "$BIN" diagnose --no-progress --format json "$f" >/dev/null 2>&1 || true
done

echo "building the optimised binary…" >&2
cargo pgo optimize build -- -q -p batchlens-cli >&2
echo "$BIN"
