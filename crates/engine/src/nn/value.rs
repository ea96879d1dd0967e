//! The evaluation net with an NNUE-style accumulator: the first layer's pre-activation
//! is kept per search ply and updated from the few features a move changes.

use deepchess_core::arch::VALUE_CP_PER_LOGIT;
use deepchess_core::features::MAX_ACTIVE;
use deepchess_core::{Model, SparseFeatures};

use super::kernels::update_rows;
use super::{NetworkError, Scratch, Stack};

/// Evaluation net: sparse features → logit of White's expected score.
#[derive(Clone, Debug)]
pub struct ValueNet {
    stack: Stack,
}

/// The first layer's pre-activation for one position, with the features it was built from.
#[derive(Clone, Debug)]
pub struct Accumulator {
    values: Vec<f32>,
    features: SparseFeatures,
}

impl Accumulator {
    /// The features this accumulator holds.
    pub fn features(&self) -> &SparseFeatures {
        &self.features
    }
}

impl ValueNet {
    /// Reads stack `value` of `model`.
    pub fn from_model(model: &Model) -> Result<ValueNet, NetworkError> {
        Ok(ValueNet { stack: Stack::from_model(model, "value")? })
    }

    /// Width of the accumulator (the first hidden layer).
    pub fn accumulator_width(&self) -> usize {
        self.stack.first_width()
    }

    /// An accumulator computed from scratch.
    pub fn accumulator(&self, features: &SparseFeatures) -> Accumulator {
        let mut values = vec![0.0; self.accumulator_width()];
        self.stack.first_layer_sparse(features.as_slice(), &mut values);
        Accumulator { values, features: *features }
    }

    /// Makes `child` the accumulator of `features` by updating `parent`'s with the
    /// features that differ (added and removed rows of the first layer).
    pub fn update(&self, parent: &Accumulator, features: &SparseFeatures, child: &mut Accumulator) {
        let mut added = [0u16; MAX_ACTIVE];
        let mut removed = [0u16; MAX_ACTIVE];
        let (n_added, n_removed) = feature_diff(&parent.features, features, &mut added, &mut removed);
        child.values.clear();
        child.values.extend_from_slice(&parent.values);
        update_rows(&mut child.values, &self.stack.layers[0].weight, &added[..n_added], &removed[..n_removed]);
        child.features = *features;
    }

    /// White's score logit from an accumulator.
    pub fn logit(&self, accumulator: &Accumulator, scratch: &mut Scratch) -> f32 {
        self.stack.from_first(&accumulator.values, scratch)[0]
    }

    /// White's score logit computed from scratch.
    pub fn evaluate(&self, features: &SparseFeatures, scratch: &mut Scratch) -> f32 {
        self.stack.forward_sparse(features.as_slice(), scratch)[0]
    }

}

/// Centipawns (White's view) of a value-net logit.
pub fn logit_to_cp(logit: f32) -> f32 {
    logit * VALUE_CP_PER_LOGIT
}

/// Writes the features active in `new` but not `old` to `added` and those in `old` but
/// not `new` to `removed`, returning their counts; both lists are sorted, so one merge
/// pass finds them.
pub fn feature_diff(
    old: &SparseFeatures,
    new: &SparseFeatures,
    added: &mut [u16; MAX_ACTIVE],
    removed: &mut [u16; MAX_ACTIVE],
) -> (usize, usize) {
    let (a, b) = (old.as_slice(), new.as_slice());
    let (mut n_added, mut n_removed) = (0, 0);
    let (mut i, mut j) = (0, 0);
    loop {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                removed[n_removed] = *x;
                n_removed += 1;
                i += 1;
            }
            (Some(x), None) => {
                removed[n_removed] = *x;
                n_removed += 1;
                i += 1;
            }
            (_, Some(y)) => {
                added[n_added] = *y;
                n_added += 1;
                j += 1;
            }
            (None, None) => return (n_added, n_removed),
        }
    }
}
