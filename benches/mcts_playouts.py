#!/usr/bin/env python3
"""MCTS playouts per move time: each ENGINE searches every STEP-th STS position with
`Search mcts` for `go movetime MS` from a fresh tree (`ucinewgame` before each), and the
playouts it reports (`nodes`) are summed; engines take turns, ROUNDS times. Run it on an
otherwise idle machine: it measures wall-clock time.

Every engine gets `Hash HASH` MB (512 unless `--hash` says otherwise): the first PUCT's
tree fills the default 16 MB within 100 ms and then stops growing, and its later
playouts, which expand nothing, would count as if they did.

Usage: python3 benches/mcts_playouts.py MS STEP ROUNDS ENGINE [ENGINE ...] [--epd EPD] [--hash MB]
(EPD defaults to ../shared/data/sts.epd; `python3 benches/mcts_playouts.py 100 94 2
old/deepchess target/release/deepchess` is the measurement in docs/RESULTS.md, "MCTS").
"""
import statistics
import subprocess
import sys


class Engine:
    """A UCI engine on pipes, with `Search mcts` set."""

    def __init__(self, command: str, hash_mb: int):
        self.command = command
        try:
            self.process = subprocess.Popen(
                command.split() + ["uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
            )
        except OSError as e:
            sys.exit(f"cannot start engine {command!r}: {e}")
        self.send("uci")
        self.wait("uciok")
        self.send("setoption name Search value mcts")
        self.send(f"setoption name Hash value {hash_mb}")
        self.send("isready")
        self.wait("readyok")

    def send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait(self, token: str) -> int:
        """Reads up to a line starting with `token`; returns the last `nodes` seen."""
        nodes = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                sys.exit(f"engine {self.command!r} exited while we waited for {token!r}")
            if line.startswith("info") and " nodes " in line:
                nodes = int(line.split(" nodes ")[1].split()[0])
            if line.startswith(token):
                return nodes

    def playouts(self, fen: str, ms: int) -> int:
        self.send("ucinewgame")
        self.send("isready")
        self.wait("readyok")
        self.send(f"position fen {fen}")
        self.send(f"go movetime {ms}")
        return self.wait("bestmove")

    def quit(self) -> None:
        self.send("quit")
        self.process.wait()


def positions(epd: str, step: int) -> list:
    try:
        with open(epd) as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError as e:
        sys.exit(f"cannot read {epd}: {e}")
    return [" ".join(fields[:4]) + " 0 1" for fields in lines[::step]]


def main() -> None:
    args = sys.argv[1:]
    options = {"--epd": "../shared/data/sts.epd", "--hash": "512"}
    for flag in options:
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"{flag} needs a value")
            options[flag] = args[i + 1]
            del args[i : i + 2]
    epd = options["--epd"]
    if len(args) < 4:
        sys.exit(__doc__)
    try:
        ms, step, rounds = int(args[0]), int(args[1]), int(args[2])
    except ValueError:
        sys.exit(f"MS, STEP and ROUNDS must be integers, got {args[:3]}\n{__doc__}")
    try:
        hash_mb = int(options["--hash"])
    except ValueError:
        hash_mb = 0
    if hash_mb < 1:
        sys.exit(f"--hash must be a positive number of MB, got {options['--hash']!r}")
    if ms < 1 or step < 1 or rounds < 1:
        sys.exit(f"MS, STEP and ROUNDS must be at least 1, got {args[:3]}")
    fens = positions(epd, step)
    for r in range(1, rounds + 1):
        for command in args[3:]:
            engine = Engine(command, hash_mb)
            counts = [engine.playouts(fen, ms) for fen in fens]
            engine.quit()
            print(
                f"round {r} {command}: {sum(counts)} playouts in {len(fens)} searches of {ms} ms, "
                f"median {statistics.median(counts):.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
