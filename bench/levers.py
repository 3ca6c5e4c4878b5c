#!/usr/bin/env python3
"""Scores the diagnosis and the what-if against simulated runs labelled by their levers.

    bench/levers.py [SEED] [RUNS] [--out FILE.jsonl] [--jobs N]
    bench/levers.py --summarize FILE.jsonl

Needs two release binaries (not part of CI; 500 runs take a few minutes on 2 cores):

    cargo build --release -p batchlens-cli
    cargo build --release -p batchlens-sim --example levers

(BATCHLENS_BIN and LEVERS_BIN point at other builds.) Run k draws the workload of seed
SEED*1000003+k with `batchlens_sim::sweep::draw` (SGLang, vLLM V1 and V0, TensorRT-LLM;
closed-loop, Poisson and bursty clients; the step-time constants drawn per run), writes
its log and simulates each lever relaxed: `kv` (the KV pool x2), `cap` (the running cap
x2), `client` (concurrency or arrival rate x2), `prefill` (every prefill cost x1/2). A
lever's gain is relaxed / baseline steady generation throughput - 1; the label is the
lever with the largest gain, `none` when no lever gains 8 %. Then `batchlens diagnose
--format json` reads the baseline log once per lever with the matching `--what-if`
(kv_scale=2, max_running=2 x cap per rank, client_scale=2, prefill_cost_scale=0.5); a
what-if the CLI refuses is recorded as null.

One JSON line per run:
  run, seed, engine, client ("closed", "poisson", "bursty"), config (the SimConfig),
  baseline (the simulator's steady state: steady_gen_tok_s, steady_mean_running, ...),
  sim_gain {kv, cap, client, prefill}, label,
  verdict {kind, lever, predicted_gain}: diagnosis.primary.kind, the lever it names, and
      diagnosis.primary.predicted_gain (null when the report has none),
  predicted {kv, cap, client, prefill}: each {gain, low, high, bound_by, baseline_tok_s,
      fitted (the step model was fitted to the log's spread of batch sizes)} from what_if
      (gains: predicted / the what-if's baseline throughput - 1), or null with
      errors[lever] saying why,
  what_if_args, errors.

The figures, per engine and overall:
  agree    the verdict's lever is the label, or both are levers and the verdict's gains
           at least three quarters of the label's (a near-tie);
  med/p90  absolute error of the verdict's predicted gain (predicted_gain, else the
           what-if of its lever) against the simulated gain of that lever; for a verdict
           naming no lever, of the best predicted against the best simulated gain;
  in range share of what-if ranges (low..high as gains) holding the simulated gain.
(errors) and (ranges) count the runs and ranges that had a number to score. The lines
`step fitted` and `step prior` give the same figures for the runs whose verdict's what-if
stood on a fitted step model and on the prior (a batch the log never varies).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BATCHLENS_BIN", os.path.join(ROOT, "target", "release", "batchlens"))
LEVERS_BIN = os.environ.get(
    "LEVERS_BIN", os.path.join(ROOT, "target", "release", "examples", "levers"))
LEVERS = ["kv", "cap", "client", "prefill"]
KIND_LEVER = {
    "kv_cache_capacity": "kv",
    "kv_retraction": "kv",
    "running_request_limit": "cap",
    "client_underload": "client",
    "prefill_heavy": "prefill",
    "decode_saturated": "none",
}
NEAR_TIE = 0.75
TIMEOUT_S = 600


def diagnose(log, what_if):
    """The report (a dict) and an error string (None when it worked)."""
    cmd = [BIN, "diagnose", "--no-progress", "--format", "json", log]
    if what_if:
        cmd += ["--what-if", what_if]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode != 0:
        return None, (p.stderr.decode(errors="replace").strip() or f"exit {p.returncode}")[:300]
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        return None, f"bad JSON: {e}"


def prediction(report):
    w = (report or {}).get("what_if")
    if not w:
        return None
    base = w["baseline"]["gen_throughput_tok_s"]
    pred = w["predicted"]
    if not base or base <= 0:
        return None
    return {
        "gain": pred["gen_throughput_tok_s"] / base - 1,
        "low": pred["low"] / base - 1,
        "high": pred["high"] / base - 1,
        "bound_by": pred.get("bound_by"),
        "baseline_tok_s": base,
        # The step model was fitted to the log's spread of batch sizes, not the prior.
        "fitted": "least squares" in (w.get("model") or ""),
    }


def one_run(k, seed, tmp):
    log = os.path.join(tmp, f"run{k}.log")
    try:
        p = subprocess.run([LEVERS_BIN, str(seed), log], capture_output=True, timeout=TIMEOUT_S)
        if p.returncode != 0:
            return {"run": k, "seed": seed, "fatal": p.stderr.decode(errors="replace")[-500:]}
        rec = json.loads(p.stdout)
        rec["run"] = k
        errors = {}
        predicted = {}
        verdict = None
        for lever in LEVERS:
            report, err = diagnose(log, rec["what_if_args"][lever])
            if err:
                errors[lever] = err
            if report is not None and verdict is None:
                verdict = report
            predicted[lever] = prediction(report)
            if report is not None and predicted[lever] is None:
                errors[lever] = "no what_if in the report"
        if verdict is None:
            verdict, err = diagnose(log, None)
            if err:
                errors["diagnose"] = err
        primary = ((verdict or {}).get("diagnosis") or {}).get("primary") or {}
        kind = primary.get("kind", "error")
        rec["verdict"] = {
            "kind": kind,
            "lever": KIND_LEVER.get(kind, "none"),
            "predicted_gain": primary.get("predicted_gain"),
        }
        rec["predicted"] = predicted
        rec["errors"] = errors
        return rec
    except Exception as e:  # keep the sweep going; the line says what broke
        return {"run": k, "seed": seed, "fatal": repr(e)}
    finally:
        if os.path.exists(log):
            os.remove(log)


def agrees(rec):
    lever, label = rec["verdict"]["lever"], rec["label"]
    if lever == label:
        return True
    if lever == "none" or label == "none":
        return False
    return rec["sim_gain"][lever] >= NEAR_TIE * rec["sim_gain"][label]


def verdict_error(rec):
    """|predicted - simulated| gain of the verdict's claim, or None if it has no number."""
    v, pred, sim = rec["verdict"], rec["predicted"], rec["sim_gain"]
    if v["lever"] != "none":
        p = v["predicted_gain"]
        if p is None and pred.get(v["lever"]):
            p = pred[v["lever"]]["gain"]
        return None if p is None else abs(p - sim[v["lever"]])
    gains = [pred[l]["gain"] for l in LEVERS if pred.get(l)]
    p = v["predicted_gain"] if v["predicted_gain"] is not None else (max(gains) if gains else None)
    return None if p is None else abs(p - max(sim.values()))


