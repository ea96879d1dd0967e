//! Plays one game between two engine processes: the opening moves, then `go` after `go`
//! with clocks, ending by the rules (mate, stalemate, repetition, fifty moves, insufficient
//! material), by adjudication (scores, a move limit, Syzygy tables), or by a failure (crash, hang, illegal move, time forfeit)
//! that loses the game for the engine at fault.

use std::sync::Arc;
use std::time::Duration;

use deepchess_engine::tablebase::{Tablebases, winner};
use serde::Serialize;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, Color, EnPassantMode, Position};

use crate::limits::TimeControl;
use crate::openings::{Opening, parse_fen};
use crate::uci::{EngineError, EngineProcess, Score, flipped, score_as_cp};

/// Resignation adjudication: a side whose own score stayed at or below `-score_cp` for
/// `moves` consecutive moves loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResignRule {
    /// Score threshold in centipawns (positive).
    pub score_cp: i32,
    /// Consecutive moves of that side.
    pub moves: usize,
}

/// Draw adjudication: from move `after_move` on, when both sides' scores stayed within
/// ±`score_cp` for `moves` consecutive moves each, the game is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRule {
    /// First full move number where the rule applies.
    pub after_move: u32,
    /// Consecutive moves of each side.
    pub moves: usize,
    /// Score threshold in centipawns (positive).
    pub score_cp: i32,
}

/// Adjudication rules (each off when `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adjudication {
    /// Resignation by score.
    pub resign: Option<ResignRule>,
    /// Draw by score.
    pub draw: Option<DrawRule>,
    /// Draw when the game reaches this many full moves.
    pub max_moves: Option<u32>,
}

/// Settings shared by every game of a match.
#[derive(Clone, Debug)]
pub struct GameSettings {
    /// Time control.
    pub tc: TimeControl,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Extra time allowed over the clock or move time.
    pub margin: Duration,
    /// Wait for fixed-node or fixed-depth searches before an engine counts as hung.
    pub hang_timeout: Duration,
    /// Wait for `isready` at the start of a game.
    pub handshake_timeout: Duration,
    /// Endgame tables: a position they cover ends the game with their result.
    pub tablebases: Option<Arc<Tablebases>>,
}

/// A game result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 0-1.
    BlackWins,
    /// ½-½.
    Draw,
}

impl GameResult {
    /// The result when `loser` loses.
    pub fn loss_of(loser: Color) -> GameResult {
        match loser {
            Color::White => GameResult::BlackWins,
            Color::Black => GameResult::WhiteWins,
        }
    }

    /// PGN notation.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// +1, 0 or −1 from White's view.
    pub fn white_sign(self) -> i32 {
        match self {
            GameResult::WhiteWins => 1,
            GameResult::BlackWins => -1,
            GameResult::Draw => 0,
        }
    }
}

/// How a game ended, as the PGN `Termination` tag names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Termination {
    /// By the rules of chess.
    Normal,
    /// By an adjudication rule.
    Adjudication,
    /// A clock ran out or an engine did not answer in time.
    TimeForfeit,
    /// An illegal move.
    RulesInfraction,
    /// An engine crashed.
    Abandoned,
}

impl Termination {
    /// The PGN tag value.
    pub fn pgn(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Adjudication => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::RulesInfraction => "rules infraction",
            Termination::Abandoned => "abandoned",
        }
    }
}

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveRecord {
    /// UCI notation.
    pub uci: String,
    /// SAN with check suffix.
    pub san: String,
    /// Played from the opening, not by an engine.
    pub book: bool,
    /// The mover's last reported score, White's view.
    pub score_white: Option<Score>,
    /// The mover's last reported depth.
    pub depth: Option<u32>,
    /// Thinking time.
    pub time: Duration,
    /// The mover's clock after the move (clock time controls only).
    pub clock: Option<Duration>,
}

/// How a game ended: every way out of [`play_game`] builds one with [`GameEnd::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEnd {
    /// The result.
    pub result: GameResult,
    /// How it ended.
    pub termination: Termination,
    /// Why it ended, in words (`checkmate`, `engine B crashed ...`).
    pub reason: String,
    /// The engine that failed (crash, hang, illegal move), to be restarted.
    pub failed: Option<Color>,
}

impl GameEnd {
    /// An ending with its result, PGN termination, reason and the engine at fault, if any.
    pub fn new(
        result: GameResult,
        termination: Termination,
        reason: impl Into<String>,
        failed: Option<Color>,
    ) -> GameEnd {
        GameEnd { result, termination, reason: reason.into(), failed }
    }

