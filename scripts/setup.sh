#!/usr/bin/env bash
# Installs what the build and the tests need, idempotently (a no-op when present).
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

have cargo || { echo "setup: cargo not found; install Rust with rustup first" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt

# --- The page (crates/web, web/, e2e/): wasm target, trunk, wasm-bindgen, wasm-pack,
# Chromium + ChromeDriver, and the npm tools (binaryen's wasm-opt, playwright-core).
# Pinned: trunk 0.22+ needs a newer rustc; wasm-bindgen-cli must equal Cargo.lock.
TRUNK_VER=0.21.14
WASM_PACK_VER=0.15.1
WB_VER=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)
has_version() { have "$1" && "$1" --version 2>/dev/null | grep -qF " $2"; }
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if ! have chromium || ! have chromedriver; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
  $SUDO apt-get clean
fi
has_version trunk "$TRUNK_VER" || cargo install --locked trunk --version "$TRUNK_VER"
has_version wasm-pack "$WASM_PACK_VER" || cargo install --locked wasm-pack --version "$WASM_PACK_VER"
if ! has_version wasm-bindgen "$WB_VER" || ! has_version wasm-bindgen-test-runner "$WB_VER"; then
  # --locked fails while the registry lacks a crate its lockfile pins; then resolve afresh.
  cargo install --locked --force wasm-bindgen-cli --version "$WB_VER" \
    || cargo install --force wasm-bindgen-cli --version "$WB_VER"
fi
[ "$(wasm-bindgen --version)" = "wasm-bindgen $WB_VER" ] || { echo "setup: wasm-bindgen is not $WB_VER" >&2; exit 1; }
if [ ! -x e2e/node_modules/.bin/wasm-opt ] || [ ! -d e2e/node_modules/playwright-core ]; then
  (cd e2e && npm ci --no-audit --no-fund)
fi

# --- Live and fleet tests (crates/cli/tests/prometheus.rs, export.rs): a real
# Prometheus and promtool (Debian's package; its service is not needed, the tests
# start their own on loopback), and DuckDB's Python package, in a venv under
# target/, to read the exports back.
if ! have prometheus || ! have promtool; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  $SUDO apt-get clean
fi
PY_TOOLS=target/tools/py
if ! "$PY_TOOLS/bin/python" -c 'import duckdb' 2>/dev/null; then
  rm -rf "$PY_TOOLS"
  python3 -m venv "$PY_TOOLS"
  "$PY_TOOLS/bin/python" -m pip install -q --disable-pip-version-check duckdb
fi
