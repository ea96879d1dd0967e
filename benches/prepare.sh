#!/usr/bin/env bash
# Benchmark of `deepchess prepare` (issue 2): wall time and peak memory on the TCEC
# database, on the same file concatenated 10 times (memory must stay flat), and the
# python-chess parse of the same games as a reference measured in the same run.
#
#   bash benches/prepare.sh [PGN.zst] [PYTHON]
# PYTHON: an interpreter with `chess` and `zstandard` installed (default python3).
set -euo pipefail
pgn=${1:-../shared/data/tcec-s1-s28.pgn.zst}
python=${2:-python3}
cargo build --release -q -p deepchess-cli
bin=target/release/deepchess
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r secs rss <"$work/time"
  echo "$label seconds=$secs peak_rss_mb=$((rss / 1024))"
}

measure "prepare x1" "$bin" prepare --pgn "$pgn" --out "$work/x1"
tail -n 1 "$work/out"
for _ in $(seq 10); do cat "$pgn"; done >"$work/x10.pgn.zst"   # zstd frames concatenate
measure "prepare x10" "$bin" prepare --pgn "$work/x10.pgn.zst" --out "$work/x10"
tail -n 1 "$work/out"
measure "prepare x1 one thread" "$bin" prepare --pgn "$pgn" --out "$work/t1" --threads 1
if "$python" -c 'import chess, zstandard' 2>/dev/null; then
  measure "python-chess parse" "$python" benches/python_chess_parse.py "$pgn"
  cat "$work/out"
else
  echo "python-chess reference skipped: $python lacks chess/zstandard"
fi
