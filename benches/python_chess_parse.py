#!/usr/bin/env python3
"""Reference for `deepchess prepare`'s speed: python-chess parsing the same PGN.

Only parses the games (chess.pgn.read_game plays every move on a board); it writes no
dataset, so it does less work than `deepchess prepare`. Not a project dependency: run it
from a virtualenv with `pip install chess zstandard`.

    python3 benches/python_chess_parse.py ../shared/data/tcec-s1-s28.pgn.zst
"""
import io
import sys
import time

import chess.pgn


def open_text(path):
    if path.endswith(".zst"):
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"))
        return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def main():
    start = time.perf_counter()
    games = plies = 0
    with open_text(sys.argv[1]) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            games += 1
            plies += sum(1 for _ in game.mainline_moves())
    seconds = time.perf_counter() - start
    print(f"python-chess games={games} plies={plies} seconds={seconds:.2f}")


if __name__ == "__main__":
    main()
