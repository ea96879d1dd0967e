//! The student comparator, a Siamese comparator built for search: the code of a position
//! is the evaluation net's cheap code, an int16 accumulator per perspective updated per
//! move ([`ValueNet`]'s), and a small head sees both codes.
//!
//! Architecture (trained by `deepchess train student`, see
//! [`deepchess_core::arch::STUDENT_HEAD_STACK`]): a code `x` is `[SCReLU(White's
//! accumulator), SCReLU(Black's accumulator), black to move]`; the head's first layer
//! `[2 (2N + 1), H]` splits into `F` (rows of the first position) and `S` (rows of the
//! second), and with `h(u) = Σ_j w_j · clamp(u_j, 0, 1)` the logit that `a` is better for
//! White than `b` is `h(b₀ + F a + S b) − h(b₀ + F b + S a)`: antisymmetric by construction.
//!
//! A position's projections `F x` and `S x` are computed once ([`StudentCode`]), in
//! integers: the head's first layer is quantised × `Q` as `i16` (per hidden unit, `Q` the
//! largest power of two from [`STUDENT_HEAD_QUANT`] up that keeps the unit's weights within
//! ±127) and each projection is
//! the evaluation net's SCReLU dot product kernel ([`kernels::screlu_dot`]), with its
//! run-time SIMD dispatch and portable fallback. A comparison then adds two projections
//! per hidden unit and runs the H-wide last layer in f32.

use deepchess_core::arch::{STUDENT_HEAD_QUANT, STUDENT_HEAD_STACK, VALUE_FT_QUANT, student_code_width};
use deepchess_core::{Model, SparseFeatures};

use super::value::{black_to_move, kernels};
use super::{Accumulator, NetworkError, ValueNet};

/// Most hidden units of a student head the engine loads.
pub const STUDENT_MAX_HIDDEN: usize = 64;

/// The student comparator: an evaluation net (its accumulators are the codes) and a head.
#[derive(Clone, Debug)]
pub struct Student {
    value: ValueNet,
    hidden: usize,
    /// `[2][H][2N]`: per part (first, second) and hidden unit, the weights of White's
    /// perspective and then Black's, quantised × that unit's `Q`.
    weight: Vec<i16>,
    /// `[2][H]`: `1 / (255² · Q)` of each part's hidden unit.
    scale: Vec<f32>,
    /// `[2][H]`: the black-to-move row of each part (f32).
    black_to_move: Vec<f32>,
    /// `[H]`: the first layer's biases.
    bias: Vec<f32>,
    /// `[H]`: the last layer's weights.
    out: Vec<f32>,
}

/// A position's projections through the head's first layer, as the first position of a
/// pair (biases included) and as the second.
#[derive(Clone, Debug, PartialEq)]
pub struct StudentCode {
    first: [f32; STUDENT_MAX_HIDDEN],
    second: [f32; STUDENT_MAX_HIDDEN],
}

