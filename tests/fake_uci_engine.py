#!/usr/bin/env python3
"""A scripted UCI engine for the tests of `deepchess sts` and `deepchess match`.

Usage: fake_uci_engine.py MODE [ARG [LOG]]
  script MOVES  plays MOVES[n] (comma-separated UCI moves) when n moves have been played
  table FILE    FILE has lines "FEN|ACTION"; plays ACTION for that position (first 4 FEN fields)
  crash         exits with status 3 at the first `go`
  hang          never answers `go` (sleeps)
  illegal       answers every `go` with the illegal move a4a5
  silent        never finishes the `uci` handshake
An ACTION is a UCI move, `crash` or `hang`. With LOG, every command received is appended
to that file.
"""
import sys
import time

mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else ""
log = open(sys.argv[3], "a") if len(sys.argv) > 3 else None
table = {}
if mode == "table":
    with open(arg) as f:
        for line in f:
            fen, _, action = line.rstrip("\n").partition("|")
            table[" ".join(fen.split()[:4])] = action
script = arg.split(",") if mode == "script" else []
fen, moves = None, []


def say(text):
    print(text, flush=True)


def action():
    if mode == "script":
        return script[len(moves)] if len(moves) < len(script) else "0000"
    if mode == "table":
        return table.get(fen, "0000")
    if mode == "illegal":
        return "a4a5"
    return mode


for line in sys.stdin:
    if log:
        log.write(line)
        log.flush()
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        if mode == "silent":
            continue
        say("id name fake " + mode)
        say("option name Hash type spin default 1 min 1 max 16")
        say("uciok")
    elif words[0] == "isready":
        say("readyok")
    elif words[0] == "position":
        if words[1] == "fen":
            fen, rest = " ".join(words[2:6]), words[8:]
        else:
            fen, rest = "startpos", words[2:]
        moves = rest[1:] if rest[:1] == ["moves"] else []
    elif words[0] == "go":
        chosen = action()
        if chosen == "crash":
            sys.exit(3)
        if chosen == "hang":
            time.sleep(600)
        say("info string fake engine")
        say("info depth 3 score cp %d nodes %d pv %s" % (10 * len(moves), 100 + len(moves), chosen))
        say("bestmove " + chosen)
    elif words[0] == "quit":
        break
