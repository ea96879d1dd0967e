#!/usr/bin/env python3
"""An engine match through python-chess: an independent check of `deepchess match` (issue 11
asks for the targets to be measured through a client other than the project's own).

    python3 benches/match_python_chess.py --first "deepchess uci" --second /usr/games/glaurung \
        --openings ../shared/data/openings-8moves.epd --games 200 --tc 2+0.02 --concurrency 2 \
        [--first-option NAME=VALUE ...] [--second-option NAME=VALUE ...] [--pgn out.pgn]

Openings in file order, each played twice with colours swapped (the first engine White in the
odd games). Every game runs to its end by the rules (checkmate, stalemate, threefold
repetition, the fifty-move rule, insufficient material: python-chess's `outcome(claim_draw=True)`),
no adjudication. The client keeps the clocks itself (`go wtime btime winc binc`, the time
measured around each move); an engine more than `--margin-ms` over its clock, or sending an
illegal move, or dying, loses the game. Prints every game, then the first engine's W/D/L, the
game pairs' pentanomial counts and the Elo difference with its 95% interval from them (as
fishtest computes it). Needs python-chess (`pip install chess`).
"""
import argparse
import collections
import concurrent.futures
import math
import os
import time

import chess
import chess.engine
import chess.pgn

from python_chess_uci import open_engine, parse_options


def parse_tc(text):
    try:
        base, _, inc = text.partition("+")
        return float(base), float(inc or 0)
    except ValueError:
        raise SystemExit(f"--tc {text}: expected SECONDS+INCREMENT, e.g. 2+0.02")


def read_openings(path, count):
    boards = []
    with open(path) as epd:
        for number, line in enumerate(epd, 1):
            if len(boards) == count:
                break
            if line.strip():
                try:
                    boards.append(chess.Board.from_epd(line)[0])
                except ValueError as error:
                    raise SystemExit(f"{path}:{number}: {error}")
    if len(boards) < count:
        raise SystemExit(f"{path}: {len(boards)} openings, {count} needed")
    return boards


def play_game(engines, names, opening, tc, margin, number):
    """One game, engines[0] White. Returns (result "1-0"/"0-1"/"1/2-1/2", reason, PGN game)."""
    base, inc = tc
    board = opening.copy()
    clocks = [base, base]  # White, Black
    reason = None
    game_id = object()
    while reason is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, reason = outcome.result(), outcome.termination.name.lower().replace("_", " ")
            break
        side = 0 if board.turn == chess.WHITE else 1
        limit = chess.engine.Limit(white_clock=max(clocks[0], 0.001), black_clock=max(clocks[1], 0.001),
                                   white_inc=inc, black_inc=inc)
        start = time.monotonic()
        try:
            move = engines[side].play(board, limit, game=game_id).move
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as error:
            result, reason = ("0-1", "1-0")[side], f"{names[side]}: {error}"
            break
        clocks[side] -= time.monotonic() - start
        if clocks[side] < -margin:
            result, reason = ("0-1", "1-0")[side], f"{names[side]} loses on time"
            break
        clocks[side] += inc
        if move is None or move not in board.legal_moves:
            result, reason = ("0-1", "1-0")[side], f"{names[side]}: illegal move {move}"
            break
        board.push(move)
    pgn = chess.pgn.Game.from_board(board)
    pgn.headers.update({"Event": "python-chess match", "Round": str(number), "White": names[0],
                        "Black": names[1], "Result": result, "Termination": reason,
                        "FEN": opening.fen(), "SetUp": "1", "TimeControl": f"{tc[0]:g}+{tc[1]:g}"})
    return result, reason, pgn


def play_pair(args, openings, index, first_options, second_options):
    """Opening `index` twice, colours swapped; fresh engine processes for the pair."""
    first = open_engine(args.first, first_options, "--first")
    try:
        second = open_engine(args.second, second_options, "--second")
    except SystemExit:
        first.close()
        raise
    try:
        games = []
        for swap in (False, True):
            number = 2 * index + 1 + swap
            engines, names = ([second, first], [args.second_name, args.first_name]) if swap else \
                ([first, second], [args.first_name, args.second_name])
            games.append((number, swap) + play_game(engines, names, openings[index], args.tc,
                                                     args.margin_ms / 1000, number))
        return games
    finally:
        for engine in (first, second):
            try:
                engine.quit()
            except chess.engine.EngineTerminatedError:
                pass


