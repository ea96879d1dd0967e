#!/usr/bin/env python3
"""Adds a `deepchess datagen --pgn` output directory to data/selfplay/ as one generation:
OUT/games.pgn packed with `deepchess pack` to data/selfplay/NAME.dcpg.zst, and the manifest
data/selfplay/NAME.json written from OUT/summary.json (see data/README.md).

    python3 data/add_generation.py OUT NAME --net NET [--threads T] [--deepchess BIN] [--force]

Refuses when the PGN and the summary count different games, when NAME exists (unless
--force), and says when data/ grows past its 60 MB bound.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SELFPLAY = os.path.join(HERE, "selfplay")
BOUND_BYTES = 60_000_000
PACKED_FORMAT = "packed games (deepchess pack: DCPG version 1, zstd -19); `deepchess unpack` gives the PGN of deepchess datagen --pgn"
DEFAULT_DEEPCHESS = os.path.join(HERE, "..", "target", "release", "deepchess")
# Command-line flag of every game option in summary.json, in `deepchess datagen --help` order.
FLAGS = [
    ("models", "--models"),
    ("nodes", "--nodes"),
    ("hard_nodes", "--hard-nodes"),
    ("random_plies", "--random-plies"),
    ("book", "--book"),
    ("seed", "--seed"),
    ("opening_nodes", "--opening-nodes"),
    ("opening_bound", "--opening-bound"),
    ("win_score", "--win-score"),
    ("win_plies", "--win-plies"),
    ("draw_after", "--draw-after"),
    ("draw_score", "--draw-score"),
    ("draw_plies", "--draw-plies"),
    ("max_plies", "--max-plies"),
    ("validation_fraction", "--validation-fraction"),
    ("hash_mb", "--hash"),
]


def fail(message):
    sys.exit(f"add_generation: {message}")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_digest(pgn):
    """Bytes and sha256 of the PGN text `deepchess unpack` writes back."""
    with open(pgn, "rb") as f:
        text = f.read()
    return {"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}


def pack(deepchess, pgn, archive, force):
    """`deepchess pack PGN --out ARCHIVE`: it refuses PGN that would not unpack byte for byte."""
    if not os.path.isfile(deepchess):
        fail(f"{deepchess}: no deepchess binary (cargo build --release, or --deepchess BIN)")
    command = [deepchess, "pack", pgn, "--out", archive] + (["--force"] if force else [])
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"deepchess pack {pgn}: {run.stderr.strip()}")


def total_bytes():
    """Bytes of everything in data/selfplay."""
    return sum(os.path.getsize(os.path.join(SELFPLAY, n)) for n in os.listdir(SELFPLAY))


def write_manifest(manifest, record):
    with open(manifest + ".tmp", "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(manifest + ".tmp", manifest)


def value_sha256(models, build):
    """weights_sha256 of the value net's card: MODELS/value.json, or the build's models/."""
    if models:
        with open(os.path.join(models, "value.json")) as f:
            return json.load(f)["weights_sha256"]
    if not build:
        fail("summary.json names no build commit: cannot tell which embedded value net played")
    card = subprocess.run(
        ["git", "-C", HERE, "show", f"{build}:models/value.json"], capture_output=True, text=True, check=False
    )
    if card.returncode != 0:
        fail(f"cannot read models/value.json at build {build}: {card.stderr.strip()}")
    return json.loads(card.stdout)["weights_sha256"]


def rounds(pgn):
    """Game numbers + 1 (the `Round` tags) of the PGN, in file order."""
    with open(pgn, "rb") as f:
        return [int(m) for m in re.findall(rb'^\[Round "(\d+)"\]', f.read(), re.M)]


def command(options, summary, threads):
    target = f"--games {summary['games']}"
    parts = ["deepchess datagen --out OUT", target, f"--threads {threads}"]
    for key, flag in FLAGS:
        value = options.get(key)
        if value is not None:
            parts.append(f"{flag} {value}")
    return " ".join(parts + ["--pgn"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="datagen output directory (summary.json, games.pgn)")
    parser.add_argument("name", help="generation name, e.g. g11a-s400 (net, seed)")
    parser.add_argument("--net", required=True, help="name of the value net that played, e.g. g11a")
    parser.add_argument("--threads", type=int, help="threads of the run (default: not recorded)")
    parser.add_argument("--deepchess", default=DEFAULT_DEEPCHESS, help="the deepchess binary that packs (default: target/release/deepchess)")
    parser.add_argument("--force", action="store_true", help="replace an existing generation NAME")
    args = parser.parse_args()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", args.name):
        fail(f"NAME {args.name!r}: letters, digits, '.', '_' and '-' only")
    summary_path, pgn = os.path.join(args.out, "summary.json"), os.path.join(args.out, "games.pgn")
    for path in (summary_path, pgn):
        if not os.path.isfile(path):
            fail(f"{path}: missing (run `deepchess datagen ... --pgn` first)")
    with open(summary_path) as f:
        summary = json.load(f)
    if summary.get("generator") != "deepchess datagen":
        fail(f"{summary_path}: not a deepchess datagen summary")
    numbers = rounds(pgn)
    if len(numbers) != summary["games"]:
        fail(f"{pgn} holds {len(numbers)} games, {summary_path} counts {summary['games']}")
    os.makedirs(SELFPLAY, exist_ok=True)
    archive, manifest = os.path.join(SELFPLAY, f"{args.name}.dcpg.zst"), os.path.join(SELFPLAY, f"{args.name}.json")
    if not args.force and (os.path.exists(archive) or os.path.exists(manifest)):
        fail(f"{archive} or its manifest exists: pick another NAME, or --force to replace it")
    pack(args.deepchess, pgn, archive, args.force)
    options, build = summary["options"], summary.get("build")
    size = os.path.getsize(archive)
    record = {
        "generation": args.name,
        "file": os.path.basename(archive),
        "format": PACKED_FORMAT,
        "bytes": size,
        "sha256": sha256(archive),
        "games": summary["games"],
        "positions": summary["positions"],
        "bytes_per_position": round(size / max(summary["positions"], 1), 3),
        "pgn_text": text_digest(pgn),
        "results": {"white_wins": summary["white_wins"], "draws": summary["draws"], "black_wins": summary["black_wins"]},
        "net": {"name": args.net, "value_sha256": value_sha256(options.get("models"), build)},
        "build": build,
        "command": command(options, summary, args.threads or "T"),
        "options": options,
        "threads": args.threads,
        "seconds": round(summary["seconds"], 1),
        "rounds": {"first": min(numbers), "last": max(numbers), "missing": sorted(set(range(min(numbers), max(numbers) + 1)) - set(numbers))},
        "made": summary["updated"],
    }
    write_manifest(manifest, record)
    total = total_bytes()
    print(f"{archive}: {size} bytes, {record['bytes_per_position']} bytes/position; data/selfplay holds {total} bytes")
    if total > BOUND_BYTES:
        print(f"data/selfplay is over its {BOUND_BYTES} byte bound: drop the oldest generation (data/README.md)")


if __name__ == "__main__":
    main()
