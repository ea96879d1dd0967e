//! How a game ends: the rules (mate, stalemate, repetition, fifty moves, insufficient
//! material), adjudication on the search's scores, and the cap on its length.

use deepchess_engine::position_history::{Game, is_rule_draw, key};
use serde::{Deserialize, Serialize};
use shakmaty::{Color, Position};

use crate::options::GameOptions;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// Checkmate on the board.
    Checkmate,
    /// Stalemate.
    Stalemate,
    /// Threefold repetition.
    Repetition,
    /// Fifty-move rule.
    FiftyMoves,
    /// Insufficient material.
    InsufficientMaterial,
    /// Adjudicated win: a mate score, or a score beyond `--win-score` for `--win-plies`.
    WinAdjudicated,
    /// Adjudicated draw: scores within `--draw-score` for `--draw-plies`.
    DrawAdjudicated,
    /// The game reached `--max-plies`.
    MaxPlies,
}

impl Termination {
    /// The PGN `Termination` tag's value.
    pub fn pgn(self) -> &'static str {
        match self {
            Termination::Checkmate | Termination::Stalemate => "normal",
            Termination::Repetition | Termination::FiftyMoves | Termination::InsufficientMaterial => "rules",
            Termination::WinAdjudicated | Termination::DrawAdjudicated => "adjudication",
            Termination::MaxPlies => "max plies",
        }
    }
}

/// The end of a game: why, and the result from White's view (1, 0, −1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// Why.
    pub termination: Termination,
    /// Result, White's view.
    pub result: i8,
}

/// The end by the rules of the game's current position, if it is over.
pub fn by_rules(game: &Game) -> Option<Ending> {
    let position = game.position();
    let draw = |termination| Some(Ending { termination, result: 0 });
    if position.legal_moves().is_empty() {
        if !position.is_check() {
            return draw(Termination::Stalemate);
        }
        let result = if position.turn() == Color::White { -1 } else { 1 };
        return Some(Ending { termination: Termination::Checkmate, result });
    }
    if position.is_insufficient_material() {
        return draw(Termination::InsufficientMaterial);
    }
    if is_rule_draw(position) {
        return draw(Termination::FiftyMoves);
    }
    // Threefold: the current position twice before, within the reversible moves.
    let current = key(position);
    let history = game.history();
    let window = (position.halfmoves() as usize).min(history.len());
    let repeats = history[history.len() - window..].iter().filter(|&&k| k == current).count();
    if repeats >= 2 { draw(Termination::Repetition) } else { None }
}

/// Watches the scores of a game, White's view, one per searched ply.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    win_score: i32,
    win_plies: u32,
    draw_after: u32,
    draw_score: i32,
    draw_plies: u32,
    max_plies: u32,
    white_ahead: u32,
    black_ahead: u32,
    quiet: u32,
    plies: u32,
}

impl Adjudicator {
    /// An adjudicator with the thresholds of `options`.
    pub fn new(options: &GameOptions) -> Adjudicator {
        Adjudicator {
            win_score: options.win_score,
            win_plies: options.win_plies,
            draw_after: options.draw_after,
            draw_score: options.draw_score,
            draw_plies: options.draw_plies,
            max_plies: options.max_plies,
            white_ahead: 0,
            black_ahead: 0,
            quiet: 0,
            plies: 0,
        }
    }

    /// Takes the score (White's view; `mate` when it is a mate score) of the move played at
    /// game ply `ply`, and says whether the game ends here.
    pub fn push(&mut self, ply: u32, score: i32, mate: bool) -> Option<Ending> {
        let run = |counter: &mut u32, on: bool| *counter = if on { *counter + 1 } else { 0 };
        run(&mut self.white_ahead, score >= self.win_score);
        run(&mut self.black_ahead, score <= -self.win_score);
        run(&mut self.quiet, score.abs() <= self.draw_score);
        self.plies += 1;
        let win = |result| Some(Ending { termination: Termination::WinAdjudicated, result });
        if mate || self.white_ahead >= self.win_plies || self.black_ahead >= self.win_plies {
            return win(if score > 0 { 1 } else { -1 });
        }
        if ply >= self.draw_after && self.quiet >= self.draw_plies {
            return Some(Ending { termination: Termination::DrawAdjudicated, result: 0 });
        }
        (self.plies >= self.max_plies).then_some(Ending { termination: Termination::MaxPlies, result: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjudicator() -> Adjudicator {
        Adjudicator::new(&GameOptions {
            win_plies: 3,
            draw_plies: 2,
            draw_after: 10,
            max_plies: 30,
            ..Default::default()
        })
    }

    #[test]
    fn wins_draws_and_the_cap() {
        let mut a = adjudicator();
        assert_eq!(a.push(0, 2500, false), None);
        assert_eq!(a.push(1, 2500, false), None);
        assert_eq!(a.push(2, -2500, false), None, "the run is broken");
        assert_eq!(a.push(3, -2500, false), None);
        assert_eq!(a.push(4, -2100, false).map(|e| e.result), Some(-1));
        let mut a = adjudicator();
        assert_eq!(a.push(0, 29_990, true).map(|e| (e.termination, e.result)), Some((Termination::WinAdjudicated, 1)));
        let mut a = adjudicator();
        assert_eq!(a.push(8, 0, false), None);
        assert_eq!(a.push(9, 5, false), None, "too early");
        assert_eq!(a.push(10, -5, false).map(|e| e.termination), Some(Termination::DrawAdjudicated));
        let mut a = adjudicator();
        let ends: Vec<_> = (0..30).filter_map(|p| a.push(p, 100, false)).collect();
        assert_eq!(ends, [Ending { termination: Termination::MaxPlies, result: 0 }]);
    }

    #[test]
    fn rules() {
        let ended = |fen: &str, moves: &[&str]| by_rules(&Game::from_uci(Some(fen), moves).unwrap());
        let mated = ended("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", &[]);
        assert_eq!(mated, Some(Ending { termination: Termination::Checkmate, result: 1 }));
        assert_eq!(ended("7k/8/6QK/8/8/8/8/8 b - - 0 1", &[]).unwrap().termination, Termination::Stalemate);
        assert_eq!(ended("7k/8/8/8/8/8/8/K5N1 w - - 0 1", &[]).unwrap().termination, Termination::InsufficientMaterial);
        assert_eq!(ended("7k/8/8/8/8/8/8/K5R1 w - - 100 80", &[]).unwrap().termination, Termination::FiftyMoves);
        let start = "7k/8/8/8/8/8/8/K5R1 w - - 0 1";
        let shuffle = ["g1g2", "h8h7", "g2g1", "h7h8"];
        assert_eq!(ended(start, &shuffle[..]), None, "twice is not a draw");
        let twice: Vec<&str> = shuffle.iter().chain(&shuffle).copied().collect();
        assert_eq!(ended(start, &twice).unwrap().termination, Termination::Repetition);
    }
}
