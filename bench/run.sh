#!/usr/bin/env bash
# batchlens throughput benchmark. Not part of CI: it writes GBs.
#
#   bench/run.sh [--size BYTES] [--big] [--no-python] [--no-gzip] [--pgo] [--wasm] [--browser] [--shapes] [--dir DIR]
#
# Generates a realistic SGLang log (bench/gen_sglang.py, cached in DIR), builds
# batchlens in release, then times on the same warm file, in the same run:
#   batchlens diagnose, wc -l, grep -c 'Decode batch' (output to a file: GNU grep
#   stops at the first match when writing to /dev/null), and the Python streaming
#   regex baseline (bench/baseline.py); peak RSS of batchlens (GNU time);
#   batchlens on the .gz vs gzip -dc alone; with --big the same at 4x the size
#   (the RSS must not grow); with --wasm the core in V8 (node); with --browser the
#   file dropped on the built page (dist/, `trunk build --release`) in headless Chromium;
#   with --shapes the same against grep on logs of other shapes (bench/gen_shapes.py:
#   SGLang and vLLM with request logging, long prompt lines; a TensorRT-LLM iteration log);
#   with --pgo also the binary built with profile-guided optimisation (bench/pgo.sh: a
#   profile taken on simulated logs, never this one), its report checked identical.
# batchlens reads on two workers (each reads a chunk ahead, then feeds it in turn); the wall time is
# what the targets compare, the CPU time shows the work.
set -euo pipefail

SIZE=1000000000
BIG=0
PY=1
GZ=1
WASM=0
BROWSER=0
SHAPES=0
PGO=0
DIR=${BENCH_DIR:-/tmp/batchlens-bench}
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE=$(awk -v s="$2" 'BEGIN { printf "%d", s }'); shift 2 ;;
    --big) BIG=1; shift ;;
    --no-python) PY=0; shift ;;
    --no-gzip) GZ=0; shift ;;
    --wasm) WASM=1; shift ;;
    --browser) BROWSER=1; shift ;;
    --shapes) SHAPES=1; shift ;;
    --pgo) PGO=1; shift ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$DIR"
GNU_TIME=/usr/bin/time
if ! "$GNU_TIME" -f %M true >/dev/null 2>&1; then
  echo "GNU time is needed for peak RSS (Debian: apt-get install time)" >&2
  exit 2
fi

gen() { # FILE SIZE
  if [ -f "$1" ] && [ "$(stat -c %s "$1")" -ge "$2" ]; then return; fi
  echo "generating $1 ($2 bytes)…" >&2
  python3 "$ROOT/bench/gen_sglang.py" "$1.tmp" "$2" && mv "$1.tmp" "$1"
}

echo "building batchlens (release)…" >&2
(cd "$ROOT" && cargo build --release -q -p batchlens-cli)
BL="$ROOT/target/release/batchlens"
BL_PGO=""
if [ "$PGO" = 1 ]; then
  echo "building batchlens with PGO (bench/pgo.sh)…" >&2
  BL_PGO=$("$ROOT/bench/pgo.sh" | tail -n1)
fi

