//! The Siamese comparator: a Pos2Vec encoder turns each position into a code once, and
//! a head compares two codes.
//!
//! The head's first layer sees the concatenation `[first, second]`, so its
//! pre-activation splits into a part from the first code and a part from the second.
//! [`Code`] carries both parts, computed once per position, and a comparison then only
//! adds them and runs the remaining layers.

use deepchess_core::arch::COMPARATOR_FIRST_BETTER;
use deepchess_core::{Model, SparseFeatures};

use super::kernels::accumulate_rows;
use super::{NetworkError, Precision, Scratch, Stack};

/// Encoder + head.
#[derive(Clone, Debug)]
pub struct Comparator {
    encoder: Stack,
    head: Stack,
}

/// A position's Pos2Vec code and its two projections through the head's first layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Code {
    /// The Pos2Vec code.
    pub code: Vec<f32>,
    as_first: Vec<f32>,
    as_second: Vec<f32>,
}

impl Comparator {
    /// Reads stacks `encoder` and `head` of `model`, keeping their dense layers in
    /// `precision` (the engine uses bfloat16: the comparator is bound by memory traffic).
    pub fn from_model(model: &Model, precision: Precision) -> Result<Comparator, NetworkError> {
        Ok(Comparator {
            encoder: Stack::with_precision(model, "encoder", precision)?,
            head: Stack::with_precision(model, "head", precision)?,
        })
    }

    /// Width of a Pos2Vec code.
    pub fn code_width(&self) -> usize {
        self.encoder.outputs()
    }

    /// The Pos2Vec code of a position.
    pub fn encode(&self, features: &SparseFeatures, scratch: &mut Scratch) -> Vec<f32> {
        self.encoder.forward_sparse(features.as_slice(), scratch).to_vec()
    }

    /// The code of a position with its head projections, ready for comparisons.
    pub fn code(&self, features: &SparseFeatures, scratch: &mut Scratch) -> Code {
        self.project(self.encode(features, scratch))
    }

    /// Adds the head projections to a code.
    pub fn project(&self, code: Vec<f32>) -> Code {
        let n = code.len();
        let first = &self.head.layers[0];
        let (rows, xs): (Vec<u16>, Vec<f32>) =
            code.iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(i, &x)| (i as u16, x)).unzip();
        let mut as_first = vec![0.0; first.outputs];
        accumulate_rows(&mut as_first, first.rows(0..n), &rows, &xs);
        let mut as_second = vec![0.0; first.outputs];
        accumulate_rows(&mut as_second, first.rows(n..2 * n), &rows, &xs);
        Code { code, as_first, as_second }
    }

    /// Probability that `a` is better for White than `b`.
    pub fn compare(&self, a: &Code, b: &Code, scratch: &mut Scratch) -> f32 {
        let bias = &self.head.layers[0].bias;
        let logits = self.head.forward_with(scratch, |pre| {
            for (((p, &bias), &x), &y) in pre.iter_mut().zip(bias).zip(&a.as_first).zip(&b.as_second) {
                *p = bias + x + y;
            }
        });
        first_better(logits)
    }

    /// Probability that the position with code `a` is better for White than the one with
    /// code `b`, running the whole head on the concatenated codes (no cached projections).
    pub fn compare_codes(&self, a: &[f32], b: &[f32], scratch: &mut Scratch) -> f32 {
        let mut pair = Vec::with_capacity(a.len() + b.len());
        pair.extend_from_slice(a);
        pair.extend_from_slice(b);
        first_better(self.head.forward_dense(&pair, scratch))
    }
}

/// Softmax probability of output [`COMPARATOR_FIRST_BETTER`] from the head's two logits.
fn first_better(logits: &[f32]) -> f32 {
    let other = 1 - COMPARATOR_FIRST_BETTER;
    1.0 / (1.0 + (logits[other] - logits[COMPARATOR_FIRST_BETTER]).exp())
}
