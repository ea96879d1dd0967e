//! A self-play game as `deepchess datagen --pgn` writes it: its round, its first searched
//! position, every searched move with the search's score, its result and why it ended; and
//! its PGN text. The packed games format ([`crate::packed_games`]) holds exactly these.

use std::fmt::Write;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, EnPassantMode, Move, Position};

use crate::record::MATE_BASE;

/// The `Termination` tag values datagen writes, in the order the packed format numbers them.
pub const TERMINATIONS: [&str; 4] = ["normal", "rules", "adjudication", "max plies"];

/// One self-play game.
#[derive(Clone, Debug)]
pub struct SelfPlayGame {
    /// The `Round` tag: the game's number in its run, plus one.
    pub round: u64,
    /// The first searched position (after the random opening plies): the `FEN` tag.
    pub start: Chess,
    /// Every move played from `start` on, each chosen by a search.
    pub moves: Vec<Move>,
    /// The score of the search that chose each move, of the position it was played from:
    /// White's view, centipawns (within ±20,000) or ±(30,000 − n) for a mate in `n` moves.
    pub evals: Vec<i16>,
    /// Result, White's view: 1, 0 or −1.
    pub result: i8,
    /// Why it ended: one of [`TERMINATIONS`].
    pub termination: &'static str,
}

/// The `[%eval]` text of a score: pawns with two decimals, or `#n` / `#-n` for a mate in `n`.
pub fn eval_text(eval: i16) -> String {
    if eval.unsigned_abs() > (MATE_BASE - 1000) as u16 {
        let moves = MATE_BASE - eval.abs();
        if eval > 0 { format!("#{moves}") } else { format!("#-{moves}") }
    } else {
        format!("{:.2}", f64::from(eval) / 100.0)
    }
}

impl SelfPlayGame {
    /// The `Result` tag and token: `1-0`, `1/2-1/2` or `0-1`.
    pub fn result_text(&self) -> &'static str {
        match self.result {
            1 => "1-0",
            -1 => "0-1",
            _ => "1/2-1/2",
        }
    }

    /// The `FEN` tag: the first position, en passant written only when a capture is legal.
    pub fn fen(&self) -> String {
        Fen::from_position(&self.start, EnPassantMode::Legal).to_string()
    }

    /// The tags in the order they are written.
    pub fn tags(&self) -> [(&'static str, String); 8] {
        [
            ("Event", "deepchess datagen".to_string()),
            ("Round", self.round.to_string()),
            ("White", "deepchess".to_string()),
            ("Black", "deepchess".to_string()),
            ("Result", self.result_text().to_string()),
            ("SetUp", "1".to_string()),
            ("FEN", self.fen()),
            ("Termination", self.termination.to_string()),
        ]
    }

    /// The PGN text, a blank line after it; empty for a game without moves (datagen writes
    /// none). Every move is followed by `{[%eval E]}` with its score ([`eval_text`]).
    pub fn pgn(&self) -> String {
        let mut text = String::new();
        if self.moves.is_empty() {
            return text;
        }
        for (tag, value) in self.tags() {
            let _ = writeln!(text, "[{tag} \"{value}\"]");
        }
        text.push('\n');
        let mut position = self.start.clone();
        for (i, (&played, &eval)) in self.moves.iter().zip(&self.evals).enumerate() {
            let number = position.fullmoves();
            match position.turn() {
                Color::White => _ = write!(text, "{number}. "),
                Color::Black if i == 0 => _ = write!(text, "{number}... "),
                Color::Black => {}
            }
            let san = SanPlus::from_move_and_play_unchecked(&mut position, played);
            let _ = write!(text, "{san} {{[%eval {}]}} ", eval_text(eval));
        }
        let _ = writeln!(text, "{}\n", self.result_text());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    #[test]
    fn scores_read_as_pawns_or_mates() {
        assert_eq!(eval_text(6), "0.06");
        assert_eq!(eval_text(-19), "-0.19");
        assert_eq!(eval_text(20_000), "200.00");
        assert_eq!(eval_text(MATE_BASE - 6), "#6");
        assert_eq!(eval_text(-(MATE_BASE - 1)), "#-1");
    }

    #[test]
    fn a_game_from_a_black_move_numbers_its_first_move() {
        let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2";
        let start: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let first = start
            .legal_moves()
            .into_iter()
            .find(|m| m.to().to_string() == "c6" && m.role() == shakmaty::Role::Knight)
            .unwrap();
        let game = SelfPlayGame {
            round: 4,
            start,
            moves: vec![first],
            evals: vec![-31],
            result: 0,
            termination: TERMINATIONS[3],
        };
        let text = game.pgn();
        assert!(text.starts_with("[Event \"deepchess datagen\"]\n[Round \"4\"]\n"), "{text}");
        assert!(text.contains(&format!("[FEN \"{fen}\"]\n[Termination \"max plies\"]\n\n")), "{text}");
        assert!(text.ends_with("2... Nc6 {[%eval -0.31]} 1/2-1/2\n\n"), "{text}");
        assert_eq!(SelfPlayGame { moves: Vec::new(), evals: Vec::new(), ..game }.pgn(), "");
    }
}
