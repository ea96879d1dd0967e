//! One self-play game: the evaluation search plays both sides from a drawn opening until the
//! rules, the adjudicator or the length cap end it; every searched position becomes a record.

use deepchess_core::record::{EVAL_CP_LIMIT, MATE_BASE, RecordError};
use deepchess_core::{GameInfo, PlayedMove, Record};
use deepchess_engine::search::Score;
use shakmaty::{Chess, Color, Move, Position};

use crate::adjudication::{Adjudicator, Ending, by_rules};
use crate::error::DatagenError;
use crate::opening::Openings;
use crate::options::GameOptions;
use crate::player::Player;
use crate::rng::{Rng, is_validation};

/// A searched position of a game and what was played there.
#[derive(Clone, Debug)]
pub struct PlayedPly {
    /// The position searched.
    pub position: Chess,
    /// Its ply in the game (from the start position's move number).
    pub ply: u16,
    /// The move played (the search's best move).
    pub played: Move,
    /// The search's score, side to move's view.
    pub score: Score,
}

impl PlayedPly {
    /// The score as a record stores it: White's view, centipawns clamped to
    /// ±`EVAL_CP_LIMIT`, mate in `n` moves as ±(30000 − n).
    pub fn white_eval(&self) -> i16 {
        let own = match self.score {
            Score::Cp(cp) => cp.clamp(-i32::from(EVAL_CP_LIMIT), i32::from(EVAL_CP_LIMIT)) as i16,
            Score::Mate(n) if n > 0 => MATE_BASE - n.min(1000) as i16,
            Score::Mate(n) => -(MATE_BASE - n.unsigned_abs().min(1000) as i16),
        };
        if self.position.turn() == Color::White { own } else { -own }
    }
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// Game number (0-based, over the whole output directory).
    pub number: u32,
    /// Whether it belongs to the validation split.
    pub validation: bool,
    /// The searched positions in order.
    pub plies: Vec<PlayedPly>,
    /// How it ended.
    pub ending: Ending,
}

impl PlayedGame {
    /// One record per searched position, with the game's number and result.
    pub fn records(&self) -> Result<Vec<Record>, RecordError> {
        let info = GameInfo { game: self.number, result: self.ending.result };
        self.plies
            .iter()
            .map(|p| Record::new(&p.position, p.ply, p.white_eval(), info, PlayedMove::new(&p.position, &p.played)))
            .collect()
    }

    /// The position after the last move.
    pub fn final_position(&self) -> Option<Chess> {
        let last = self.plies.last()?;
        let mut position = last.position.clone();
        position.play_unchecked(last.played);
        Some(position)
    }
}

/// The ply of `position` counted from its move number (0 = White's first move).
fn ply_of(position: &Chess) -> u16 {
    let ply = 2 * (position.fullmoves().get() - 1) + u32::from(position.turn() == Color::Black);
    ply.min(u32::from(u16::MAX)) as u16
}

/// Plays game `number`: its opening and every move follow from (seed, number) alone.
/// `None` when the run is being stopped.
pub fn play(
    number: u32,
    options: &GameOptions,
    openings: &Openings,
    player: &mut Player,
) -> Result<Option<PlayedGame>, DatagenError> {
    let mut rng = Rng::for_game(options.seed, number);
    let Some(mut game) = openings.draw(&mut rng, options, player)? else { return Ok(None) };
    player.new_game();
    let mut adjudicator = Adjudicator::new(options);
    let mut plies = Vec::new();
    // The opening is not over (drawn so); after each move the rules come first, so a
    // mate on the board is never recorded as an adjudication.
    let ending = loop {
        let Some(result) = player.search(&game, options.nodes, options.hard_nodes) else { return Ok(None) };
        let position = game.position().clone();
        let ply = PlayedPly { ply: ply_of(&position), position, played: result.best, score: result.score };
        let (eval, mate) = (ply.white_eval(), matches!(result.score, Score::Mate(_)));
        let adjudicated = adjudicator.push(u32::from(ply.ply), i32::from(eval), mate);
        plies.push(ply);
        game.play(result.best);
        if let Some(ending) = by_rules(&game).or(adjudicated) {
            break ending;
        }
    };
    let validation = is_validation(number, options.seed, options.validation_fraction);
    Ok(Some(PlayedGame { number, validation, plies, ending }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use deepchess_engine::nn::Networks;

    use super::*;
    use crate::adjudication::Termination;

    #[test]
    fn a_game_gives_consistent_records() {
        let networks = Networks::embedded().unwrap();
        let mut player = Player::new(&networks, 1, Arc::default());
        let options =
            GameOptions { nodes: 200, hard_nodes: 800, opening_nodes: 200, max_plies: 60, ..Default::default() };
        let openings = Openings::load(None).unwrap();
        let game = play(3, &options, &openings, &mut player).unwrap().unwrap();
        let again = play(3, &options, &openings, &mut player).unwrap().unwrap();
        assert_eq!(game.records().unwrap(), again.records().unwrap(), "a game follows from (seed, number)");
        let records = game.records().unwrap();
        assert_eq!(records.len(), game.plies.len());
        assert_eq!(records[0].ply(), u16::from(options.random_plies as u8));
        for (i, (record, ply)) in records.iter().zip(&game.plies).enumerate() {
            assert_eq!((record.game(), record.result()), (3, game.ending.result));
            assert_eq!(record.ply(), records[0].ply() + i as u16);
            assert_eq!(record.position().unwrap().board(), ply.position.board());
            assert_eq!(record.played().unwrap().unwrap().to_move(&ply.position), Some(ply.played));
            if let Score::Cp(cp) = ply.score {
                let white = if ply.position.turn() == Color::White { cp } else { -cp };
                assert_eq!(record.eval(), Some(white.clamp(-20_000, 20_000) as i16));
            }
        }
        let last = game.final_position().unwrap();
        match game.ending.termination {
            Termination::Checkmate => {
                let winner = last.outcome().winner();
                assert_eq!(winner.map(|c| if c == Color::White { 1 } else { -1 }), Some(game.ending.result));
            }
            Termination::WinAdjudicated => assert_ne!(game.ending.result, 0),
            _ => assert_eq!(game.ending.result, 0),
        }
    }
}
