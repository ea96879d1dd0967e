//! Move probabilities from the move predictors, for move ordering, the policy players,
//! MCTS priors and predictor rollouts.

use std::borrow::Cow;

use deepchess_core::FeatureBits;
use deepchess_core::features::role_index;
use deepchess_core::move_label::label_destination;
use shakmaty::{Chess, Move, Position, Role};

use crate::nn::{MovePredictor, PredictorAccumulator, Scratch};

/// Factor applied to the joint probability of an under-promotion: the predictors label
/// every promotion alike (pawn to square), and a queen is almost always the right piece.
pub const UNDERPROMOTION_FACTOR: f32 = 0.01;

/// The predictors' outputs for one position, square distributions computed lazily per
/// piece type.
pub struct Prediction<'a> {
    predictor: &'a MovePredictor,
    accumulator: Cow<'a, PredictorAccumulator>,
    /// P(piece type), P N B R Q K.
    pub piece: [f32; 6],
    squares: [Option<[f32; 64]>; 6],
}

impl<'a> Prediction<'a> {
    /// Runs the piece-type predictor on a position.
    pub fn new(predictor: &'a MovePredictor, features: &FeatureBits, scratch: &mut Scratch) -> Prediction<'a> {
        Prediction::with_accumulator(predictor, Cow::Owned(predictor.accumulator(features)), scratch)
    }

    /// Runs the piece-type predictor from the first-layer pre-activations of a position
    /// (kept up to date along a search path).
    pub fn with_accumulator(
        predictor: &'a MovePredictor,
        accumulator: Cow<'a, PredictorAccumulator>,
        scratch: &mut Scratch,
    ) -> Prediction<'a> {
        let piece = predictor.piece_probabilities(&accumulator, scratch);
        Prediction { predictor, accumulator, piece, squares: [None; 6] }
    }

    /// P(destination | piece type).
    pub fn squares(&mut self, piece: usize, scratch: &mut Scratch) -> &[f32; 64] {
        let (predictor, accumulator) = (self.predictor, &self.accumulator);
        self.squares[piece].get_or_insert_with(|| predictor.square_probabilities(piece, accumulator, scratch))
    }

    /// The joint probability P(piece)·P(square | piece) of a legal move of `position`.
    pub fn joint(&mut self, position: &Chess, m: &Move, scratch: &mut Scratch) -> f32 {
        let piece = role_index(m.role());
        let to = label_destination(m, position.turn()).expect("standard chess has no drops") as usize;
        let p = self.piece[piece] * self.squares(piece, scratch)[to];
        match m.promotion() {
            Some(role) if role != Role::Queen => p * UNDERPROMOTION_FACTOR,
            _ => p,
        }
    }
}

/// Joint probabilities of `moves` in `position`.
pub fn move_probabilities(
    predictor: &MovePredictor,
    position: &Chess,
    moves: &[Move],
    scratch: &mut Scratch,
) -> Vec<f32> {
    let mut prediction = Prediction::new(predictor, &FeatureBits::from_position(position), scratch);
    moves.iter().map(|m| prediction.joint(position, m, scratch)).collect()
}

/// Most valuable victim, least valuable attacker: a capture ordering key (higher first).
pub fn mvv_lva(m: &Move) -> i32 {
    let value = |role: Role| match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    };
    let victim = m.capture().map_or(0, value);
    let promotion = m.promotion().map_or(0, value);
    16 * (victim + promotion) - value(m.role())
}

/// A node's moves with their ordering keys, handed out best first: a lazy selection that
/// keeps the order of equal keys, as a stable sort would.
#[derive(Default)]
pub struct OrderedMoves {
    keyed: Vec<(f32, Move)>,
    next: usize,
}

impl OrderedMoves {
    /// Forgets the moves (keeping the memory).
    pub fn clear(&mut self) {
        self.keyed.clear();
        self.next = 0;
    }

    /// Adds moves with their keys.
    pub fn extend(&mut self, moves: impl Iterator<Item = (f32, Move)>) {
        self.keyed.extend(moves);
    }

    /// The remaining move with the highest key (the earliest among equals).
    pub fn next_best(&mut self) -> Option<Move> {
        let rest = self.keyed.get_mut(self.next..)?;
        let (mut best, mut best_key) = (0, f32::NEG_INFINITY);
        for (i, (k, _)) in rest.iter().enumerate() {
            if *k > best_key {
                (best, best_key) = (i, *k);
            }
        }
        let (_, m) = *rest.get(best)?;
        // Rotating instead of swapping keeps the order of the moves left behind.
        rest[..=best].rotate_right(1);
        self.next += 1;
        Some(m)
    }
}