def first_score(result, swap):
    score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
    return 1 - score if swap else score


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def report(pairs, name):
    penta = [0] * 5
    wins = draws = losses = 0
    for games in pairs:
        scores = [first_score(result, swap) for (_, swap, result, _, _) in games]
        penta[int(round(sum(scores) * 2))] += 1
        wins += scores.count(1.0)
        draws += scores.count(0.5)
        losses += scores.count(0.0)
    n = sum(penta)
    mean = sum(count * k / 4 for k, count in enumerate(penta)) / n
    variance = sum(count * (k / 4 - mean) ** 2 for k, count in enumerate(penta)) / n
    half = 1.96 * math.sqrt(variance / n)
    print(f"{name}: W/D/L {wins}/{draws}/{losses}, score {mean:.2%}, Elo {elo(mean):+.1f} "
          f"[{elo(mean - half):+.1f}, {elo(mean + half):+.1f}] (95%, from the pairs), "
          f"pentanomial {penta} ({n} pairs)")
    endings = collections.Counter(reason for games in pairs for (_, _, _, reason, _) in games)
    print("endings: " + ", ".join(f"{reason} {count}" for reason, count in sorted(endings.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", required=True, help="command line of the first engine")
    parser.add_argument("--second", required=True, help="command line of the second engine")
    parser.add_argument("--first-name", default="first")
    parser.add_argument("--second-name", default="second")
    parser.add_argument("--first-option", action="append", default=[], help="NAME=VALUE, repeatable")
    parser.add_argument("--second-option", action="append", default=[], help="NAME=VALUE, repeatable")
    parser.add_argument("--openings", required=True, help="EPD, one opening per line, used in file order")
    parser.add_argument("--games", type=int, default=200, help="an even number")
    parser.add_argument("--tc", type=parse_tc, required=True, help="SECONDS+INCREMENT")
    parser.add_argument("--concurrency", type=int, default=1, help="games at once")
    parser.add_argument("--margin-ms", type=float, default=1000,
                        help="time over the clock before a loss (1000: as `deepchess match`)")
    parser.add_argument("--pgn", help="write the games here")
    parser.add_argument("--force", action="store_true", help="overwrite the --pgn file")
    args = parser.parse_args()
    if args.concurrency < 1:
        raise SystemExit(f"--concurrency {args.concurrency}: at least 1")
    if args.tc[0] <= 0 or args.tc[1] < 0:
        raise SystemExit("--tc: a positive base time and an increment of 0 or more")
    if args.games <= 0 or args.games % 2:
        raise SystemExit(f"--games {args.games}: a positive even number (pairs of games)")
    if args.pgn and os.path.exists(args.pgn) and not args.force:
        raise SystemExit(f"{args.pgn} exists (--force overwrites it)")
    first_options = parse_options(args.first_option, "--first-option")
    second_options = parse_options(args.second_option, "--second-option")
    openings = read_openings(args.openings, args.games // 2)

    pairs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        futures = [pool.submit(play_pair, args, openings, index, first_options, second_options)
                   for index in range(len(openings))]
        for future in concurrent.futures.as_completed(futures):
            try:
                games = future.result()
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
            pairs.append(games)
            for number, swap, result, reason, _ in games:
                white, black = (args.second_name, args.first_name) if swap else (args.first_name, args.second_name)
                print(f"game {number:4} ({2 * len(pairs)}/{args.games}): {white} - {black} {result} ({reason})",
                      flush=True)
    pairs.sort(key=lambda games: games[0][0])
    report(pairs, args.first_name)
    if args.pgn:
        with open(args.pgn + ".tmp", "w") as out:
            for games in pairs:
                for *_, pgn in games:
                    print(pgn, file=out, end="\n\n")
        os.replace(args.pgn + ".tmp", args.pgn)


if __name__ == "__main__":
    main()