    /// `side` loses because its engine failed: a time forfeit when it did not answer in
    /// time, abandoned otherwise; the engine is to be restarted.
    pub fn engine_failure(side: Color, error: &EngineError) -> GameEnd {
        let termination = match error {
            EngineError::Timeout { .. } => Termination::TimeForfeit,
            _ => Termination::Abandoned,
        };
        GameEnd::new(GameResult::loss_of(side), termination, error.to_string(), Some(side))
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// Start position (FEN).
    pub start_fen: String,
    /// Every move, opening moves first.
    pub moves: Vec<MoveRecord>,
    /// How it ended.
    pub end: GameEnd,
}

impl GameRecord {
    /// The record of a game between `white` and `black` from `opening` that ended as `end`
    /// after `moves`.
    pub fn new(white: &str, black: &str, opening: &Opening, moves: Vec<MoveRecord>, end: GameEnd) -> GameRecord {
        GameRecord { white: white.to_owned(), black: black.to_owned(), start_fen: opening.fen().to_owned(), moves, end }
    }
}

/// The state of a game in progress.
struct Board {
    position: Chess,
    /// Zobrist keys of every position so far, for repetitions.
    history: Vec<u64>,
}

impl Board {
    fn key(position: &Chess) -> u64 {
        let key: Zobrist64 = position.zobrist_hash(EnPassantMode::Legal);
        key.0
    }

    /// The end of the game by the rules, if reached.
    fn rule_ending(&self) -> Option<(GameResult, &'static str)> {
        let p = &self.position;
        if p.is_checkmate() {
            return Some((GameResult::loss_of(p.turn()), "checkmate"));
        }
        if p.is_stalemate() {
            return Some((GameResult::Draw, "stalemate"));
        }
        if p.is_insufficient_material() {
            return Some((GameResult::Draw, "insufficient material"));
        }
        if p.halfmoves() >= 100 {
            return Some((GameResult::Draw, "fifty-move rule"));
        }
        let current = *self.history.last().expect("the start position is in the history");
        let reversible = (p.halfmoves() as usize + 1).min(self.history.len());
        let repeats = self.history[self.history.len() - reversible..].iter().filter(|k| **k == current).count();
        (repeats >= 3).then_some((GameResult::Draw, "threefold repetition"))
    }

    /// Plays a UCI move if it is legal, returning its SAN.
    fn play(&mut self, uci: &str) -> Option<String> {
        let m = uci.parse::<UciMove>().ok()?.to_move(&self.position).ok()?;
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, m).to_string();
        self.history.push(Board::key(&self.position));
        Some(san)
    }
}

/// The index of a side in White-first arrays (`[white, black]`). Not `Color as usize`:
/// shakmaty numbers Black 0 and White 1.
fn slot(side: Color) -> usize {
    usize::from(side == Color::Black)
}

/// Adjudication by endgame tables: the result that `tables` give for `position` (under
/// the fifty-move rule: a win it spoils is a draw), if they cover it.
fn tablebase_ending(tables: &Tablebases, position: &Chess) -> Option<(GameResult, String)> {
    let outcome = tables.outcome(position)?;
    let material = Tablebases::material(position);
    Some(match winner(outcome, position.turn()) {
        Some(side) => (GameResult::loss_of(!side), format!("tablebase: {material} win for {side:?}")),
        None => (GameResult::Draw, format!("tablebase: {material} draw")),
    })
}

/// Adjudication by score: the scores of engine moves, mover's view, in order.
fn adjudicate(rules: &Adjudication, scores: &[(Color, Option<i32>)], fullmoves: u32) -> Option<(GameResult, String)> {
    if let (Some(rule), Some((mover, _))) = (rules.resign, scores.last()) {
        let own: Vec<Option<i32>> =
            scores.iter().rev().filter(|(c, _)| c == mover).take(rule.moves).map(|(_, s)| *s).collect();
        if rule.moves > 0 && own.len() == rule.moves && own.iter().all(|s| s.is_some_and(|s| s <= -rule.score_cp)) {
            let reason =
                format!("{mover:?} resigns (score at or below -{} cp for {} moves)", rule.score_cp, rule.moves);
            return Some((GameResult::loss_of(*mover), reason.to_lowercase()));
        }
    }
    if let Some(rule) = rules.draw
        && fullmoves >= rule.after_move
        && rule.moves > 0
        && scores.len() >= 2 * rule.moves
        && scores[scores.len() - 2 * rule.moves..].iter().all(|(_, s)| s.is_some_and(|s| s.abs() <= rule.score_cp))
    {
        return Some((
            GameResult::Draw,
            format!("draw by score (within ±{} cp for {} moves each)", rule.score_cp, rule.moves),
        ));
    }
    None
}

