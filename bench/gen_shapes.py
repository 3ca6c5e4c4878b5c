#!/usr/bin/env python3
"""Writes large logs of shapes other than the main benchmark's, where a line is
long or every line is a stats line, so their reading speed is measured too.

Usage: gen_shapes.py SHAPE OUT SIZE_BYTES [SEED]

Shapes:
  sglang-requests  SGLang with --log-requests: every request's `Receive: obj=…`
                   line holds its prompt text (hundreds of words), between the
                   ranks' `Decode batch` / `Prefill batch` lines and access lines.
  vllm-requests    vLLM V0 with request logging (the default before V1): every
                   `Received request …: prompt: '…', params: SamplingParams(…),
                   prompt_token_ids: […]` line is a few KB, with `Added request`
                   and access lines; a stats line every 5 s.
(A TensorRT-LLM iteration log, a stats line per step, comes from
`batchlens simulate --engine trtllm`.)
"""
import random
import sys

WORDS = (
    "the of and to in a is that for it as was with be by on not he I this are or his "
    "from at which but have an they you were her she there one all we their batch "
    "decode prefill token cache Received request memory"
).split()


def prompt(rnd, lo, hi):
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(lo, hi)))


def sglang_requests(f, size, rnd):
    written, sec, n = 0, 10 * 3600, 0
    running = [40, 40]
    while written < size:
        sec += 1
        stamp = f"2026-05-07 {sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        lines = []
        for dp in range(2):
            running[dp] = max(1, min(128, running[dp] + rnd.randint(-3, 3)))
            lines.append(
                f"[{stamp} DP{dp} TP{dp}] Decode batch, #running-req: {running[dp]}, "
                f"#token: {running[dp] * 1500 + rnd.randint(0, 999)}, token usage: "
                f"{rnd.uniform(0.3, 0.9):.2f}, cuda graph: True, gen throughput (token/s): "
                f"{rnd.uniform(800, 1600):.2f}, #queue-req: {rnd.randint(0, 20)}, "
            )
            if rnd.random() < 0.3:
                lines.append(
                    f"[{stamp} DP{dp} TP{dp}] Prefill batch, #new-seq: 1, #new-token: "
                    f"{rnd.randint(100, 4000)}, #cached-token: {rnd.randint(0, 9000)}, token usage: "
                    f"{rnd.uniform(0.3, 0.9):.2f}, #running-req: {running[dp]}, #queue-req: "
                    f"{rnd.randint(0, 20)}, "
                )
        for _ in range(rnd.randint(1, 4)):
            n += 1
            lines.append(
                f"[{stamp}] Receive: obj=GenerateReqInput(validation_time=1.1e-05, "
                f"received_time=1771535999.49, text='{prompt(rnd, 100, 600)}', input_ids=None, "
                f"sampling_params={{'max_new_tokens': 4096, 'temperature': 0.7}}, rid='req-{n}', "
                "stream=False, log_metrics=True)"
            )
            lines.append(
                f'[{stamp}] INFO:     127.0.0.1:{rnd.randint(1024, 65535)} - "POST /generate HTTP/1.1" 200 OK'
            )
        text = "\n".join(lines) + "\n"
        f.write(text)
        written += len(text)


def vllm_requests(f, size, rnd):
    written, sec, n = 0, 10 * 3600, 0
    while written < size:
        sec += 1
        stamp = f"02-24 {sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        lines = []
        for _ in range(rnd.randint(5, 30)):
            n += 1
            ids = ", ".join(str(rnd.randint(1, 128000)) for _ in range(rnd.randint(80, 600)))
            lines.append(
                f"INFO {stamp} async_llm_engine.py:208] Received request cmpl-{n:08x}: prompt: "
                f"'{prompt(rnd, 50, 400)}', params: SamplingParams(n=1, temperature=0.7, top_p=1.0, "
                f"max_tokens=1024, min_tokens=0, logprobs=None, skip_special_tokens=True), "
                f"prompt_token_ids: [{ids}], lora_request: None."
            )
            lines.append(f"INFO {stamp} async_llm_engine.py:176] Added request cmpl-{n:08x}.")
            lines.append(
                f'INFO:     127.0.0.1:{rnd.randint(1024, 65535)} - "POST /v1/completions HTTP/1.1" 200 OK'
            )
        if sec % 5 == 0:
            lines.append(
                f"INFO {stamp} metrics.py:341] Avg prompt throughput: {rnd.uniform(100, 3000):.1f} "
                f"tokens/s, Avg generation throughput: {rnd.uniform(500, 2000):.1f} tokens/s, "
                f"Running: {rnd.randint(100, 256)} reqs, Swapped: 0 reqs, Pending: "
                f"{rnd.randint(0, 50)} reqs, GPU KV cache usage: {rnd.uniform(50, 99):.1f}%, "
                "CPU KV cache usage: 0.0%."
            )
        text = "\n".join(lines) + "\n"
        f.write(text)
        written += len(text)


def main():
    shape, out, size = sys.argv[1], sys.argv[2], int(float(sys.argv[3]))
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    write = {"sglang-requests": sglang_requests, "vllm-requests": vllm_requests}[shape]
    with open(out, "w", buffering=1 << 20) as f:
        write(f, size, rnd)


if __name__ == "__main__":
    main()
