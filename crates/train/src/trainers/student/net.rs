//! The student comparator's forward pass and gradients, by hand on flat `f32` buffers
//! (see `deepchess_engine`'s `Student` for the integer inference).
//!
//! A code `x` is `[SCReLU(White's accumulator), SCReLU(Black's accumulator), black to
//! move]` of the evaluation net's feature transformer `ft` (kept as it is: the code is the
//! evaluation net's). The head's first layer `[2C, H]` splits into `F` (rows `0..C`, the
//! first position) and `S` (rows `C..2C`, the second); with `h(u) = Σ_j w_j · clamp(u_j,
//! 0, 1)` the logit that `a` is better for White than `b` is `z = h(b₀ + F a + S b) −
//! h(b₀ + F b + S a)`. The loss is the binary cross-entropy against a soft target `p`.

use std::collections::BTreeMap;

use deepchess_core::arch::{STUDENT_HEAD_STACK, VALUE_FT_QUANT, VALUE_FT_STACK, student_code_width};
use deepchess_core::features::{PERSPECTIVE_FEATURES, SIDE_TO_MOVE, perspective_feature};
use deepchess_core::{Activation, SparseFeatures, StackSpec};
use rayon::prelude::*;
use shakmaty::Color;

use crate::nn::params::Params;

/// Name of the head's first weights `[2C, H]`.
const W0: &str = "head.0.weight";
/// Name of the head's first biases `[H]`.
const B0: &str = "head.0.bias";
/// Name of the head's last weights `[H, 1]`.
const W1: &str = "head.1.weight";

/// Pairs per parallel task.
const PAIRS_PER_TASK: usize = 64;

/// `params` (an evaluation net's `ft` and `out`) with the feature transformer rounded to
/// the engine's 16-bit grid (multiples of 1/255: the float student's codes are then the
/// engine's) and a fresh head of `hidden` units: the first layer uniform in ±1/√(2C), the
/// last in ±1/√H.
pub fn with_head(mut params: Params, hidden: usize, seed: u64) -> Params {
    for name in ["ft.0.weight", "ft.0.bias"] {
        let grid = VALUE_FT_QUANT as f32;
        let values = params.values.get_mut(name).expect("an evaluation net has a feature transformer");
        values.iter_mut().for_each(|v| *v = (*v * grid).round() / grid);
    }
    let code = student_code_width(params.stack(VALUE_FT_STACK).output());
    let head = StackSpec::new(STUDENT_HEAD_STACK, &[2 * code, hidden, 1], Activation::ClippedRelu);
    params.extend(Params::init(vec![head], seed));
    params
}

/// The code of a position (its 773 encoding) under the feature transformer of `params`.
pub fn code(params: &Params, features: &SparseFeatures) -> Vec<f32> {
    let (weight, bias) = (params.get("ft.0.weight"), params.get("ft.0.bias"));
    let n = bias.len();
    let mut code = Vec::with_capacity(student_code_width(n));
    let all = features.as_slice();
    for side in [Color::White, Color::Black] {
        let mut acc = bias.to_vec();
        for &f in all.iter().filter(|&&f| usize::from(f) < PERSPECTIVE_FEATURES) {
            let row = &weight[usize::from(perspective_feature(f, side)) * n..][..n];
            acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
        }
        code.extend(acc.iter().map(|x| x.clamp(0.0, 1.0).powi(2)));
    }
    code.push(if all.contains(&(SIDE_TO_MOVE as u16)) { 1.0 } else { 0.0 });
    code
}

/// The head's tensors, borrowed.
struct Head<'a> {
    w0: &'a [f32],
    b0: &'a [f32],
    w1: &'a [f32],
    hidden: usize,
    code: usize,
}

