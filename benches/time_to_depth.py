#!/usr/bin/env python3
"""Lazy SMP time to depth: the engine searches every STEP-th STS position to DEPTH with
Threads=1, then with Threads=2 (a new game per position, Hash 16), through python-chess,
and prints the total time and nodes of each and the speedup.

Usage: python3 benches/time_to_depth.py ENGINE DEPTH STEP [EPD]
(EPD defaults to ../shared/data/sts.epd). Run it on an otherwise idle machine.
"""
import sys
import time

import chess
import chess.engine


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    engine = sys.argv[1]
    try:
        depth, step = int(sys.argv[2]), int(sys.argv[3])
    except ValueError:
        sys.exit(f"DEPTH and STEP must be integers, got {sys.argv[2]!r} and {sys.argv[3]!r}\n{__doc__}")
    if depth < 1 or step < 1:
        sys.exit(f"DEPTH and STEP must be at least 1, got {depth} and {step}")
    epd = sys.argv[4] if len(sys.argv) > 4 else "../shared/data/sts.epd"
    boards = []
    try:
        with open(epd) as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        boards.append(chess.Board.from_epd(line)[0])
                    except ValueError as error:
                        sys.exit(f"{epd}:{number}: not an EPD position: {error}")
    except OSError as error:
        sys.exit(f"cannot read {epd}: {error}")
    boards = boards[::step]
    seconds, nodes = {}, {}
    for threads in (1, 2):
        try:
            uci = chess.engine.SimpleEngine.popen_uci([engine, "uci"])
        except OSError as error:
            sys.exit(f"cannot start the engine {engine!r}: {error}")
        uci.configure({"Threads": threads, "Hash": 16})
        seconds[threads], nodes[threads] = 0.0, 0
        for board in boards:
            start = time.perf_counter()
            info = uci.analyse(board, chess.engine.Limit(depth=depth), game=object())
            seconds[threads] += time.perf_counter() - start
            nodes[threads] += info.get("nodes", 0)
        uci.quit()
        print(f"threads={threads} positions={len(boards)} depth={depth} "
              f"seconds={seconds[threads]:.1f} nodes={nodes[threads]}", flush=True)
    print(f"speedup {seconds[1] / seconds[2]:.2f}x, nodes ratio {nodes[2] / max(1, nodes[1]):.2f}")


if __name__ == "__main__":
    main()
