#!/usr/bin/env python3
"""SPSA tuning of a search's numbers on one machine, with OpenBench's schedule.

Each iteration draws a ±1 flip per number, plays `--pairs` game pairs (each opening with
both colours) between the numbers moved by +c·flip ("dev") and by −c·flip ("base"), as
UCI options of `deepchess match`'s own players, and moves every number by
`r·c·(wins − losses)·flip` of dev. The gains decay as OpenBench's do (`A = 0.1 × iterations`,
alpha 0.602, gamma 0.101): c from `c_end · iterations^gamma` down to `c_end`, the learning
rate from `a / (A + 1)^alpha / c²` down to `r_end`, `a = r_end · c_end² · (A + iterations)^alpha`.
Integers are rounded at random as OpenBench rounds them (floor of value + U(0, 1)) and
clipped to their range. The input is `deepchess spsa-inputs --search SEARCH` (OpenBench's SPSA
input: `name, int, value, min, max, c_end, r_end`), all of it or the numbers named by --params;
with `--search mcts` both players search with MCTS (`Search mcts`) and --nodes counts playouts.

    python3 benches/spsa.py --deepchess target/release/deepchess --params rfp_margin,lmr_base \
        --iterations 1500 --pairs 4 --nodes 5000 --openings ../shared/data/openings-8moves.epd \
        --log runs/spsa.jsonl

With --workers W, W iterations are played at a time, each drawn from the numbers as they are
when it starts and applied when it ends (OpenBench's workers do the same): W × --concurrency
games at once. Every iteration appends one JSON line to --log when it ends (the numbers after
it, the flips, dev's W/D/L); --resume continues from the last line of an existing log (after the
highest iteration logged). The last line's `values`
rounded are the tuned numbers; a tuned set is kept only when it wins an SPRT against the
defaults (docs/engine.md).
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading

RESULT = re.compile(r"^dev vs base: W/D/L (\d+)/(\d+)/(\d+)", re.MULTILINE)


def fail(message):
    sys.exit(f"spsa: {message}")


def read_inputs(text, source):
    """The numbers of an SPSA input: name -> dict(value, min, max, c_end, r_end)."""
    params = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 7 or fields[1] != "int":
            fail(f"{source} line {number}: expected `name, int, value, min, max, c_end, r_end`, got `{line}`")
        try:
            value, low, high = (int(f) for f in fields[2:5])
            c_end, r_end = float(fields[5]), float(fields[6])
        except ValueError:
            fail(f"{source} line {number}: a number is malformed in `{line}`")
        if not low <= value <= high or c_end <= 0 or r_end <= 0:
            fail(f"{source} line {number}: value outside its range or a step not positive in `{line}`")
        params[fields[0]] = dict(value=float(value), min=low, max=high, c_end=c_end, r_end=r_end)
    return params


class Schedule:
    """OpenBench's gains for `iterations` iterations."""

    def __init__(self, iterations, alpha=0.602, gamma=0.101, a_ratio=0.1):
        self.iterations, self.alpha, self.gamma = iterations, alpha, gamma
        self.big_a = a_ratio * iterations

    def gains(self, param, iteration):
        """c and r of `param` at `iteration` (1-based)."""
        c_value = param["c_end"] * self.iterations**self.gamma
        a_value = param["r_end"] * param["c_end"] ** 2 * (self.big_a + self.iterations) ** self.alpha
        c = max(c_value / iteration**self.gamma, 0.5)
        r = a_value / (self.big_a + iteration) ** self.alpha / c**2
        return c, r


def rounded(value, param, rng):
    """An integer near `value`, rounded at random, within the number's range."""
    return int(min(max(int(value + rng.random()), param["min"]), param["max"]))


