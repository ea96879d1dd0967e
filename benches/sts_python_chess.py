#!/usr/bin/env python3
"""STS through python-chess: an independent check of `deepchess sts` (issue 11 asks for the
targets to be measured through a client other than the project's own).

    python3 benches/sts_python_chess.py --epd ../shared/data/sts.epd --movetime 100 \
        --engine "deepchess uci" [--option Threads=1 ...] [--json out.json]

Each position is a new game (`ucinewgame`; `--no-new-game`: one game throughout, so that what
one search leaves behind meets the next position, as in a GUI that sends no `ucinewgame`),
searched with `go movetime`; the move played
earns the points of the EPD's `c8`/`c9` fields (UCI moves and their points; 10 for the best
move). Prints the points per theme, the total and the STS rating (44.523 x percent - 242.85,
the suite's calibration, as benches/sts_table.py). Needs python-chess (`pip install chess`).
"""
import argparse
import json
import os
import statistics
import sys
import time

import chess
import chess.engine

from python_chess_uci import open_engine, parse_options


def parse_points(ops, line_number):
    """The move -> points map of an STS record from its c9 (UCI moves) and c8 (points)."""
    moves, points = ops.get("c9"), ops.get("c8")
    if moves is None or points is None:
        raise SystemExit(f"line {line_number}: no c8/c9 fields (UCI moves and their points)")
    moves, points = str(moves).split(), [int(p) for p in str(points).split()]
    if len(moves) != len(points):
        raise SystemExit(f"line {line_number}: c9 has {len(moves)} moves, c8 {len(points)} points")
    return dict(zip(moves, points))


def theme_of(ops):
    """`STS(v1.0) Undermine.001` -> `Undermine`."""
    name = str(ops.get("id", "?"))
    return name.split(") ", 1)[-1].rsplit(".", 1)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epd", required=True)
    parser.add_argument("--engine", required=True, help="command line of the UCI engine")
    parser.add_argument("--movetime", type=int, default=100, help="milliseconds per position")
    parser.add_argument("--option", action="append", default=[], help="NAME=VALUE, repeatable")
    parser.add_argument("--json", help="write every position's move and points here")
    parser.add_argument("--force", action="store_true", help="overwrite the --json file")
    parser.add_argument("--no-new-game", action="store_true", help="no ucinewgame between positions")
    args = parser.parse_args()
    if args.movetime <= 0:
        raise SystemExit(f"--movetime {args.movetime}: a positive number of milliseconds")
    if args.json and os.path.exists(args.json) and not args.force:
        raise SystemExit(f"{args.json} exists (--force overwrites it)")

    records = []
    with open(args.epd) as epd:
        for number, line in enumerate(epd, 1):
            if not line.strip():
                continue
            try:
                board, ops = chess.Board.from_epd(line)
            except ValueError as error:
                raise SystemExit(f"{args.epd}:{number}: {error}")
            records.append((number, board, ops, parse_points(ops, number)))

    options = parse_options(args.option, "--option")
    engine = open_engine(args.engine, options, "--engine")
    themes, results = {}, []
    start = time.monotonic()
    try:
        for index, (number, board, ops, points) in enumerate(records, 1):
            result = engine.play(board, chess.engine.Limit(time=args.movetime / 1000), game=0 if args.no_new_game else number,
                                 info=chess.engine.INFO_BASIC)
            move = result.move.uci()
            earned, best = points.get(move, 0), max(points.values())
            theme = themes.setdefault(theme_of(ops), [0, 0, 0, 0])
            theme[0] += 1
            theme[1] += earned
            theme[2] += best
            theme[3] += earned == best
            results.append({"line": number, "id": ops.get("id"), "move": move, "points": earned,
                            "depth": result.info.get("depth"), "nodes": result.info.get("nodes")})
            if index % 100 == 0:
                total = sum(t[1] for t in themes.values())
                print(f"{index}/{len(records)} positions, {total} points, {time.monotonic() - start:.0f} s",
                      file=sys.stderr, flush=True)
    finally:
        engine.quit()

    print(f"{'theme':45} positions  points     max   best")
    for name, (count, earned, maximum, best) in themes.items():
        print(f"{name:45} {count:9} {earned:7} {maximum:7} {best:6}")
    earned = sum(t[1] for t in themes.values())
    maximum = sum(t[2] for t in themes.values())
    best = sum(t[3] for t in themes.values())
    depths = [r["depth"] for r in results if r["depth"] is not None]
    nodes = [r["nodes"] for r in results if r["nodes"] is not None]
    print(f"total: {earned} / {maximum} points, {best} best moves, STS rating "
          f"{round(44.523 * 100 * earned / maximum - 242.85)}, median depth "
          f"{statistics.median(depths) if depths else '-'}, median nodes "
          f"{statistics.median(nodes) if nodes else '-'}, {time.monotonic() - start:.0f} s")
    if args.json:
        with open(args.json + ".tmp", "w") as out:
            json.dump({"engine": args.engine, "movetime_ms": args.movetime, "options": options,
                       "points": earned, "max": maximum, "positions": results}, out, indent=1)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
