#!/usr/bin/env python3
"""Markdown rows of the STS tables in docs/RESULTS.md from `deepchess sts --json` files.

    python3 benches/sts_table.py "label=FILE.json" ...

One row per file: label, points, best moves, STS rating (44.523 x percent - 242.85, the
suite's CCRL 40/4 calibration), median depth, median nodes, median / max time per position.
Standard library only.
"""
import json
import statistics
import sys


def row(label, path):
    positions = json.load(open(path))["positions"]
    points = sum(p["points"] for p in positions)
    maximum = sum(p["max"] for p in positions)
    best = sum(p["best"] for p in positions)
    rating = round(44.523 * 100 * points / maximum - 242.85)

    def median(key):
        values = [p[key] for p in positions if p.get(key) is not None]
        return statistics.median(values) if values else None

    times = [p["time_ms"] for p in positions if p.get("time_ms") is not None]
    depth, nodes = median("depth"), median("nodes")
    fmt = lambda v: "-" if v is None else f"{v:,.0f}"
    return (f"| {label} | {points:,} / {maximum:,} | {best} | {rating} | {fmt(depth)} | {fmt(nodes)} | "
            f"{fmt(statistics.median(times))} / {fmt(max(times))} |")


if __name__ == "__main__":
    print("| variant | STS points | best moves | STS rating | median depth | median nodes | time ms median / max |")
    print("|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        label, _, path = arg.rpartition("=")
        print(row(label, path))