def play(args, dev, base, seed):
    """dev's wins, draws and losses over `args.pairs` game pairs against base."""
    search = [] if args.search == "eval" else [f"Search={args.search}"]
    spec = lambda name, values: ",".join([f"name={name}"] + search + [f"{k}={v}" for k, v in values.items()])
    command = [
        args.deepchess, "match", "--engine", spec("dev", dev), "--engine", spec("base", base),
        "--games", str(2 * args.pairs), "--nodes", str(args.nodes), "--concurrency", str(args.concurrency),
    ]
    if args.openings:
        command += ["--openings", args.openings, "--shuffle-openings", "--seed", str(seed)]
    done = subprocess.run(command, capture_output=True, text=True)
    found = RESULT.search(done.stdout)
    if done.returncode != 0 or not found:
        fail(f"`{' '.join(command)}` failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return tuple(int(x) for x in found.groups())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deepchess", default="target/release/deepchess")
    parser.add_argument("--search", choices=("eval", "mcts"), default="eval", help="whose numbers to tune")
    parser.add_argument("--inputs", help="an SPSA input file (default: `deepchess spsa-inputs --search SEARCH`)")
    parser.add_argument("--params", help="comma-separated names to tune (default: all)")
    parser.add_argument("--r-end", type=float, help="r_end of every number instead of the input's")
    parser.add_argument("--iterations", type=int, required=True, help="planned iterations (the schedule's length)")
    parser.add_argument("--pairs", type=int, default=4, help="game pairs per iteration")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=2, help="games at a time in each iteration's match")
    parser.add_argument("--workers", type=int, default=1,
                        help="iterations played at a time, each from the numbers when it starts (as OpenBench's workers)")
    parser.add_argument("--openings")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log", required=True, help="JSON lines, one per iteration")
    parser.add_argument("--resume", action="store_true", help="continue from the log's last line")
    args = parser.parse_args()

    if args.inputs:
        with open(args.inputs) as f:
            params = read_inputs(f.read(), args.inputs)
    else:
        done = subprocess.run([args.deepchess, "spsa-inputs", "--search", args.search], capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"{args.deepchess} spsa-inputs failed: {done.stderr.strip()}")
        params = read_inputs(done.stdout, "deepchess spsa-inputs")
    if args.params:
        names = args.params.split(",")
        unknown = [n for n in names if n not in params]
        if unknown:
            fail(f"--params: unknown {', '.join(unknown)}; known: {', '.join(params)}")
        params = {n: params[n] for n in names}
    if args.r_end:
        for param in params.values():
            param["r_end"] = args.r_end

    first = 1
    if os.path.exists(args.log):
        if not args.resume:
            fail(f"{args.log} exists; --resume continues it")
        with open(args.log) as f:
            lines = [l for l in f if l.strip()]
        if lines:
            last = json.loads(lines[-1])
            first = max(json.loads(l)["iteration"] for l in lines) + 1
            for name, value in last["values"].items():
                params[name]["value"] = value
    schedule = Schedule(args.iterations)
    rng = random.Random(args.seed * 1_000_003 + first)
    lock = threading.Lock()
    state = dict(next=first, completed=0, errors=[])

    def draw():
        """The next iteration: its number, flips, gains and both players' numbers."""
        iteration = state["next"]
        state["next"] += 1
        flips, dev, base, gains = {}, {}, {}, {}
        for name, param in params.items():
            c, r = schedule.gains(param, iteration)
            flips[name], gains[name] = rng.choice((-1, 1)), (c, r)
            dev[name] = rounded(param["value"] + flips[name] * c, param, rng)
            base[name] = rounded(param["value"] - flips[name] * c, param, rng)
        return iteration, flips, gains, dev, base

    def update(iteration, flips, gains, wdl):
        """Moves every number by dev's result and logs the iteration."""
        wins, draws, losses = wdl
        for name, param in params.items():
            c, r = gains[name]
            moved = param["value"] + r * c * (wins - losses) * flips[name]
            param["value"] = min(max(moved, param["min"]), param["max"])
        state["completed"] += 1
        record = dict(iteration=iteration, wdl=list(wdl), flips=flips,
                      values={n: round(p["value"], 3) for n, p in params.items()})
        with open(args.log, "a") as f:
            f.write(json.dumps(record) + "\n")
        if state["completed"] % 10 == 0 or iteration == args.iterations:
            shown = " ".join(f"{n}={p['value']:.1f}" for n, p in params.items())
            print(f"iteration {iteration}/{args.iterations} games {2 * args.pairs * state['completed']}: {shown}",
                  flush=True)

    def work():
        """One worker: iterations until the schedule ends or a match fails."""
        try:
            while True:
                with lock:
                    if state["next"] > args.iterations or state["errors"]:
                        return
                    iteration, flips, gains, dev, base = draw()
                wdl = play(args, dev, base, args.seed * 100_000 + iteration)
                with lock:
                    update(iteration, flips, gains, wdl)
        except BaseException as error:  # a failed match ends every worker
            with lock:
                state["errors"].append(error)

    workers = [threading.Thread(target=work) for _ in range(args.workers)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if state["errors"]:
        error = state["errors"][0]
        sys.exit(error.code if isinstance(error, SystemExit) else f"spsa: {error!r}")
    print("tuned:", " ".join(f"{n}={int(round(p['value']))}" for n, p in params.items()))


if __name__ == "__main__":
    main()
