//! A game as PGN, each move followed by the search's score as an `[%eval]` comment
//! (White's view, pawns or `#n`).

use std::fmt::Write;

use deepchess_core::record::MATE_BASE;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Color, EnPassantMode, Position};

use crate::game::PlayedGame;

/// The PGN text of `game`, starting from its first searched position, with a blank line after.
pub fn game_pgn(game: &PlayedGame) -> String {
    let result = match game.ending.result {
        1 => "1-0",
        -1 => "0-1",
        _ => "1/2-1/2",
    };
    let mut text = String::new();
    let Some(first) = game.plies.first() else { return text };
    let fen = Fen::from_position(&first.position, EnPassantMode::Legal);
    for (tag, value) in [
        ("Event", "deepchess datagen".to_string()),
        ("Round", (u64::from(game.number) + 1).to_string()),
        ("White", "deepchess".to_string()),
        ("Black", "deepchess".to_string()),
        ("Result", result.to_string()),
        ("SetUp", "1".to_string()),
        ("FEN", fen.to_string()),
        ("Termination", game.ending.termination.pgn().to_string()),
    ] {
        let _ = writeln!(text, "[{tag} \"{value}\"]");
    }
    text.push('\n');
    for (i, ply) in game.plies.iter().enumerate() {
        let number = ply.position.fullmoves();
        match ply.position.turn() {
            Color::White => _ = write!(text, "{number}. "),
            Color::Black if i == 0 => _ = write!(text, "{number}... "),
            Color::Black => {}
        }
        let eval = ply.white_eval();
        let eval = if eval.unsigned_abs() > (MATE_BASE - 1000) as u16 {
            let moves = MATE_BASE - eval.abs();
            if eval > 0 { format!("#{moves}") } else { format!("#-{moves}") }
        } else {
            format!("{:.2}", f64::from(eval) / 100.0)
        };
        let san = SanPlus::from_move(ply.position.clone(), ply.played);
        let _ = write!(text, "{san} {{[%eval {eval}]}} ");
    }
    let _ = writeln!(text, "{result}\n");
    text
}
