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
//! A position's projections `F x` and `S x` are computed once ([`StudentCode`]): the
//! accumulators are the evaluation net's int16 ones, updated per move; their SCReLU goes
//! through the head's first layer on 8-bit integers ([`projection`]: `u8` inputs, `i8`
//! weights, AVX-512 VNNI where the CPU has it, with the portable fallback), the side to
//! move's row folded into the biases. A comparison then adds two projections per hidden
//! unit and runs the H-wide last layer in f32. The trainer keeps the feature transformer on
//! the engine's 1/255 grid, so the engine's codes are the float student's up to the
//! rounding of the head's first layer to 8 bits.

use deepchess_core::arch::{STUDENT_HEAD_STACK, student_code_width};
use deepchess_core::{FeatureBits, Model};

use super::{Accumulator, NetworkError, ValueNet};
use projection::Projection;

mod projection;

/// Most hidden units of a student head the engine loads.
pub const STUDENT_MAX_HIDDEN: usize = 64;

/// The student comparator: an evaluation net (its accumulators are the codes) and a head.
#[derive(Clone, Debug)]
pub struct Student {
    value: ValueNet,
    hidden: usize,
    /// The hidden width padded to a multiple of [`LANES`], `P`.
    padded: usize,
    /// The accumulator rows of the first layer: `[2N][2P]`, input `i`'s weights into the
    /// first part's hidden units, then into the second part's (zeros in the padding).
    projection: Projection,
    /// `[2P]` with White to move and with Black to move: the first layer's biases, then
    /// zeros (the biases go with the first part), plus the side-to-move row for Black.
    bias: [Vec<f32>; 2],
    /// `[P]`: the last layer's weights (zeros in the padding).
    out: Vec<f32>,
}

/// Hidden units a comparison handles at once (one 256-bit register); the head's hidden
/// units are padded with zero weights to a multiple of it.
const LANES: usize = 8;

/// A position's projections through the head's first layer: as the first position of a
/// pair (biases included) in the first `P` values, as the second in the next `P`, where
/// `P` is the head's hidden width padded to a multiple of [`LANES`] (zeros beyond).
#[derive(Clone, Debug, PartialEq)]
pub struct StudentCode {
    values: [f32; 2 * STUDENT_MAX_HIDDEN],
}

impl Default for StudentCode {
    /// All projections zero (a code to be written by [`Student::write_code`]).
    fn default() -> StudentCode {
        StudentCode { values: [0.0; 2 * STUDENT_MAX_HIDDEN] }
    }
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
        let padded = hidden.div_ceil(LANES) * LANES;
        let pad = |values: &[f32]| {
            let mut padded_values = values.to_vec();
            padded_values.resize(padded, 0.0);
            padded_values
        };
        // Row `i` of the first layer as [first part's P weights, second part's P weights].
        let row = |i: usize| {
            let (as_first, as_second) =
                (&first.weight[i * hidden..][..hidden], &first.weight[(code + i) * hidden..][..hidden]);
            [pad(as_first), pad(as_second)].concat()
        };
        let accumulator_rows: Vec<f32> = (0..2 * width).flat_map(row).collect();
        let projection = Projection::new(&accumulator_rows, 2 * width, 2 * padded);
        let white = [pad(first.bias), vec![0.0; padded]].concat();
        let black = white.iter().zip(row(2 * width)).map(|(b, w)| b + w).collect();
        Ok(Student { value, hidden, padded, projection, bias: [white, black], out: pad(last.weight) })
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
        let mut code = StudentCode::default();
        self.write_code(accumulator, &mut code);
        code
    }

    /// Writes the projections of the position whose accumulator is `accumulator` into
    /// `code` (in place: a search writes a leaf's code where the leaf lives).
    pub fn write_code(&self, accumulator: &Accumulator, code: &mut StudentCode) {
        let bias = &self.bias[usize::from(accumulator.features().black_to_move())];
        self.projection.forward(accumulator.values(), bias, &mut code.values[..2 * self.padded]);
    }

    /// The projections of a position computed from scratch.
    pub fn code_of(&self, features: &FeatureBits) -> StudentCode {
        self.code(&self.value.accumulator(features))
    }

    /// Logit that `a` is better for White than `b` (`−logit(b, a)`).
    /// [`LANES`] hidden units at a time, one partial sum per lane (the padding adds zeros);
    /// compiled for AVX2 where the CPU has it (the same operations in the same order, so
    /// the same result as the portable build).
    pub fn logit(&self, a: &StudentCode, b: &StudentCode) -> f32 {
        let (a, b) = (&a.values[..2 * self.padded], &b.values[..2 * self.padded]);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { logit_avx2(&self.out, a, b) };
        }
        logit_generic(&self.out, a, b)
    }

    /// Probability that `a` is better for White than `b`.
    pub fn compare(&self, a: &StudentCode, b: &StudentCode) -> f32 {
        1.0 / (1.0 + (-self.logit(a, b)).exp())
    }
}

/// [`Student::logit`] of the projections `a` and `b` (`2P` values each) with the last
/// layer's weights `out`.
#[inline(always)]
fn logit_generic(out: &[f32], a: &[f32], b: &[f32]) -> f32 {
    let (a_first, a_second) = a.split_at(out.len());
    let (b_first, b_second) = b.split_at(out.len());
    let mut sums = [0.0f32; LANES];
    for ((((w, af), as_), bf), bs) in
        chunks(out).zip(chunks(a_first)).zip(chunks(a_second)).zip(chunks(b_first)).zip(chunks(b_second))
    {
        for l in 0..LANES {
            let ab = (af[l] + bs[l]).clamp(0.0, 1.0);
            let ba = (bf[l] + as_[l]).clamp(0.0, 1.0);
            sums[l] += w[l] * (ab - ba);
        }
    }
    sums.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn logit_avx2(out: &[f32], a: &[f32], b: &[f32]) -> f32 {
    logit_generic(out, a, b)
}

/// `values` in groups of [`LANES`].
fn chunks(values: &[f32]) -> std::slice::ChunksExact<'_, f32> {
    values.chunks_exact(LANES)
}

#[cfg(test)]
mod tests;
