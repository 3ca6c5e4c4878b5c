#!/usr/bin/env python3
"""The straightforward way: stream the log line by line, match stats lines with
a regex, pull `key: value` fields with another, keep running means.

Usage: baseline.py FILE   (prints the counts and a few means)
"""
import re
import sys

HEADER = re.compile(r"^\[(?P<ts>[^\]]*)\]\s+(?P<kind>Decode|Prefill) batch")
FIELD = re.compile(r"(#?[A-Za-z][\w\- ()/]*?): ([0-9.]+|True|False)")


def main():
    counts = {"Decode": 0, "Prefill": 0}
    sums = {}
    other = 0
    with open(sys.argv[1], "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            m = HEADER.match(line)
            if not m:
                other += 1
                continue
            counts[m.group("kind")] += 1
            for k, v in FIELD.findall(line, m.end()):
                if v in ("True", "False"):
                    continue
                s = sums.setdefault(k, [0.0, 0])
                s[0] += float(v)
                s[1] += 1
    print(f"decode {counts['Decode']} prefill {counts['Prefill']} other {other}")
    for k in ("#running-req", "#queue-req", "token usage", "gen throughput (token/s)"):
        if k in sums:
            print(f"{k}: mean {sums[k][0] / sums[k][1]:.2f}")


if __name__ == "__main__":
    main()
