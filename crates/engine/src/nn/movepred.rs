//! The move predictors: P(piece type) and, per piece type, P(destination square).

use deepchess_core::arch::MOVEPRED_SQUARE_STACKS;
use deepchess_core::{Model, SparseFeatures};

use super::{NetworkError, Scratch, Stack, softmax};

/// Piece-type predictor and six destination-square predictors (P N B R Q K).
#[derive(Clone, Debug)]
pub struct MovePredictor {
    piece: Stack,
    squares: Vec<Stack>,
}

impl MovePredictor {
    /// Reads stacks `piece` and `square.*` of `model`.
    pub fn from_model(model: &Model) -> Result<MovePredictor, NetworkError> {
        Ok(MovePredictor {
            piece: Stack::from_model(model, "piece")?,
            squares: MOVEPRED_SQUARE_STACKS
                .iter()
                .map(|name| Stack::from_model(model, name))
                .collect::<Result<_, _>>()?,
        })
    }

    /// P(piece type) for P N B R Q K.
    pub fn piece_probabilities(&self, features: &SparseFeatures, scratch: &mut Scratch) -> [f32; 6] {
        let mut p = [0.0; 6];
        p.copy_from_slice(self.piece.forward_sparse(features.as_slice(), scratch));
        softmax(&mut p);
        p
    }

    /// P(destination square | piece type `piece` 0..6) for squares a1..h8.
    pub fn square_probabilities(&self, piece: usize, features: &SparseFeatures, scratch: &mut Scratch) -> [f32; 64] {
        let mut p = [0.0; 64];
        p.copy_from_slice(self.squares[piece].forward_sparse(features.as_slice(), scratch));
        softmax(&mut p);
        p
    }
}
