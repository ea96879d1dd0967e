#!/usr/bin/env python3
"""python-chess drives `deepchess uci` as a GUI would (run by tests/python_chess.rs).

Usage: python_chess_client.py PATH_TO_DEEPCHESS

Checks, raising on the first failure (python-chess itself refuses illegal moves and
malformed output):
* `analyse` with multipv=3: three lines with distinct first moves and scores, best first;
* `UCI_ShowWDL`: `wdl` in the info, summing to 1000, on the score's side;
* a Chess960 game (python-chess sets `UCI_Chess960` for a board with chess960=True and
  sends castling as the king taking its rook): castling on both sides through
  `root_moves` (`go searchmoves`), then moves played by the engine for both sides;
* pondering: `play(ponder=True)`, the expected reply played, then `play` again sends
  `ponderhit` and gets a legal move.
Prints `ok` at the end.
"""

import sys

import chess
import chess.engine

LIMIT = chess.engine.Limit(depth=3)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def multipv(engine):
    board = chess.Board()
    board.push_uci("e2e4")
    infos = engine.analyse(board, chess.engine.Limit(depth=4), multipv=3)
    check(len(infos) == 3, f"three lines, got {infos}")
    firsts = [info["pv"][0] for info in infos]
    check(len(set(firsts)) == 3, f"distinct first moves, got {firsts}")
    check([info["multipv"] for info in infos] == [1, 2, 3], f"multipv 1..3, got {infos}")
    scores = [info["score"].relative.score(mate_score=100000) for info in infos]
    check(scores == sorted(scores, reverse=True), f"best first, got {scores}")
    for info in infos:
        check(board.is_legal(info["pv"][0]), f"legal first move, got {info}")
        check(info["depth"] == 4 and info["seldepth"] >= 4 and "hashfull" in info, f"depth, seldepth, hashfull in {info}")
    best = engine.play(board, chess.engine.Limit(depth=4)).move
    check(best in board.legal_moves, f"legal best move, got {best}")


def wdl(engine):
    engine.configure({"UCI_ShowWDL": True})
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    info = engine.analyse(board, LIMIT)
    check("wdl" in info, f"wdl in {info}")
    w, d, l = info["wdl"].relative
    check(w + d + l == 1000, f"wdl sums to 1000, got {(w, d, l)}")
    cp = info["score"].relative.score(mate_score=100000)
    check((w - l) * cp >= 0, f"wdl {(w, d, l)} on the side of the score {cp}")
    mate = engine.analyse(chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), LIMIT)
    check(tuple(mate["wdl"].relative) == (1000, 0, 0), f"a mate is certain, got {mate}")
    engine.configure({"UCI_ShowWDL": False})
    check("wdl" not in engine.analyse(board, LIMIT), "no wdl once switched off")


def chess960(engine):
    # King f1, rooks b1 and g1 (Shredder-FEN rights GBgb): both castlings are legal.
    board = chess.Board("1r3kr1/pp3ppp/8/8/8/8/PP3PPP/1R3KR1 w GBgb - 0 1", chess960=True)
    for uci in ["f1g1", "f8b8"]:
        castle = chess.Move.from_uci(uci)
        check(board.is_castling(castle), f"{uci} castles")
        result = engine.play(board, LIMIT, root_moves=[castle])
        check(result.move == castle, f"{uci} played, got {result.move}")
        board.push(result.move)
    check(board.piece_at(chess.G1) == chess.Piece.from_symbol("K") and board.piece_at(chess.F1).symbol() == "R", board.fen())
    check(board.piece_at(chess.C8).symbol() == "k" and board.piece_at(chess.D8).symbol() == "r", board.fen())
    board = chess.Board("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", chess960=True)
    for _ in range(6):
        if board.is_game_over():
            break
        result = engine.play(board, chess.engine.Limit(nodes=3000))
        check(result.move in board.legal_moves, f"legal move in {board.fen()}, got {result.move}")
        board.push(result.move)
    check(len(board.move_stack) >= 2, "moves were played")


def ponder(engine):
    board = chess.Board()
    board.push_uci("d2d4")
    limit = chess.engine.Limit(time=0.2)
    result = engine.play(board, limit, ponder=True)
    check(result.move in board.legal_moves and result.ponder is not None, f"a move and a reply, got {result}")
    board.push(result.move)
    board.push(result.ponder)
    # The expected reply came: python-chess sends `ponderhit` to the pondering search.
    result = engine.play(board, limit, ponder=True)
    check(result.move in board.legal_moves, f"legal move after ponderhit, got {result}")
    board.push(result.move)
    # An unexpected reply: python-chess stops the pondering search and starts afresh.
    board.push(next(m for m in board.legal_moves if m != result.ponder))
    result = engine.play(board, limit)
    check(result.move in board.legal_moves, f"legal move after a stopped ponder, got {result}")


def main():
    with chess.engine.SimpleEngine.popen_uci([sys.argv[1], "uci"], timeout=30) as engine:
        check(engine.id.get("name", "").startswith("deepchess"), f"engine id {engine.id}")
        for option in ["MultiPV", "UCI_ShowWDL", "UCI_Chess960", "Ponder", "Clear Hash", "Hash"]:
            check(option in engine.options, f"option {option} announced")
        multipv(engine)
        wdl(engine)
        chess960(engine)
        ponder(engine)
    print("ok")


if __name__ == "__main__":
    main()
