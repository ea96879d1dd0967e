//! A game as PGN, each move followed by the search's score as an `[%eval]` comment
//! (White's view, pawns or `#n`): the text of [`SelfPlayGame::pgn`].

use deepchess_core::selfplay_game::SelfPlayGame;

use crate::game::{PlayedGame, PlayedPly};

/// The game as the packed format and its PGN text know it: its round (number + 1), first
/// searched position, moves and White's-view scores, result and termination; `None` for a
/// game without a searched position.
fn selfplay_game(game: &PlayedGame) -> Option<SelfPlayGame> {
    let first = game.plies.first()?;
    Some(SelfPlayGame {
        round: u64::from(game.number) + 1,
        start: first.position.clone(),
        moves: game.plies.iter().map(|ply| ply.played).collect(),
        evals: game.plies.iter().map(PlayedPly::white_eval).collect(),
        result: game.ending.result,
        termination: game.ending.termination.pgn(),
    })
}

/// The PGN text of `game`, starting from its first searched position, with a blank line after.
pub fn game_pgn(game: &PlayedGame) -> String {
    selfplay_game(game).map(|g| g.pgn()).unwrap_or_default()
}