impl Head<'_> {
    fn of(params: &Params) -> Head<'_> {
        let (w0, b0, w1) = (params.get(W0), params.get(B0), params.get(W1));
        Head { w0, b0, w1, hidden: b0.len(), code: w0.len() / b0.len() / 2 }
    }

    /// Pre-activations `b₀ + F x + S y`.
    fn pre(&self, x: &[f32], y: &[f32]) -> Vec<f32> {
        let h = self.hidden;
        let mut u = self.b0.to_vec();
        for (part, input) in [x, y].into_iter().enumerate() {
            for (i, &v) in input.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                let row = &self.w0[(part * self.code + i) * h..][..h];
                u.iter_mut().zip(row).for_each(|(u, w)| *u += v * w);
            }
        }
        u
    }

    /// `h(u)`.
    fn out(&self, u: &[f32]) -> f32 {
        u.iter().zip(self.w1).map(|(u, w)| w * u.clamp(0.0, 1.0)).sum()
    }
}

/// Logit that the position with code `a` is better for White than the one with code `b`.
pub fn logit(params: &Params, a: &[f32], b: &[f32]) -> f32 {
    let head = Head::of(params);
    head.out(&head.pre(a, b)) - head.out(&head.pre(b, a))
}

/// Binary cross-entropy of logit `z` against target `p`.
pub fn bce(z: f32, p: f32) -> f64 {
    // log σ(z) = −softplus(−z), stable for either sign
    let softplus = |x: f32| f64::from(x.max(0.0) + (-x.abs()).exp().ln_1p());
    f64::from(p) * softplus(-z) + f64::from(1.0 - p) * softplus(z)
}

/// One pair of codes with its soft target (probability that `a` is better for White).
pub struct CodedPair {
    /// Code of the first position.
    pub a: Vec<f32>,
    /// Code of the second position.
    pub b: Vec<f32>,
    /// Target probability.
    pub target: f32,
}

