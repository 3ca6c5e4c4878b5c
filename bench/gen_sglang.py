#!/usr/bin/env python3
"""Writes a large, realistic SGLang server log for the benchmark.

Usage: gen_sglang.py OUT SIZE_BYTES [SEED]

The mix follows real logs (tests/fixtures/sglang): DP-attention ranks each
printing `Decode batch` lines (several field layouts: with/without the
`[iter]` counter, `pre-allocated usage`, `cuda graph`, `accept len`),
`Prefill batch` lines with chunked prefill, uvicorn access lines in between,
and now and then a retraction (`Decode out of memory happened`) printed by
every TP rank. Timestamps move forward about one tick per second.
"""
import datetime
import random
import sys


def main():
    out = sys.argv[1]
    size = int(float(sys.argv[2]))
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 42)
    r = rnd.random
    ri = rnd.randint
    dp = 4
    sec = 13 * 3600 + 40 * 60
    day = datetime.date(2026, 5, 7)
    written = 0
    buf = []
    buf_bytes = 0
    running = [8] * dp
    queued = [0] * dp
    tokens = [7000] * dp
    it = 10000
    with open(out, "w", buffering=1 << 20) as f:
        while written < size:
            sec += 1
            if sec >= 86400:
                sec -= 86400
                # A calendar day: a long run crosses into the next month.
                day += datetime.timedelta(days=1)
            h, m, s = sec // 3600, sec // 60 % 60, sec % 60
            date = f"{day.isoformat()} {h:02d}:{m:02d}:{s:02d}"
            lines = []
            # HTTP access lines
            for _ in range(ri(1, 8)):
                lines.append(
                    f'[{date}] INFO:     127.0.0.1:{ri(30000, 60000)} - "POST /generate HTTP/1.1" 200 OK\n'
                )
            for rank in range(dp):
                running[rank] = max(0, min(512, running[rank] + ri(-6, 6) + (200 - running[rank]) // 40))
                queued[rank] = max(0, queued[rank] + ri(-5, 5) + (30 - queued[rank]) // 20)
                tokens[rank] = max(0, tokens[rank] + ri(-800, 800) + (400000 - tokens[rank]) // 50)
                usage = min(1.0, tokens[rank] / 900000)
                pre = f"[{date} DP{rank} TP{rank} EP{rank}]"
                if r() < 0.3:
                    lines.append(
                        f"{pre} Prefill batch, #new-seq: {ri(1, 12)}, #new-token: {ri(16, 8192)}, "
                        f"#cached-token: {ri(0, 40000)}, token usage: {usage:.2f}, "
                        f"#running-req: {running[rank]}, #queue-req: {queued[rank]}, "
                        f"#prealloc-req: 0, #inflight-req: 0, input throughput (token/s): {r() * 40000:.2f}, \n"
                    )
                it += 1
                v = rank % 3
                if v == 0:
                    lines.append(
                        f"{pre} Decode batch, #running-req: {running[rank]}, #token: {tokens[rank]}, "
                        f"token usage: {usage:.2f}, pre-allocated usage: 0.00, #prealloc-req: 0, "
                        f"#transfer-req: 0, #retracted-req: 0, cuda graph: {'True' if r() < 0.9 else 'False'}, "
                        f"gen throughput (token/s): {r() * 2000:.2f}, #queue-req: {queued[rank]}\n"
                    )
                elif v == 1:
                    lines.append(
                        f"{pre} Decode batch [{it}], #running-req: {running[rank]}, #token: {tokens[rank]}, "
                        f"token usage: {usage:.2f}, accept len: {1 + r() * 3:.2f}, cuda graph: True, "
                        f"gen throughput (token/s): {r() * 2000:.2f}, #queue-req: {queued[rank]}, \n"
                    )
                else:
                    lines.append(
                        f"{pre} Decode batch. #running-req: {running[rank]}, #token: {tokens[rank]}, "
                        f"token usage: {usage:.2f}, gen throughput (token/s): {r() * 2000:.2f}, "
                        f"largest-len: 0, #queue-req: {queued[rank]}\n"
                    )
            if r() < 0.002:
                for tp in range(dp):
                    lines.append(
                        f"[{date} DP{tp} TP{tp} EP{tp}] Decode out of memory happened. "
                        f"#retracted_reqs: {ri(1, 9)}, #new_token_ratio: 0.0980 -> 0.9446\n"
                    )
            chunk = "".join(lines)
            buf.append(chunk)
            buf_bytes += len(chunk)
            if buf_bytes > 1 << 20:
                f.write("".join(buf))
                written += buf_bytes
                buf, buf_bytes = [], 0
        if buf:
            f.write("".join(buf))


if __name__ == "__main__":
    main()
