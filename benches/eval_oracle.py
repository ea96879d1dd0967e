#!/usr/bin/env python3
"""How often the engines' own [%eval] ranks a comparator pair right: the accuracy an
evaluation-perfect network would reach on the comparator's validation pairs.

    python3 benches/eval_oracle.py DATASET_DIR/positions-validation.bin [PAIRS]

Draws PAIRS (default 200,000) pairs (a position of a White-won game, one of a Black-won
game) with a fixed seed, keeps those where both positions carry an evaluation, and counts
the pairs where the White-won position has the higher one (ties count half), overall and by
the ply of the two positions. Reads the record format of docs/dataset-format.md; standard
library only.
"""
import random
import struct
import sys

HEADER, RECORD, NO_EVAL = 64, 40, -32768


def records(path):
    data = open(path, "rb").read()
    assert data[:8] == b"DCHSDATA", f"{path}: not a deepchess dataset"
    for off in range(HEADER, len(data), RECORD):
        ply, evaluation, result = struct.unpack_from("<Hhb", data, off + 26)
        yield ply, evaluation, result


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    rows = list(records(path))
    white = [r for r in rows if r[2] == 1]
    black = [r for r in rows if r[2] == -1]
    rng = random.Random(1)
    buckets = {}
    total = [0.0, 0]
    for _ in range(count):
        w, b = rng.choice(white), rng.choice(black)
        if w[1] == NO_EVAL or b[1] == NO_EVAL:
            continue
        score = 1.0 if w[1] > b[1] else 0.5 if w[1] == b[1] else 0.0
        total[0] += score
        total[1] += 1
        bucket = next((lo for lo in (120, 80, 40, 0) if min(w[0], b[0]) >= lo), 0)
        if max(w[0], b[0]) < bucket + 40 or bucket == 120:
            buckets.setdefault(bucket, [0.0, 0])
            buckets[bucket][0] += score
            buckets[bucket][1] += 1
    print(f"pairs={count} with_both_evals={total[1]} ({total[1] / count:.1%})")
    for lo in sorted(buckets):
        s, n = buckets[lo]
        label = f"plies {lo}-{lo + 39}" if lo < 120 else "plies 120+"
        print(f"both positions at {label}: {s / n:.4f} ({n} pairs)")
    print(f"oracle_accuracy={total[0] / total[1]:.4f}")


if __name__ == "__main__":
    main()