def verdict_fitted(rec):
    """Whether the verdict's what-if stood on a fitted step model (None: no what-if)."""
    lever = rec["verdict"]["lever"]
    preds = [rec["predicted"].get(lever)] if lever != "none" else list(rec["predicted"].values())
    flags = [p.get("fitted") for p in preds if p]
    return None if not flags or flags[0] is None else bool(flags[0])


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = q * (len(xs) - 1)
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def figures(recs):
    n = len(recs)
    agree = sum(agrees(r) for r in recs)
    errs = [e for e in (verdict_error(r) for r in recs) if e is not None]
    hits = total = 0
    for r in recs:
        for lever in LEVERS:
            p = r["predicted"].get(lever)
            if p:
                total += 1
                hits += p["low"] - 1e-9 <= r["sim_gain"][lever] <= p["high"] + 1e-9
    return {
        "runs": n,
        "agree": agree / n if n else float("nan"),
        "err_n": len(errs),
        "err_median": statistics.median(errs) if errs else float("nan"),
        "err_p90": quantile(errs, 0.9),
        "ranges": total,
        "in_range": hits / total if total else float("nan"),
    }


def summarize(recs, out=sys.stdout):
    good = [r for r in recs if "fatal" not in r]
    bad = len(recs) - len(good)
    if bad:
        print(f"{bad} runs failed (see their 'fatal')", file=out)
    by_engine = {}
    for r in good:
        by_engine.setdefault(r["engine"], []).append(r)
    print(f"{'engine':<10} {'runs':>5} {'agree':>7} {'med err':>8} {'p90 err':>8} "
          f"{'(errors)':>9} {'in range':>9} {'(ranges)':>9}", file=out)
    for name, rs in sorted(by_engine.items()) + [("all", good)]:
        f = figures(rs)
        print(f"{name:<10} {f['runs']:>5} {f['agree']:>7.1%} {f['err_median']:>8.3f} "
              f"{f['err_p90']:>8.3f} {f['err_n']:>9} {f['in_range']:>9.1%} {f['ranges']:>9}",
              file=out)
    # The step's split between its fixed and per-request parts is identified only where
    # the batch moves; elsewhere a prior decides it, and the errors say how much.
    for name, keep in [("fitted", True), ("prior", False)]:
        rs = [r for r in good if verdict_fitted(r) is keep]
        if rs:
            f = figures(rs)
            print(f"step {name:<5} {f['runs']:>5} {f['agree']:>7.1%} {f['err_median']:>8.3f} "
                  f"{f['err_p90']:>8.3f} {f['err_n']:>9} {f['in_range']:>9.1%} "
                  f"{f['ranges']:>9}", file=out)
    labels = LEVERS + ["none"]
    print("\nlabel \\ verdict lever (rows: simulated best lever)", file=out)
    print(f"{'':<8}" + "".join(f"{l:>8}" for l in labels), file=out)
    for lab in labels:
        row = [sum(1 for r in good if r["label"] == lab and r["verdict"]["lever"] == v)
               for v in labels]
        print(f"{lab:<8}" + "".join(f"{c:>8}" for c in row), file=out)
    kinds = {}
    for r in good:
        kinds[r["verdict"]["kind"]] = kinds.get(r["verdict"]["kind"], 0) + 1
    print("\nverdict kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())), file=out)
    errs = {}
    for r in good:
        for lever, e in r["errors"].items():
            key = (lever, e.splitlines()[0][:120] if e else "")
            errs[key] = errs.get(key, 0) + 1
    if errs:
        print("CLI errors:", file=out)
        for (lever, e), c in sorted(errs.items(), key=lambda x: -x[1])[:8]:
            print(f"  {c:>4} x {lever}: {e}", file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seed", nargs="?", type=int, default=1)
    ap.add_argument("runs", nargs="?", type=int, default=500)
    ap.add_argument("--out", help="write the JSON lines here (default: a temporary file)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs, at most 2")
    ap.add_argument("--summarize", metavar="FILE.jsonl",
                    help="only print the figures of an earlier sweep")
    args = ap.parse_args()
    if args.summarize:
        with open(args.summarize) as f:
            summarize([json.loads(line) for line in f if line.strip()])
        return
    for b, how in [(BIN, "cargo build --release -p batchlens-cli"),
                   (LEVERS_BIN, "cargo build --release -p batchlens-sim --example levers")]:
        if not os.path.exists(b):
            sys.exit(f"levers.py: {b} is missing: {how}")
    jobs = max(1, min(2, args.jobs))
    out_path = args.out or os.path.join(tempfile.gettempdir(), f"levers-{args.seed}.jsonl")
    tmp = tempfile.mkdtemp(prefix="levers-")
    recs = []
    lock = threading.Lock()
    try:
        with open(out_path, "w") as out, \
                concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futs = [pool.submit(one_run, k, args.seed * 1_000_003 + k, tmp)
                    for k in range(args.runs)]
            for done, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                rec = fut.result()
                with lock:
                    recs.append(rec)
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                if done % 50 == 0 or done == args.runs:
                    print(f"{done}/{args.runs} runs", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    recs.sort(key=lambda r: r["run"])
    print(f"wrote {out_path}")
    summarize(recs)


if __name__ == "__main__":
    main()
