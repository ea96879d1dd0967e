//! The move predictors: P(piece type) and, per piece type, P(destination square).
//!
//! The first layer of every predictor is linear in the sparse 773-feature encoding, so
//! its pre-activations (all seven predictors side by side, a [`PredictorAccumulator`])
//! are updated from a parent position's by the few rows a move changes, as the
//! evaluation net's accumulators are; the hidden layers run from there on demand.

use deepchess_core::arch::MOVEPRED_SQUARE_STACKS;
use deepchess_core::features::MAX_ACTIVE;
use deepchess_core::{FeatureBits, Model};

use super::kernels::update_rows;
use super::{NetworkError, Scratch, Stack, softmax};

/// Piece-type predictor and six destination-square predictors (P N B R Q K).
#[derive(Clone, Debug)]
pub struct MovePredictor {
    /// The piece-type stack, then the six square stacks.
    stacks: Vec<Stack>,
    /// Where each stack's first-layer outputs start in an accumulator (and, last, its width).
    offsets: Vec<usize>,
}

/// The first-layer pre-activations of all seven predictors for one position, with the
/// features they were computed from.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictorAccumulator {
    values: Vec<f32>,
    features: FeatureBits,
}

impl PredictorAccumulator {
    /// The features this accumulator holds.
    pub fn features(&self) -> &FeatureBits {
        &self.features
    }

    /// How many features differ between this accumulator's position and `features`.
    pub fn distance(&self, features: &FeatureBits) -> usize {
        let mut n = 0;
        self.features.changes(features, |_, _| n += 1);
        n
    }
}

impl MovePredictor {
    /// Reads stacks `piece` and `square.*` of `model`.
    pub fn from_model(model: &Model) -> Result<MovePredictor, NetworkError> {
        let mut stacks: Vec<Stack> = std::iter::once("piece")
            .chain(MOVEPRED_SQUARE_STACKS)
            .map(|name| Stack::from_model(model, name))
            .collect::<Result<_, _>>()?;
        for (i, stack) in stacks.iter_mut().enumerate() {
            let outputs = if i == 0 { 6 } else { 64 };
            if stack.layers.len() < 2 || stack.outputs() != outputs {
                return Err(NetworkError::Invalid {
                    kind: "movepred",
                    message: format!("stack `{}` needs two layers or more and {outputs} outputs", stack.name),
                });
            }
            stack.keep_weights_by_output();
        }
        let offsets = std::iter::once(0)
            .chain(stacks.iter().scan(0, |end, stack| {
                *end += stack.first_width();
                Some(*end)
            }))
            .collect();
        Ok(MovePredictor { stacks, offsets })
    }

    /// The accumulator of `features`, computed from scratch.
    pub fn accumulator(&self, features: &FeatureBits) -> PredictorAccumulator {
        let mut values = Vec::with_capacity(self.offsets[self.stacks.len()]);
        for stack in &self.stacks {
            values.extend_from_slice(&stack.layers[0].bias);
        }
        self.apply(&mut values, features.to_sparse().as_slice(), &[]);
        PredictorAccumulator { values, features: *features }
    }

    /// Makes `child` the accumulator of `features` by updating `parent`'s with the
    /// features that differ (from scratch when more differ than a position holds).
    pub fn update(&self, parent: &PredictorAccumulator, features: &FeatureBits, child: &mut PredictorAccumulator) {
        let mut added = [0u16; MAX_ACTIVE];
        let mut removed = [0u16; MAX_ACTIVE];
        let (mut n_added, mut n_removed) = (0, 0);
        let mut overflow = false;
        parent.features.changes(features, |f, add| {
            let (list, n) = if add { (&mut added, &mut n_added) } else { (&mut removed, &mut n_removed) };
            match list.get_mut(*n) {
                Some(slot) => *slot = f,
                None => overflow = true,
            }
            *n += 1;
        });
        if overflow || n_added + n_removed >= features.len() {
            *child = self.accumulator(features);
            return;
        }
        child.values.clear();
        child.values.extend_from_slice(&parent.values);
        self.apply(&mut child.values, &added[..n_added], &removed[..n_removed]);
        child.features = *features;
    }

    /// Adds the first-layer rows of `add` to every stack's part of `values` and
    /// subtracts those of `remove`.
    fn apply(&self, values: &mut [f32], add: &[u16], remove: &[u16]) {
        for (i, stack) in self.stacks.iter().enumerate() {
            update_rows(&mut values[self.offsets[i]..self.offsets[i + 1]], &stack.layers[0].weight, add, remove);
        }
    }

    /// P(piece type) for P N B R Q K.
    pub fn piece_probabilities(&self, accumulator: &PredictorAccumulator, scratch: &mut Scratch) -> [f32; 6] {
        let mut p = [0.0; 6];
        let first = &accumulator.values[self.offsets[0]..self.offsets[1]];
        self.stacks[0].outputs_at(first, &[0, 1, 2, 3, 4, 5], &mut p, scratch);
        softmax(&mut p);
        p
    }

    /// The logits of P(destination square | piece type `piece` 0..6) at `squares` only
    /// (`out[k]` for square `squares[k]`, a1 = 0).
    pub fn square_logits(
        &self,
        piece: usize,
        accumulator: &PredictorAccumulator,
        squares: &[usize],
        out: &mut [f32],
        scratch: &mut Scratch,
    ) {
        let first = &accumulator.values[self.offsets[1 + piece]..self.offsets[2 + piece]];
        self.stacks[1 + piece].outputs_at(first, squares, out, scratch);
    }

    /// P(destination square | piece type `piece` 0..6) for squares a1..h8.
    pub fn square_probabilities(
        &self,
        piece: usize,
        accumulator: &PredictorAccumulator,
        scratch: &mut Scratch,
    ) -> [f32; 64] {
        let first = &accumulator.values[self.offsets[1 + piece]..self.offsets[2 + piece]];
        let mut p = [0.0; 64];
        p.copy_from_slice(self.stacks[1 + piece].from_first(first, scratch));
        softmax(&mut p);
        p
    }
}