/// Plays one game from `opening`. Engine failures lose the game for the failing side.
pub fn play_game(engines: [&mut EngineProcess; 2], opening: &Opening, settings: &GameSettings) -> GameRecord {
    let (white, black) = (engines[0].name().to_owned(), engines[1].name().to_owned());
    let mut moves = Vec::new();
    let end = play_moves(engines, opening, settings, &mut moves);
    GameRecord::new(&white, &black, opening, moves, end)
}

/// Plays the game into `moves` until it ends, and says how it ended.
fn play_moves(
    mut engines: [&mut EngineProcess; 2],
    opening: &Opening,
    settings: &GameSettings,
    moves: &mut Vec<MoveRecord>,
) -> GameEnd {
    for side in [Color::White, Color::Black] {
        if let Err(e) = engines[slot(side)].new_game(settings.handshake_timeout) {
            return GameEnd::engine_failure(side, &e);
        }
    }
    let start = parse_fen(opening.fen()).expect("an Opening is checked when made");
    let mut board = Board { history: vec![Board::key(&start)], position: start };
    for uci in opening.moves() {
        let san = board.play(uci).expect("an Opening is checked when made");
        moves.push(MoveRecord {
            uci: uci.clone(),
            san,
            book: true,
            score_white: None,
            depth: None,
            time: Duration::ZERO,
            clock: None,
        });
    }
    let mut clocks = [settings.tc.start_clock(); 2];
    let mut scores: Vec<(Color, Option<i32>)> = Vec::new();
    let mut played: Vec<String> = opening.moves().to_vec();
    loop {
        if let Some((result, reason)) = board.rule_ending() {
            return GameEnd::new(result, Termination::Normal, reason, None);
        }
        if let Some(tables) = &settings.tablebases
            && let Some((result, reason)) = tablebase_ending(tables, &board.position)
        {
            return GameEnd::new(result, Termination::Adjudication, reason, None);
        }
        if let Some((result, reason)) = adjudicate(&settings.adjudication, &scores, board.position.fullmoves().get()) {
            return GameEnd::new(result, Termination::Adjudication, reason, None);
        }
        if let Some(max) = settings.adjudication.max_moves
            && moves.len() as u32 >= 2 * max
        {
            return GameEnd::new(
                GameResult::Draw,
                Termination::Adjudication,
                format!("draw by move limit ({max} moves)"),
                None,
            );
        }
        let side = board.position.turn();
        let engine = &mut engines[slot(side)];
        let wait = settings.tc.wait_limit(clocks[slot(side)], settings.margin, settings.hang_timeout);
        let outcome = match engine.search(opening.fen(), &played, &settings.tc.go_args(clocks), wait) {
            Ok(o) => o,
            Err(e) => return GameEnd::engine_failure(side, &e),
        };
        let clock = match settings.tc {
            TimeControl::Clock { increment, .. } => {
                let left = clocks[slot(side)];
                if outcome.elapsed > left + settings.margin {
                    let reason = format!(
                        "{} lost on time ({} ms used, {} ms left)",
                        engine.name(),
                        outcome.elapsed.as_millis(),
                        left.as_millis()
                    );
                    return GameEnd::new(GameResult::loss_of(side), Termination::TimeForfeit, reason, None);
                }
                clocks[slot(side)] = left.saturating_sub(outcome.elapsed) + increment;
                Some(clocks[slot(side)])
            }
            _ => None,
        };
        let Some(san) = board.play(&outcome.best_move) else {
            let reason = format!("{} played the illegal move \"{}\"", engine.name(), outcome.best_move);
            return GameEnd::new(GameResult::loss_of(side), Termination::RulesInfraction, reason, Some(side));
        };
        scores.push((side, outcome.score.map(score_as_cp)));
        let score_white = outcome.score.map(|s| if side == Color::White { s } else { flipped(s) });
        played.push(outcome.best_move.clone());
        moves.push(MoveRecord {
            uci: outcome.best_move,
            san,
            book: false,
            score_white,
            depth: outcome.depth,
            time: outcome.elapsed,
            clock,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(fen: &str) -> Board {
        let position = parse_fen(fen).unwrap();
        Board { history: vec![Board::key(&position)], position }
    }

    #[test]
    fn endings_by_the_rules() {
        let mut b = board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        for m in ["f2f3", "e7e5", "g2g4"] {
            b.play(m).unwrap();
            assert_eq!(b.rule_ending(), None);
        }
        assert_eq!(b.play("d8h4").unwrap(), "Qh4#");
        assert_eq!(b.rule_ending(), Some((GameResult::BlackWins, "checkmate")));
        assert_eq!(b.play("a2a3"), None, "no moves after mate");

        let mut r = board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        for m in ["a1a2", "e8d8", "a2a1", "d8e8", "a1a2", "e8d8", "a2a1"] {
            assert_eq!(r.rule_ending(), None);
            r.play(m).unwrap();
        }
        assert_eq!(r.rule_ending(), None, "the start position has occurred twice");
        r.play("d8e8").unwrap();
        assert_eq!(r.rule_ending(), Some((GameResult::Draw, "threefold repetition")));

        assert_eq!(board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").rule_ending(), Some((GameResult::Draw, "stalemate")));
        assert_eq!(
            board("7k/8/6K1/8/8/8/8/5B2 b - - 0 1").rule_ending(),
            Some((GameResult::Draw, "insufficient material"))
        );
        assert_eq!(
            board("7k/8/6K1/8/8/8/8/5R2 b - - 100 80").rule_ending(),
            Some((GameResult::Draw, "fifty-move rule"))
        );
    }

    #[test]
    fn adjudication_by_tablebase() {
        let Some(path) = deepchess_engine::tablebase::test_path() else { return };
        let tables = Tablebases::open(&path).unwrap();
        let ending = |fen: &str| tablebase_ending(&tables, &board(fen).position);
        let result = |result, reason: &str| Some((result, reason.to_owned()));
        assert_eq!(
            ending("4k3/8/8/8/8/8/8/4K2R b - - 0 1"),
            result(GameResult::WhiteWins, "tablebase: KRvK win for White")
        );
        assert_eq!(
            ending("8/8/8/8/8/8/2k5/K1q5 w - - 0 1"),
            result(GameResult::BlackWins, "tablebase: KvKQ win for Black")
        );
        assert_eq!(ending("8/8/3k4/8/8/3K4/3R4/6r1 w - - 0 1"), result(GameResult::Draw, "tablebase: KRvKR draw"));
        // KRvK, mate 21 plies to zeroing: won with 70 plies on the clock, spoilt with 90.
        let won = "4k3/8/8/8/8/8/8/4K2R w - - 70 60";
        assert_eq!(ending(won), result(GameResult::WhiteWins, "tablebase: KRvK win for White"));
        assert_eq!(ending("4k3/8/8/8/8/8/8/4K2R w - - 90 60"), result(GameResult::Draw, "tablebase: KRvK draw"));
        // Castling rights, or more pieces than the tables: play on.
        assert_eq!(ending("4k3/8/8/8/8/8/8/4K2R w K - 0 1"), None);
        assert_eq!(ending("k7/7p/8/3r4/8/8/8/3Q2K1 w - - 0 1"), None);
    }

    #[test]
    fn adjudication_by_score() {
        let rules = Adjudication {
            resign: Some(ResignRule { score_cp: 600, moves: 2 }),
            draw: Some(DrawRule { after_move: 30, moves: 2, score_cp: 10 }),
            max_moves: None,
        };
        let w = Color::White;
        let b = Color::Black;
        let losing = [(w, Some(-700)), (b, Some(700)), (w, Some(-650)), (b, Some(720))];
        assert_eq!(adjudicate(&rules, &losing[..3], 20).map(|r| r.0), Some(GameResult::BlackWins));
        assert_eq!(adjudicate(&rules, &losing[..1], 20), None, "one move is not enough");
        let unknown = [(w, None), (b, Some(0)), (w, Some(-700))];
        assert_eq!(adjudicate(&rules, &unknown, 20), None, "a move without a score breaks the run");
        let quiet = [(w, Some(5)), (b, Some(-3)), (w, Some(0)), (b, Some(10))];
        assert_eq!(adjudicate(&rules, &quiet, 29), None, "too early");
        assert_eq!(adjudicate(&rules, &quiet, 30).map(|r| r.0), Some(GameResult::Draw));
        assert_eq!(adjudicate(&rules, &quiet[1..], 30), None, "needs two moves of each side");
    }
}
