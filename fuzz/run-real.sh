#!/usr/bin/env bash
# Runs the `parse` fuzz target with the real logs of tests/fixtures/** as its
# seed corpus: libFuzzer mutates them (bytes flipped, inserted, spliced across
# logs), so the inputs stay close to what servers write.
#
#   fuzz/run-real.sh [SECONDS]     (default 600)
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). The
# corpus is a fresh copy each run (the fixtures are never written); inputs
# libFuzzer finds new are left in it, and any crash in fuzz/artifacts/parse/.
# The last lines printed are libFuzzer's final statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz/run-real.sh: a nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz/run-real.sh: cargo-fuzz is needed (cargo install cargo-fuzz)" >&2
  exit 2
fi

CORPUS=$(mktemp -d "${TMPDIR:-/tmp}/batchlens-fuzz-corpus.XXXXXX")
# Every fixture file, named by its path so logs of the same name do not collide.
find tests/fixtures -type f ! -name '*.md' ! -name '*.py' -print0 |
  while IFS= read -r -d '' f; do
    cp "$f" "$CORPUS/$(echo "${f#tests/fixtures/}" | tr '/' '_')"
  done
echo "corpus: $(ls "$CORPUS" | wc -l) real logs ($(du -sh "$CORPUS" | cut -f1)) in $CORPUS" >&2

# 64 KiB inputs: the longest line the parser reads (docs/limits.md), and
# room for a few hundred lines of a log per input.
exec cargo +nightly fuzz run parse "$CORPUS" -- \
  -max_total_time="$SECS" \
  -max_len=65536 \
  -rss_limit_mb=2048 \
  -timeout=30 \
  -print_final_stats=1
