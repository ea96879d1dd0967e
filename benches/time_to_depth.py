#!/usr/bin/env python3
"""Time to depth: the engine searches every STEP-th STS position to DEPTH with one set of
UCI options, then with another (a new game per position, Hash 16), through python-chess,
and prints the total time and nodes of each and the speedup of the second over the first.

Usage: python3 benches/time_to_depth.py ENGINE DEPTH STEP [EPD [BASE OTHER]]
(EPD defaults to ../shared/data/sts.epd; BASE and OTHER are options as NAME=VALUE[,NAME=VALUE],
by default Threads=1 and Threads=2, Lazy SMP's speedup). Run it on an otherwise idle machine.
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
    if len(sys.argv) not in (4, 5, 7):
        sys.exit(f"give both BASE and OTHER or neither\n{__doc__}")
    settings = sys.argv[5:7] if len(sys.argv) == 7 else ["Threads=1", "Threads=2"]
    options = []
    for setting in settings:
        pairs = [item.split("=", 1) for item in setting.split(",")]
        if any(len(pair) != 2 or not pair[0] for pair in pairs):
            sys.exit(f"options must read NAME=VALUE[,NAME=VALUE], got {setting!r}")
        options.append(dict(pairs))
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
    seconds, nodes = [0.0, 0.0], [0, 0]
    for i, (setting, configuration) in enumerate(zip(settings, options)):
        try:
            uci = chess.engine.SimpleEngine.popen_uci([engine, "uci"])
        except OSError as error:
            sys.exit(f"cannot start the engine {engine!r}: {error}")
        try:
            uci.configure({"Hash": 16, **configuration})
        except chess.engine.EngineError as error:
            uci.quit()
            sys.exit(f"{setting}: {error}")
        for board in boards:
            start = time.perf_counter()
            info = uci.analyse(board, chess.engine.Limit(depth=depth), game=object())
            seconds[i] += time.perf_counter() - start
            nodes[i] += info.get("nodes", 0)
        uci.quit()
        print(f"{setting} positions={len(boards)} depth={depth} "
              f"seconds={seconds[i]:.1f} nodes={nodes[i]}", flush=True)
    print(f"speedup {seconds[0] / seconds[1]:.2f}x, nodes ratio {nodes[1] / max(1, nodes[0]):.2f}")


if __name__ == "__main__":
    main()