# Best of N runs of a command (output to $DIR/out): prints "WALL CPU" in seconds,
# CPU = user + sys. On a shared machine the CPU time is the steadier figure; the
# wall time is what a user waits (both are printed, ratios for both).
best() { # N CMD…
  local n=$1; shift
  local bw="" bc=""
  for _ in $(seq "$n"); do
    local t0 t1
    t0=$(date +%s%N)
    "$GNU_TIME" -f "%U %S" -o "$DIR/cpu" "$@" >"$DIR/out" 2>/dev/null || true
    t1=$(date +%s%N)
    local w c
    w=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    c=$(awk '{ printf "%.3f", $1 + $2 }' "$DIR/cpu")
    if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN { exit !(a < b) }'; then bw=$w; fi
    if [ -z "$bc" ] || awk -v a="$c" -v b="$bc" 'BEGIN { exit !(a < b) }'; then bc=$c; fi
  done
  echo "$bw $bc"
}
wall() { echo "${1% *}"; }
cpu() { echo "${1#* }"; }
rss_mib() { # CMD… → peak RSS in MiB, the highest of 3 runs
  # How many chunks are in flight at once (each ~1.6 MiB with its reading) depends
  # on how the two workers happen to interleave, so one run's peak varies by
  # ±1–2 MiB; the highest of a few is the bound the memory stays under.
  local top=0
  for _ in 1 2 3; do
    "$GNU_TIME" -f %M -o "$DIR/rss" "$@" >/dev/null 2>&1 || true
    top=$(awk -v t="$top" '{ print ($1 > t ? $1 : t) }' "$DIR/rss")
  done
  awk -v k="$top" 'BEGIN { printf "%.1f", k / 1024 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
gbs() { awk -v s="$1" -v t="$2" 'BEGIN { printf "%.2f", s / t / 1e9 }'; }

measure() { # FILE
  local f=$1 size
  size=$(stat -c %s "$f")
  cat "$f" >/dev/null # warm the page cache
  local t_bl t_wc t_grep t_py
  t_bl=$(best 5 "$BL" diagnose --format json "$f")
  local lines_bl
  lines_bl=$(grep -m1 '"lines"' "$DIR/out" | tr -dc 0-9)
  cp "$DIR/out" "$DIR/out.plain"
  t_wc=$(best 5 wc -l "$f")
  t_grep=$(best 5 grep -c 'Decode batch' "$f")
  local rss
  rss=$(rss_mib "$BL" diagnose --format json "$f")
  echo
  echo "== $f: $size bytes, $lines_bl lines (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%-32s %9s %7s %9s %7s\n' "" "wall s" "GB/s" "cpu s" "GB/s"
  row() { printf '%-32s %9s %7s %9s %7s\n' "$1" "$(wall "$2")" "$(gbs "$size" "$(wall "$2")")" "$(cpu "$2")" "$(gbs "$size" "$(cpu "$2")")"; }
  row "batchlens diagnose" "$t_bl"
  row "wc -l" "$t_wc"
  row "grep -c 'Decode batch' > file" "$t_grep"
  both() { echo "$1 = $(ratio "$(wall "$2")" "$(wall "$3")") wall, $(ratio "$(cpu "$2")" "$(cpu "$3")") cpu   ($4)"; }
  both "batchlens / grep " "$t_bl" "$t_grep" "target <= 1.0"
  both "batchlens / wc -l" "$t_bl" "$t_wc" "stretch <= 2.0"
  echo "batchlens peak RSS = $rss MiB   (target <= 64)"
  local t_pgo=""
  if [ -n "$BL_PGO" ]; then
    t_pgo=$(best 5 "$BL_PGO" diagnose --format json "$f")
    if ! cmp -s "$DIR/out" "$DIR/out.plain"; then
      echo "the PGO build's report differs from the plain build's" >&2
      exit 1
    fi
    row "batchlens diagnose (PGO build)" "$t_pgo"
    both "batchlens PGO / grep " "$t_pgo" "$t_grep" "target <= 1.0"
    echo "PGO build report: identical"
  fi
  if [ "$PY" = 1 ] && [ "${2:-}" != nopy ]; then
    t_py=$(best 1 python3 "$ROOT/bench/baseline.py" "$f")
    row "python regex baseline" "$t_py"
    both "python / batchlens" "$t_py" "$t_bl" "target >= 50"
    if [ -n "$t_pgo" ]; then
      both "python / batchlens PGO" "$t_py" "$t_pgo" "target >= 50"
    fi
  fi
  RSS_LAST=$rss
}

F1="$DIR/sglang-$SIZE.log"
gen "$F1" "$SIZE"
measure "$F1"
RSS1=$RSS_LAST

if [ "$GZ" = 1 ]; then
  if [ ! -f "$F1.gz" ]; then
    echo "compressing…" >&2
    gzip -c "$F1" >"$F1.gz.tmp" && mv "$F1.gz.tmp" "$F1.gz"
  fi
  cat "$F1.gz" >/dev/null
  t_gzip=$(best 3 gzip -dc "$F1.gz")
  t_blgz=$(best 3 "$BL" diagnose --format json "$F1.gz")
  echo
  echo "== $F1.gz: $(stat -c %s "$F1.gz") bytes"
  printf '%-32s %9s %9s\n' "" "wall s" "cpu s"
  printf '%-32s %9s %9s\n' "gzip -dc" "$(wall "$t_gzip")" "$(cpu "$t_gzip")"
  printf '%-32s %9s %9s\n' "batchlens diagnose (.gz)" "$(wall "$t_blgz")" "$(cpu "$t_blgz")"
  echo "batchlens(.gz) / gzip -dc = $(ratio "$(wall "$t_blgz")" "$(wall "$t_gzip")") wall, $(ratio "$(cpu "$t_blgz")" "$(cpu "$t_gzip")") cpu   (target <= 1.0)"
fi

if [ "$BIG" = 1 ]; then
  F4="$DIR/sglang-$((SIZE * 4)).log"
  gen "$F4" $((SIZE * 4))
  measure "$F4" nopy
  echo "peak RSS at 4x / 1x = $(ratio "$RSS_LAST" "$RSS1")   (target 0.9–1.1)"
fi

if [ "$SHAPES" = 1 ]; then
  echo
  echo "== other shapes: batchlens diagnose vs grep -c of the stats lines (best of 3)"
  printf '%-18s %12s %9s %9s %7s %9s %7s\n' "shape" "bytes" "bl wall" "grep" "ratio" "PGO wall" "ratio"
  for shape in sglang-requests vllm-requests trtllm-iterations; do
    f="$DIR/$shape-$SIZE.log"
    if [ ! -f "$f" ]; then
      echo "generating $f…" >&2
      if [ "$shape" = trtllm-iterations ]; then
        # ~10 KB of iteration lines per simulated second.
        "$BL" simulate --engine trtllm --duration "$((SIZE / 10000))" --out "$f.tmp"
      else
        python3 "$ROOT/bench/gen_shapes.py" "$shape" "$f.tmp" "$SIZE"
      fi
      mv "$f.tmp" "$f"
    fi
    case "$shape" in
      sglang-*) pat='Decode batch' ;;
      vllm-*) pat='Avg prompt throughput' ;;
      *) pat='iter = ' ;;
    esac
    cat "$f" >/dev/null
    t_s=$(best 3 "$BL" diagnose --format json "$f")
    t_g=$(best 3 grep -c "$pat" "$f")
    pgo_wall="-" pgo_ratio="-"
    if [ -n "$BL_PGO" ]; then
      t_p=$(best 3 "$BL_PGO" diagnose --format json "$f")
      pgo_wall=$(wall "$t_p")
      pgo_ratio=$(ratio "$pgo_wall" "$(wall "$t_g")")
    fi
    printf '%-18s %12s %9s %9s %7s %9s %7s\n' "$shape" "$(stat -c %s "$f")" "$(wall "$t_s")" "$(wall "$t_g")" "$(ratio "$(wall "$t_s")" "$(wall "$t_g")")" "$pgo_wall" "$pgo_ratio"
  done
fi

if [ "$WASM" = 1 ]; then
  echo
  echo "== wasm (node, simd128)"
  "$ROOT/bench/wasm/run.sh" "$F1"
fi

if [ "$BROWSER" = 1 ]; then
  echo
  echo "== browser (headless Chromium, the built page)"
  if [ ! -f "$ROOT/dist/index.html" ] || [ ! -d "$ROOT/e2e/node_modules" ]; then
    echo "no dist/ or e2e/node_modules: run scripts/setup.sh and trunk build --release first" >&2
  else
    node "$ROOT/bench/browser.mjs" "$F1" "$ROOT/dist"
  fi
fi
