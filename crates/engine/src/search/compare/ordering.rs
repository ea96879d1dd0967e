//! Move ordering of the comparison search without numbers from a network: the table move,
//! captures and promotions that do not lose material (most valuable victim first), the
//! killers of the ply, quiet moves by their history, and losing captures last; or, with
//! the move predictors (the thesis's ordering), by the predictors' joint probability.

use deepchess_core::FeatureBits;
use shakmaty::{Chess, Color, Move, MoveList};

use crate::nn::{MovePredictor, Scratch};
use crate::search::MAX_PLY;
use crate::search::history::{Histories, is_quiet};
use crate::search::ordering::{OrderedMoves, Prediction, mvv_lva};
use crate::search::see::loses_material;

/// Killer moves (two quiet moves per ply that caused a cutoff) and the history heuristic.
pub struct MoveOrder {
    killers: Vec<[Option<Move>; 2]>,
    histories: Box<Histories>,
}

impl Default for MoveOrder {
    fn default() -> Self {
        MoveOrder { killers: vec![[None; 2]; MAX_PLY + 1], histories: Box::default() }
    }
}

impl MoveOrder {
    /// Whether `m` is a killer at `ply`.
    pub fn is_killer(&self, ply: usize, m: &Move) -> bool {
        self.killers[ply].contains(&Some(*m))
    }

    /// Records a cutoff by the quiet move `m` at `ply`, searched to `depth`.
    pub fn reward(&mut self, turn: Color, ply: usize, m: &Move, depth: i32) {
        if !is_quiet(m) {
            return;
        }
        let killers = &mut self.killers[ply];
        if killers[0] != Some(*m) {
            killers[1] = killers[0];
            killers[0] = Some(*m);
        }
        self.histories.reward(turn, m, &[], &[], [None; 2], depth, false);
    }

    /// Keys `moves` of `position` at `ply` into `ordered`, the table move first.
    pub fn order(
        &self,
        position: &Chess,
        moves: &MoveList,
        ply: usize,
        tt_move: Option<Move>,
        ordered: &mut OrderedMoves,
    ) {
        let turn = shakmaty::Position::turn(position);
        ordered.extend(moves.iter().map(|&m| {
            let key = if Some(m) == tt_move {
                1 << 30
            } else if !is_quiet(&m) {
                let base = if loses_material(position, &m) { -(1 << 20) } else { 1 << 20 };
                base + mvv_lva(&m)
            } else if let Some(k) = self.killers[ply].iter().position(|k| *k == Some(m)) {
                (1 << 19) - k as i32
            } else {
                self.histories.butterfly(turn, &m)
            };
            // Every key is below 2^24 or a power of two: exact in f32.
            (key as f32, m)
        }));
    }
}

/// Keys `moves` into `ordered` by the predictors' joint probability, the table move first.
pub fn by_predictors(
    predictor: &MovePredictor,
    position: &Chess,
    moves: &MoveList,
    tt_move: Option<Move>,
    scratch: &mut Scratch,
    ordered: &mut OrderedMoves,
) {
    let mut prediction = Prediction::new(predictor, &FeatureBits::from_position(position), scratch);
    ordered.extend(moves.iter().map(|&m| {
        let tt = if Some(m) == tt_move { 1e9 } else { 0.0 };
        (tt + prediction.joint(position, &m, scratch), m)
    }));
}