impl Student {
    /// Reads the evaluation net (`ft`, `out`) and the head of a `student` model.
    pub fn from_model(model: &Model) -> Result<Student, NetworkError> {
        let invalid = |message: String| NetworkError::Invalid { kind: "student", message };
        let value = ValueNet::from_model(model)?;
        let width = value.accumulator_width();
        let layers = model
            .layers(STUDENT_HEAD_STACK)
            .ok_or_else(|| NetworkError::MissingStack { kind: "student", stack: STUDENT_HEAD_STACK.to_string() })?;
        let code = student_code_width(width);
        let [first, last] = layers.as_slice() else {
            return Err(invalid(format!("stack `{STUDENT_HEAD_STACK}` has {} layers, expected 2", layers.len())));
        };
        let hidden = first.outputs;
        if first.inputs != 2 * code || !(1..=STUDENT_MAX_HIDDEN).contains(&hidden) || last.outputs != 1 {
            return Err(invalid(format!(
                "head layers [{}, {}] and [{}, {}]; expected [{}, H] (H at most {STUDENT_MAX_HIDDEN}) and [H, 1]",
                first.inputs,
                first.outputs,
                last.inputs,
                last.outputs,
                2 * code
            )));
        }
        if let Some(bad) = first.weight.iter().chain(first.bias).chain(last.weight).find(|w| !w.is_finite()) {
            return Err(invalid(format!("a head weight is {bad}")));
        }
        let at = |row: usize, j: usize| first.weight[row * hidden + j];
        let mut weight = Vec::with_capacity(2 * hidden * 2 * width);
        let (mut black_to_move, mut scale) = (Vec::with_capacity(2 * hidden), Vec::with_capacity(2 * hidden));
        for part in 0..2 {
            for j in 0..hidden {
                let rows = (0..2 * width).map(|i| at(part * code + i, j));
                let largest = rows.clone().fold(0.0f32, |m, w| m.max(w.abs()));
                if largest * STUDENT_HEAD_QUANT as f32 > 127.0 {
                    return Err(invalid(format!(
                        "a head weight is {largest}, outside ±{} (quantised × {STUDENT_HEAD_QUANT} to i16)",
                        127.0 / STUDENT_HEAD_QUANT as f32
                    )));
                }
                let mut quant = STUDENT_HEAD_QUANT;
                while quant < 1 << 14 && largest * (2 * quant) as f32 <= 127.0 {
                    quant *= 2;
                }
                weight.extend(rows.map(|w| (w * quant as f32).round() as i16));
                scale.push(1.0 / (VALUE_FT_QUANT as f32 * VALUE_FT_QUANT as f32 * quant as f32));
            }
            black_to_move.extend((0..hidden).map(|j| at(part * code + 2 * width, j)));
        }
        Ok(Student {
            value,
            hidden,
            weight,
            scale,
            black_to_move,
            bias: first.bias.to_vec(),
            out: last.weight.to_vec(),
        })
    }

    /// The evaluation net whose accumulators are the codes (its output gives scores).
    pub fn value(&self) -> &ValueNet {
        &self.value
    }

    /// Hidden width H of the head.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The projections of the position whose accumulator is `accumulator`.
    pub fn code(&self, accumulator: &Accumulator) -> StudentCode {
        let width = self.value.accumulator_width();
        let (white, black) = accumulator.perspectives();
        let black_moves = black_to_move(accumulator.features());
        let mut code = StudentCode { first: [0.0; STUDENT_MAX_HIDDEN], second: [0.0; STUDENT_MAX_HIDDEN] };
        for (part, out) in [&mut code.first, &mut code.second].into_iter().enumerate() {
            for (j, o) in out[..self.hidden].iter_mut().enumerate() {
                let row = &self.weight[(part * self.hidden + j) * 2 * width..][..2 * width];
                let unit = part * self.hidden + j;
                let sum = kernels::screlu_dot(white, &row[..width]) + kernels::screlu_dot(black, &row[width..]);
                let stm = if black_moves { self.black_to_move[unit] } else { 0.0 };
                let bias = if part == 0 { self.bias[j] } else { 0.0 };
                *o = sum as f32 * self.scale[unit] + stm + bias;
            }
        }
        code
    }

    /// The projections of a position computed from scratch.
    pub fn code_of(&self, features: &SparseFeatures) -> StudentCode {
        self.code(&self.value.accumulator(features))
    }

    /// Logit that `a` is better for White than `b` (`−logit(b, a)`).
    pub fn logit(&self, a: &StudentCode, b: &StudentCode) -> f32 {
        let h = self.hidden;
        let mut sum = 0.0;
        for j in 0..h {
            let ab = (a.first[j] + b.second[j]).clamp(0.0, 1.0);
            let ba = (b.first[j] + a.second[j]).clamp(0.0, 1.0);
            sum += self.out[j] * (ab - ba);
        }
        sum
    }

    /// Probability that `a` is better for White than `b`.
    pub fn compare(&self, a: &StudentCode, b: &StudentCode) -> f32 {
        1.0 / (1.0 + (-self.logit(a, b)).exp())
    }
}

#[cfg(test)]
mod tests;
