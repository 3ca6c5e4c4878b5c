#!/usr/bin/env python3
"""Checks the diagnosis against simulated runs labelled by what helps them.

    bench/sweep.py [SEED] [RUNS]      (needs target/release/batchlens: cargo build --release)

Each run draws a server (engine, KV pool, running cap) and a workload (client
concurrency, prompt and output lengths) at random, simulates it with
`batchlens simulate`, and simulates it again with the pool, the cap and the
client's concurrency each doubled. The lever that raises steady generation
throughput most (when by 10 % or more) is the label; the verdict of
`batchlens diagnose` on the first log names a lever too (KV for
kv_cache_capacity and kv_retraction, the cap for running_request_limit, the
client for client_underload, none for the others). A verdict agrees when its
lever gains at least half of the best and 5 %, or, naming none, when no lever
gains 10 %. Prints a row per run (BAD for a disagreement) and the count.
Not part of CI: a run takes a few seconds.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "batchlens")
ENGINES = ["sglang", "vllm_v1", "vllm_v0", "trtllm"]
LEVER = {
    "kv_cache_capacity": "kv",
    "kv_retraction": "kv",
    "running_request_limit": "cap",
    "client_underload": "client",
}


def simulate(cfg, tmp, tag):
    path = os.path.join(tmp, tag)
    with open(path + ".json", "w") as f:
        json.dump(cfg, f)
    subprocess.run(
        [BIN, "simulate", "--config", path + ".json", "--out", path + ".log",
         "--outcome-json", path + ".out.json"],
        check=True, capture_output=True,
    )
    with open(path + ".out.json") as f:
        return path + ".log", json.load(f)


def verdict(log):
    p = subprocess.run([BIN, "diagnose", "--no-progress", "--format", "json", log],
                       capture_output=True)
    if p.returncode != 0:
        return "error"
    return json.loads(p.stdout)["diagnosis"]["primary"]["kind"]


def draw(rng):
    prompt = rng.choice([128, 256, 512, 1024, 2048, 4096])
    output = rng.choice([64, 128, 256, 512, 1024, 2048, 4096])
    return {
        "engine": rng.choice(ENGINES),
        "seed": rng.randint(1, 1000),
        "kv_capacity_tokens": rng.choice([30000, 60000, 116171, 250000, 500000, 1000000]),
        "max_running_requests": rng.choice([16, 32, 64, 128, 256, 1024]),
        "max_running_requests_explicit": True,
        "concurrency": rng.choice([1, 4, 16, 48, 96, 200, 400, 800]),
        "num_requests": 100000,
        "duration_s": 600.0,
        "prompt_len": {"kind": "log_normal", "mean": prompt, "sigma": 0.5, "min": 16, "max": 16000},
        "output_len": {"kind": "log_normal", "mean": output, "sigma": 0.5, "min": 8, "max": 8000},
        "max_new_tokens": min(8192, output * 3),
    }


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    rng = random.Random(seed)
    agree = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(runs):
            cfg = draw(rng)
            log, base = simulate(cfg, tmp, f"r{k}")
            gains = {}
            for lever, change in [
                ("kv", {"kv_capacity_tokens": cfg["kv_capacity_tokens"] * 2}),
                ("cap", {"max_running_requests": cfg["max_running_requests"] * 2}),
                ("client", {"concurrency": cfg["concurrency"] * 2}),
            ]:
                _, o = simulate({**cfg, **change}, tmp, f"r{k}_{lever}")
                gains[lever] = o["steady_gen_tok_s"] / max(base["steady_gen_tok_s"], 1e-9) - 1
            kind = verdict(log)
            best = max(gains.values())
            lever = LEVER.get(kind)
            ok = (lever is None and best < 0.10) or (
                lever is not None and gains[lever] >= max(0.05, 0.5 * best))
            agree += ok
            print("OK " if ok else "BAD", cfg["engine"], kind,
                  {g: round(v, 2) for g, v in gains.items()},
                  f"kv={cfg['kv_capacity_tokens']} cap={cfg['max_running_requests']}",
                  f"conc={cfg['concurrency']} prompt={cfg['prompt_len']['mean']}",
                  f"out={cfg['output_len']['mean']} running={base['steady_mean_running']:.1f}",
                  f"queued={base['steady_mean_queued']:.1f} kv_usage={base['steady_kv_usage']:.2f}",
                  flush=True)
            for name in os.listdir(tmp):
                os.remove(os.path.join(tmp, name))
    print(f"{agree} of {runs} agree")


if __name__ == "__main__":
    main()
