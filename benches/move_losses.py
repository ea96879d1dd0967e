#!/usr/bin/env python3
"""What each player's moves cost in a match's games, judged by Stockfish: where a player loses.

    python3 benches/move_losses.py games.pgn --player mcts --player eval \
        [--judge /usr/games/stockfish] [--nodes 50000] [--within 400] [--json out.json]

Every position of every game (`deepchess match --pgn-out`) is searched by the judge for a
fixed number of nodes (one thread, so the figures do not depend on the machine's load); a
move's loss is the judge's score before it less the score after it, for the side that played
it, in centipawns (mates count as 10,000). Moves from positions the judge scores beyond
`--within` centipawns either way are left out (a won or lost game's moves say little), and
each loss is capped at 400 in the mean so that a few blown games do not decide it. The table
gives, per player and per phase (material on the board after the move: pawn 1, minor 3,
rook 5, queen 9; 78 at the start), the moves counted, the mean capped loss, and the moves
that lose 100 and 250 centipawns or more. `--json` keeps every move's record. Needs
python-chess (`pip install chess`).
"""
import argparse
import json
import os
import sys

import chess
import chess.engine
import chess.pgn

PHASES = (("openings (material >= 50)", 50, 999), ("middlegames (30-49)", 30, 49), ("endgames (< 30)", 0, 29))
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def material(board):
    """Both sides' material in pawns."""
    return sum(len(board.pieces(piece, colour)) * value for piece, value in VALUES.items() for colour in chess.COLORS)


def white_score(judge, board, nodes):
    """The judge's score of a position for White in centipawns (mate 10,000; game over exact)."""
    if board.is_checkmate():
        return -10000 if board.turn == chess.WHITE else 10000
    if board.is_game_over(claim_draw=False):
        return 0
    info = judge.analyse(board, chess.engine.Limit(nodes=nodes))
    return info["score"].white().score(mate_score=10000)


def game_moves(judge, game, players, nodes, number):
    """One record per move of the named players in a game."""
    board = game.board()
    scores = [white_score(judge, board, nodes)]
    moves = []
    for node in game.mainline():
        mover = board.turn
        board.push(node.move)
        scores.append(white_score(judge, board, nodes))
        moves.append((mover, node.move.uci(), material(board)))
    names = {chess.WHITE: game.headers.get("White"), chess.BLACK: game.headers.get("Black")}
    records = []
    for ply, (mover, uci, mat) in enumerate(moves):
        if names[mover] not in players:
            continue
        sign = 1 if mover == chess.WHITE else -1
        before, after = sign * scores[ply], sign * scores[ply + 1]
        records.append(dict(game=number, ply=ply + 1, player=names[mover], move=uci,
                            before=before, after=after, loss=before - after, material=mat))
    return records


def summary(records, players, within):
    """Rows of the table: player, phase, moves, mean capped loss, losses >= 100 and >= 250."""
    rows = []
    for player in players:
        mine = [r for r in records if r["player"] == player and abs(r["before"]) <= within]
        for name, low, high in PHASES + (("all", 0, 999),):
            phase = [r for r in mine if low <= r["material"] <= high]
            if not phase:
                continue
            mean = sum(min(max(r["loss"], 0), 400) for r in phase) / len(phase)
            rows.append((player, name, len(phase), mean,
                         sum(r["loss"] >= 100 for r in phase), sum(r["loss"] >= 250 for r in phase)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", help="games of `deepchess match --pgn-out`")
    parser.add_argument("--player", action="append", required=True, help="a player's name in the PGN (repeat)")
    parser.add_argument("--judge", default="/usr/games/stockfish", help="UCI engine that judges (default: Stockfish)")
    parser.add_argument("--nodes", type=int, default=50000, help="judge's nodes per position")
    parser.add_argument("--within", type=int, default=400, help="only moves from positions within this score (cp)")
    parser.add_argument("--json", help="write every move's record here")
    args = parser.parse_args()
    try:
        judge = chess.engine.SimpleEngine.popen_uci(args.judge)
    except OSError as error:
        sys.exit(f"error: judge {args.judge}: {error}")
    judge.configure({"Threads": 1})
    records = []
    try:
        with open(args.pgn, encoding="utf-8") as pgn:
            number = 0
            while (game := chess.pgn.read_game(pgn)) is not None:
                number += 1
                if game.errors:
                    sys.exit(f"error: {args.pgn}: game {number}: {game.errors[0]}")
                records += game_moves(judge, game, set(args.player), args.nodes, number)
                print(f"game {number}: {len(records)} moves judged", file=sys.stderr, flush=True)
    except OSError as error:
        sys.exit(f"error: {args.pgn}: {error}")
    finally:
        judge.quit()
    print(f"| player | phase | moves | mean loss (cp, capped at 400) | loss >= 100 | loss >= 250 |")
    print("|---|---|---|---|---|---|")
    for player, phase, count, mean, over100, over250 in summary(records, args.player, args.within):
        print(f"| {player} | {phase} | {count} | {mean:.1f} | {over100} | {over250} |")
    if args.json:
        with open(args.json + ".tmp", "w", encoding="utf-8") as out:
            json.dump(records, out)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
