#!/usr/bin/env bash
# Installs what the build and the tests need, idempotently (a no-op when present).
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

have cargo || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