/// Mean loss, the pairs whose sign the logit gets right (targets of exactly ½ count for
/// neither), and the head's gradients.
pub fn loss_and_gradients(params: &Params, pairs: &[CodedPair]) -> (f64, usize, BTreeMap<String, Vec<f32>>) {
    let head = Head::of(params);
    let (h, c) = (head.hidden, head.code);
    let zero = || (0.0f64, 0usize, vec![0.0f32; head.w0.len()], vec![0.0f32; h], vec![0.0f32; h]);
    let partials: Vec<_> = pairs
        .par_chunks(PAIRS_PER_TASK)
        .map(|chunk| {
            let (mut loss, mut correct, mut d_w0, mut d_b0, mut d_w1) = zero();
            for pair in chunk {
                let (u_ab, u_ba) = (head.pre(&pair.a, &pair.b), head.pre(&pair.b, &pair.a));
                let z = head.out(&u_ab) - head.out(&u_ba);
                loss += bce(z, pair.target);
                correct += usize::from(pair.target != 0.5 && (z > 0.0) == (pair.target > 0.5));
                let g = 1.0 / (1.0 + (-z).exp()) - pair.target;
                let active = |u: f32| if u > 0.0 && u < 1.0 { 1.0 } else { 0.0 };
                let d_ab: Vec<f32> = (0..h).map(|j| g * head.w1[j] * active(u_ab[j])).collect();
                let d_ba: Vec<f32> = (0..h).map(|j| -g * head.w1[j] * active(u_ba[j])).collect();
                for j in 0..h {
                    d_w1[j] += g * (u_ab[j].clamp(0.0, 1.0) - u_ba[j].clamp(0.0, 1.0));
                    d_b0[j] += d_ab[j] + d_ba[j];
                }
                // F sees a in u_ab and b in u_ba; S sees b in u_ab and a in u_ba
                for (part, (x, y)) in [(&pair.a, &pair.b), (&pair.b, &pair.a)].into_iter().enumerate() {
                    for i in 0..c {
                        let (vx, vy) = (x[i], y[i]);
                        if vx == 0.0 && vy == 0.0 {
                            continue;
                        }
                        let row = &mut d_w0[(part * c + i) * h..][..h];
                        for j in 0..h {
                            row[j] += vx * d_ab[j] + vy * d_ba[j];
                        }
                    }
                }
            }
            (loss, correct, d_w0, d_b0, d_w1)
        })
        .collect();
    let (mut loss, mut correct, mut d_w0, mut d_b0, mut d_w1) = zero();
    for (l, k, w0, b0, w1) in partials {
        loss += l;
        correct += k;
        d_w0.iter_mut().zip(&w0).for_each(|(a, b)| *a += b);
        d_b0.iter_mut().zip(&b0).for_each(|(a, b)| *a += b);
        d_w1.iter_mut().zip(&w1).for_each(|(a, b)| *a += b);
    }
    let n = pairs.len().max(1) as f32;
    for grad in [&mut d_w0, &mut d_b0, &mut d_w1] {
        grad.iter_mut().for_each(|g| *g /= n);
    }
    let grads = BTreeMap::from([(W0.to_string(), d_w0), (B0.to_string(), d_b0), (W1.to_string(), d_w1)]);
    (loss / f64::from(n), correct, grads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::adam::Adam;
    use crate::nn::perspective;
    use shakmaty::{Chess, Position};

    /// Codes of the positions along a fixed line of play, with their material balance.
    fn toy_codes(params: &Params) -> Vec<(Vec<f32>, f32)> {
        let mut position = Chess::default();
        let mut codes = Vec::new();
        for k in 0..40 {
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            // captures first, so that material changes along the line
            let m = moves.iter().find(|m| m.is_capture()).copied().unwrap_or(moves[(k * 7) % moves.len()]);
            position.play_unchecked(m);
            let material = position.board().material();
            let value = |side: &shakmaty::ByRole<u8>| {
                f32::from(side.pawn)
                    + 3.0 * f32::from(side.knight + side.bishop)
                    + 5.0 * f32::from(side.rook)
                    + 9.0 * f32::from(side.queen)
            };
            codes.push((
                code(params, &SparseFeatures::from_position(&position)),
                value(&material.white) - value(&material.black),
            ));
        }
        codes
    }

    fn toy_pairs(params: &Params) -> Vec<CodedPair> {
        let codes = toy_codes(params);
        let mut pairs = Vec::new();
        for (i, (a, ma)) in codes.iter().enumerate() {
            for (b, mb) in codes.iter().skip(i + 1).step_by(3) {
                let target = 1.0 / (1.0 + (-(ma - mb)).exp());
                pairs.push(CodedPair { a: a.clone(), b: b.clone(), target });
            }
        }
        pairs
    }

    #[test]
    fn training_loss_falls_on_a_toy_set() {
        let mut params = with_head(perspective::init(32, 1, 3), 8, 4);
        let pairs = toy_pairs(&params);
        let (first, _, _) = loss_and_gradients(&params, &pairs);
        let mut adam = Adam::default();
        for _ in 0..200 {
            let (_, _, grads) = loss_and_gradients(&params, &pairs);
            adam.update(&mut params, &grads, 3e-3);
        }
        let (last, _, _) = loss_and_gradients(&params, &pairs);
        assert!(last < 0.8 * first, "loss {first} -> {last}");
    }

    #[test]
    fn gradients_match_finite_differences_and_logits_are_antisymmetric() {
        let params = with_head(perspective::init(32, 1, 5), 8, 6);
        let pairs: Vec<CodedPair> = toy_pairs(&params).into_iter().take(12).collect();
        for pair in &pairs {
            let (ab, ba) = (logit(&params, &pair.a, &pair.b), logit(&params, &pair.b, &pair.a));
            assert!((ab + ba).abs() < 1e-5, "{ab} {ba}");
        }
        let (_, _, grads) = loss_and_gradients(&params, &pairs);
        let loss =
            |p: &Params| pairs.iter().map(|c| bce(logit(p, &c.a, &c.b), c.target)).sum::<f64>() / pairs.len() as f64;
        for (name, index) in [(W0, 3), (W0, 8 * 40 + 5), (B0, 2), (W1, 7)] {
            let eps = 1e-2;
            let mut plus = params.clone();
            plus.values.get_mut(name).unwrap()[index] += eps;
            let mut minus = params.clone();
            minus.values.get_mut(name).unwrap()[index] -= eps;
            let numeric = (loss(&plus) - loss(&minus)) / (2.0 * f64::from(eps));
            let analytic = f64::from(grads[name][index]);
            assert!(
                (numeric - analytic).abs() < 1e-3 + 0.05 * numeric.abs(),
                "{name}[{index}]: {numeric} vs {analytic}"
            );
        }
    }
}
