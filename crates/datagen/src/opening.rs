//! Openings: random legal plies from the start position or a random book position, kept
//! only when a short search finds them balanced.

use std::path::Path;

use deepchess_arena::openings::OpeningBook;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::Score;
use shakmaty::Position;

use crate::adjudication::by_rules;
use crate::error::DatagenError;
use crate::options::GameOptions;
use crate::player::Player;
use crate::rng::Rng;

/// Openings drawn before giving up on `--opening-bound`.
const MAX_TRIES: usize = 1000;

/// Where openings start: the book's positions (with their moves played), or the standard
/// start position.
#[derive(Clone, Debug)]
pub struct Openings {
    starts: Vec<Game>,
}

impl Openings {
    /// The positions of `book` (EPD, or PGN by extension), or the start position for `None`.
    pub fn load(book: Option<&Path>) -> Result<Openings, DatagenError> {
        let Some(path) = book else { return Ok(Openings { starts: vec![Game::default()] }) };
        let invalid = |message: String| DatagenError::Invalid(format!("--book {}: {message}", path.display()));
        let read = OpeningBook::read(path).map_err(|e| invalid(e.to_string()))?;
        let starts = read
            .openings
            .iter()
            .map(|o| {
                let moves: Vec<&str> = o.moves().iter().map(String::as_str).collect();
                Game::from_uci(Some(o.fen()), &moves).map_err(|e| invalid(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if starts.is_empty() {
            return Err(invalid(format!("no usable opening ({} entries rejected)", read.errors.len())));
        }
        Ok(Openings { starts })
    }

    /// Draws an opening for one game: a random start, `options.random_plies` random legal
    /// plies, then a search of `options.opening_nodes`; drawn again while the game is over
    /// or the score is beyond `options.opening_bound`. `None` when the run is being stopped.
    pub fn draw(
        &self,
        rng: &mut Rng,
        options: &GameOptions,
        player: &mut Player,
    ) -> Result<Option<Game>, DatagenError> {
        for _ in 0..MAX_TRIES {
            let mut game = self.starts[rng.below(self.starts.len())].clone();
            for _ in 0..options.random_plies {
                let moves = game.position().legal_moves();
                if moves.is_empty() {
                    break;
                }
                game.play(moves[rng.below(moves.len())]);
            }
            if by_rules(&game).is_some() {
                continue;
            }
            player.new_game();
            let Some(result) = player.search(&game, options.opening_nodes, options.opening_nodes) else {
                return Ok(None);
            };
            if matches!(result.score, Score::Cp(cp) if cp.abs() <= options.opening_bound) {
                return Ok(Some(game));
            }
        }
        Err(DatagenError::Invalid(format!(
            "no opening scored within --opening-bound {} cp in {MAX_TRIES} tries",
            options.opening_bound
        )))
    }
}
