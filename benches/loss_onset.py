#!/usr/bin/env python3
"""When each engine of a match saw a game's outcome coming, from the `[%eval]` comments
that `deepchess match --pgn-out` writes (White's view, in pawns).

For every game PLAYER lost, the ply (from the game's start position) at which the winner's
own score first reached +THRESHOLD pawns, and how many plies later PLAYER's own score first
reached -THRESHOLD; for every game PLAYER won, the same with the roles swapped. A loser
who sees the outcome long after the winner misjudged the positions in between; one who sees
it at the same ply met something neither saw earlier.

    python3 benches/loss_onset.py games.pgn --player deepchess [--threshold 1.0]
"""

import argparse
import re
import statistics
import sys

import chess.pgn

EVAL = re.compile(r"\[%eval (-?[\d.]+)\]")


def onsets(game, player_is_white, threshold):
    """(ply the winner's score first showed its win, ply the loser's first showed its loss),
    each None if never, for the side `player_is_white` names as the loser."""
    loser_seen = winner_seen = None
    node, ply = game, 0
    white_moves_first = game.board().turn == chess.WHITE
    while node.variations:
        node = node.variations[0]
        mover_is_white = white_moves_first == (ply % 2 == 0)
        found = EVAL.search(node.comment)
        if found:
            white = float(found.group(1))
            loser_view = white if player_is_white else -white
            if mover_is_white == player_is_white:
                if loser_seen is None and loser_view <= -threshold:
                    loser_seen = ply
            elif winner_seen is None and loser_view <= -threshold:
                winner_seen = ply
        ply += 1
    return winner_seen, loser_seen


def summary(label, pairs):
    pairs = [(w, l) for w, l in pairs if w is not None and l is not None]
    if len(pairs) < 2:
        print(f"{label}: {len(pairs)} games with both onsets")
        return
    winner = [w for w, _ in pairs]
    lag = [l - w for w, l in pairs]
    q = lambda xs: ", ".join(f"{x:g}" for x in statistics.quantiles(xs, n=4))
    print(f"{label}: {len(pairs)} games; winner's onset ply median {statistics.median(winner):g} "
          f"(quartiles {q(winner)}); loser's lag median {statistics.median(lag):g} plies (quartiles {q(lag)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn")
    parser.add_argument("--player", required=True, help="the engine's name in the PGN headers")
    parser.add_argument("--threshold", type=float, default=1.0, help="pawns (default 1.0)")
    args = parser.parse_args()
    if not args.threshold > 0:
        parser.error(f"--threshold {args.threshold}: a number of pawns above 0")
    lost, won = [], []
    try:
        f = open(args.pgn, encoding="utf-8")
    except OSError as e:
        sys.exit(f"loss_onset.py: cannot read {args.pgn}: {e.strerror}")
    with f:
        while (game := chess.pgn.read_game(f)) is not None:
            white = game.headers.get("White") == args.player
            if not white and game.headers.get("Black") != args.player:
                continue
            result = game.headers.get("Result")
            if result not in ("1-0", "0-1"):
                continue
            player_won = (result == "1-0") == white
            if player_won:
                won.append(onsets(game, not white, args.threshold))
            else:
                lost.append(onsets(game, white, args.threshold))
    if not lost and not won:
        sys.exit(f"loss_onset.py: {args.pgn}: no decided game with a player named {args.player}")
    summary(f"games {args.player} lost", lost)
    summary(f"games {args.player} won", won)


if __name__ == "__main__":
    main()
