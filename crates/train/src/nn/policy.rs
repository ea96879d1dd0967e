//! The policy net's forward pass and gradients, by hand on flat `f32` buffers.
//!
//! The net (see `deepchess_engine`'s `PolicyNet` for the inference): a feature transformer
//! `ft` `[768, H]` over the side to move's perspective features, SCReLU
//! (`clamp(x, 0, 1)²`), and a linear layer `moves` `[H, 4096]` giving one logit per move
//! index ([`deepchess_core::move_label::policy_index`]). A position's distribution is the
//! softmax of its legal moves' logits only (the illegal indices are never scored), and the
//! loss is the cross-entropy of the move played. As for the evaluation net, a position has
//! ~30 active inputs and ~35 legal moves, so only those rows are touched, in parallel over
//! the batch.

use std::collections::BTreeMap;

use deepchess_core::arch::{POLICY_FT_STACK, POLICY_MOVES, POLICY_MOVES_STACK};
use deepchess_core::features::PERSPECTIVE_FEATURES;
use rayon::prelude::*;

use super::params::Params;

/// Name of the feature transformer's weights `[768, H]`.
pub const FT_WEIGHT: &str = "ft.0.weight";
/// Name of the feature transformer's biases `[H]`.
pub const FT_BIAS: &str = "ft.0.bias";
/// Name of the move layer's weights `[H, 4096]`.
pub const MOVES_WEIGHT: &str = "moves.0.weight";
/// Name of the move layer's biases `[4096]`.
pub const MOVES_BIAS: &str = "moves.0.bias";

/// Positions as the side to move sees them: active features, legal move indices and the
/// played move's place among them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyBatch {
    /// Active features of all rows, one row after the other.
    pub features: Vec<u16>,
    /// Row `r`'s features are `features[feature_offsets[r]..feature_offsets[r + 1]]`.
    pub feature_offsets: Vec<usize>,
    /// Distinct legal move indices of all rows, one row after the other.
    pub moves: Vec<u16>,
    /// Row `r`'s moves are `moves[move_offsets[r]..move_offsets[r + 1]]`.
    pub move_offsets: Vec<usize>,
    /// Where the played move is among row `r`'s moves.
    pub targets: Vec<u32>,
}

impl PolicyBatch {
    /// An empty batch.
    pub fn new() -> PolicyBatch {
        PolicyBatch { feature_offsets: vec![0], move_offsets: vec![0], ..PolicyBatch::default() }
    }

    /// Appends a row; `target` indexes `moves`.
    pub fn push(&mut self, features: &[u16], moves: &[u16], target: usize) {
        debug_assert!(target < moves.len());
        self.features.extend_from_slice(features);
        self.feature_offsets.push(self.features.len());
        self.moves.extend_from_slice(moves);
        self.move_offsets.push(self.moves.len());
        self.targets.push(target as u32);
    }

    /// Appends every row of `other`.
    pub fn append(&mut self, other: &PolicyBatch) {
        for r in 0..other.len() {
            self.push(other.row_features(r), other.row_moves(r), other.targets[r] as usize);
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Active features of row `r`.
    pub fn row_features(&self, r: usize) -> &[u16] {
        &self.features[self.feature_offsets[r]..self.feature_offsets[r + 1]]
    }

    /// Legal move indices of row `r`.
    pub fn row_moves(&self, r: usize) -> &[u16] {
        &self.moves[self.move_offsets[r]..self.move_offsets[r + 1]]
    }
}

/// Fresh parameters of width `width` (uniform in ±1/√fan-in, as [`Params::init`]).
pub fn init(width: usize, seed: u64) -> Params {
    let stacks = deepchess_core::ModelKind::Policy
        .default_stacks()
        .into_iter()
        .map(|mut s| {
            if s.name == POLICY_FT_STACK {
                s.layers = vec![PERSPECTIVE_FEATURES, width];
            } else if s.name == POLICY_MOVES_STACK {
                s.layers = vec![width, POLICY_MOVES];
            }
            s
        })
        .collect();
    Params::init(stacks, seed)
}

/// Width H of the feature transformer of `params`.
pub fn width(params: &Params) -> usize {
    params.get(FT_BIAS).len()
}

#[inline]
fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

/// The move layer move by move: move `m`'s weights are `rows[m · H..(m + 1) · H]`.
fn move_major(params: &Params, h: usize) -> Vec<f32> {
    let w = params.get(MOVES_WEIGHT);
    let mut out = vec![0.0; w.len()];
    for j in 0..h {
        for m in 0..POLICY_MOVES {
            out[m * h + j] = w[j * POLICY_MOVES + m];
        }
    }
    out
}

/// The net's weights laid out for the passes.
struct Net<'a> {
    h: usize,
    ft_weight: &'a [f32],
    ft_bias: &'a [f32],
    rows: Vec<f32>,
    bias: &'a [f32],
}

impl<'a> Net<'a> {
    fn of(params: &'a Params) -> Net<'a> {
        let h = width(params);
        Net {
            h,
            ft_weight: params.get(FT_WEIGHT),
            ft_bias: params.get(FT_BIAS),
            rows: move_major(params, h),
            bias: params.get(MOVES_BIAS),
        }
    }

    /// The accumulator of `features` in `acc` and its SCReLU in `hidden`.
    fn hidden(&self, features: &[u16], acc: &mut [f32], hidden: &mut [f32]) {
        acc.copy_from_slice(self.ft_bias);
        for &f in features {
            let row = &self.ft_weight[usize::from(f) * self.h..][..self.h];
            acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
        }
        hidden.iter_mut().zip(acc.iter()).for_each(|(x, &a)| *x = screlu(a));
    }

    /// The softmax over `moves` of their logits on `hidden`, in `p`.
    fn probabilities(&self, hidden: &[f32], moves: &[u16], p: &mut Vec<f32>) {
        p.clear();
        p.extend(moves.iter().map(|&m| {
            let m = usize::from(m);
            self.bias[m] + self.rows[m * self.h..][..self.h].iter().zip(hidden).map(|(w, x)| w * x).sum::<f32>()
        }));
        let top = p.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut total = 0.0;
        for x in p.iter_mut() {
            *x = (*x - top).exp();
            total += *x;
        }
        p.iter_mut().for_each(|x| *x /= total);
    }
}

/// Each row's probabilities over its legal moves (in the order of its moves).
pub fn probabilities(params: &Params, batch: &PolicyBatch) -> Vec<Vec<f32>> {
    let net = Net::of(params);
    (0..batch.len())
        .into_par_iter()
        .map_init(
            || (vec![0.0; net.h], vec![0.0; net.h]),
            |(acc, hidden), r| {
                net.hidden(batch.row_features(r), acc, hidden);
                let mut p = Vec::new();
                net.probabilities(hidden, batch.row_moves(r), &mut p);
                p
            },
        )
        .collect()
}

/// Summed loss, correct top-1 predictions and gradients of one task's rows (the move
/// layer's move by move, as [`Net`]).
struct Partial {
    loss: f64,
    correct: usize,
    ft_weight: Vec<f32>,
    ft_bias: Vec<f32>,
    rows: Vec<f32>,
    bias: Vec<f32>,
}

impl Partial {
    fn new(h: usize) -> Partial {
        Partial {
            loss: 0.0,
            correct: 0,
            ft_weight: vec![0.0; PERSPECTIVE_FEATURES * h],
            ft_bias: vec![0.0; h],
            rows: vec![0.0; POLICY_MOVES * h],
            bias: vec![0.0; POLICY_MOVES],
        }
    }

    fn merge(mut self, other: Partial) -> Partial {
        self.loss += other.loss;
        self.correct += other.correct;
        add(&mut self.ft_weight, &other.ft_weight);
        add(&mut self.ft_bias, &other.ft_bias);
        add(&mut self.rows, &other.rows);
        add(&mut self.bias, &other.bias);
        self
    }
}

fn add(a: &mut [f32], b: &[f32]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// Rows per parallel task of [`loss_and_gradients`].
const ROWS_PER_TASK: usize = 1024;

/// Mean cross-entropy of the played moves over `batch`, the count of rows whose played
/// move has the highest probability, and the gradients of the mean loss by tensor name,
/// ready for Adam.
pub fn loss_and_gradients(params: &Params, batch: &PolicyBatch) -> (f64, usize, BTreeMap<String, Vec<f32>>) {
    let net = Net::of(params);
    let h = net.h;
    let rows: Vec<usize> = (0..batch.len()).collect();
    let total = rows
        .par_chunks(ROWS_PER_TASK)
        .map(|chunk| {
            let mut part = Partial::new(h);
            let (mut acc, mut hidden, mut d_hidden) = (vec![0.0f32; h], vec![0.0f32; h], vec![0.0f32; h]);
            let mut p = Vec::new();
            for &r in chunk {
                let (features, moves, target) = (batch.row_features(r), batch.row_moves(r), batch.targets[r] as usize);
                net.hidden(features, &mut acc, &mut hidden);
                net.probabilities(&hidden, moves, &mut p);
                part.loss -= f64::from(p[target].max(1e-30).ln());
                part.correct += usize::from(p.iter().enumerate().all(|(k, &q)| k == target || q < p[target]));
                d_hidden.iter_mut().for_each(|d| *d = 0.0);
                for (k, &m) in moves.iter().enumerate() {
                    let m = usize::from(m);
                    let g = p[k] - if k == target { 1.0 } else { 0.0 };
                    part.bias[m] += g;
                    let (w, dw) = (&net.rows[m * h..][..h], &mut part.rows[m * h..][..h]);
                    for j in 0..h {
                        dw[j] += g * hidden[j];
                        d_hidden[j] += g * w[j];
                    }
                }
                for (d, &a) in d_hidden.iter_mut().zip(&acc) {
                    *d *= if a > 0.0 && a < 1.0 { 2.0 * a } else { 0.0 };
                }
                add(&mut part.ft_bias, &d_hidden);
                for &f in features {
                    add(&mut part.ft_weight[usize::from(f) * h..][..h], &d_hidden);
                }
            }
            part
        })
        // collected in order and summed in order: the same batch always gives the same
        // gradients, whatever threads ran which rows
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::new(h), Partial::merge);
    let scale = 1.0 / batch.len().max(1) as f32;
    let scaled = |v: Vec<f32>| v.into_iter().map(|x| x * scale).collect::<Vec<f32>>();
    // move-major back to the tensor's [H, 4096]
    let mut moves_weight = vec![0.0; h * POLICY_MOVES];
    for m in 0..POLICY_MOVES {
        for j in 0..h {
            moves_weight[j * POLICY_MOVES + m] = total.rows[m * h + j];
        }
    }
    let grads = BTreeMap::from([
        (FT_WEIGHT.to_string(), scaled(total.ft_weight)),
        (FT_BIAS.to_string(), scaled(total.ft_bias)),
        (MOVES_WEIGHT.to_string(), scaled(moves_weight)),
        (MOVES_BIAS.to_string(), scaled(total.bias)),
    ]);
    (total.loss / batch.len().max(1) as f64, total.correct, grads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three small rows: features below 768, distinct move indices below 4096.
    fn sample() -> PolicyBatch {
        let mut batch = PolicyBatch::new();
        batch.push(&[5, 70, 300, 700], &[12, 800, 4000], 1);
        batch.push(&[6, 71, 420], &[12, 13, 14, 15], 0);
        batch.push(&[767, 0], &[4095, 1], 1);
        batch
    }

    /// Fresh parameters with larger weights, so that SCReLU is neither all zero nor flat.
    fn lively(width: usize, seed: u64) -> Params {
        let mut params = init(width, seed);
        for v in params.values.values_mut() {
            v.iter_mut().for_each(|x| *x *= 8.0);
        }
        params
    }

    #[test]
    fn gradients_match_finite_differences() {
        let params = lively(16, 3);
        let batch = sample();
        let (_, _, grads) = loss_and_gradients(&params, &batch);
        let loss = |p: &Params| loss_and_gradients(p, &batch).0;
        let at = [
            (FT_WEIGHT, 5 * 16 + 3),
            (FT_WEIGHT, 420 * 16 + 9),
            (FT_BIAS, 2),
            (MOVES_WEIGHT, 4 * POLICY_MOVES + 800),
            (MOVES_WEIGHT, 7 * POLICY_MOVES + 13),
            (MOVES_BIAS, 12),
            (MOVES_BIAS, 4095),
        ];
        let mut nonzero = 0;
        for (name, index) in at {
            let eps = 1e-3f32;
            let (mut plus, mut minus) = (params.clone(), params.clone());
            plus.values.get_mut(name).unwrap()[index] += eps;
            minus.values.get_mut(name).unwrap()[index] -= eps;
            let numeric = (loss(&plus) - loss(&minus)) / (2.0 * f64::from(eps));
            let analytic = f64::from(grads[name][index]);
            assert!(
                (numeric - analytic).abs() <= 2e-3 * (1.0 + numeric.abs()),
                "{name}[{index}]: {analytic} vs {numeric}"
            );
            nonzero += usize::from(analytic != 0.0);
        }
        assert!(nonzero >= 5, "most checked gradients should be non-zero: {nonzero}");
        assert_eq!(grads[MOVES_BIAS][2000], 0.0, "a move no row has gets no gradient");
    }

    #[test]
    fn probabilities_agree_with_the_loss_and_sum_to_one() {
        let params = lively(16, 5);
        let batch = sample();
        let p = probabilities(&params, &batch);
        for row in &p {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        let expected = -(0..batch.len()).map(|r| f64::from(p[r][batch.targets[r] as usize].ln())).sum::<f64>()
            / batch.len() as f64;
        let (loss, correct, _) = loss_and_gradients(&params, &batch);
        assert!((loss - expected).abs() < 1e-5, "{loss} against {expected}");
        let top1 = (0..batch.len())
            .filter(|&r| {
                let t = batch.targets[r] as usize;
                p[r].iter().enumerate().all(|(k, &q)| k == t || q < p[r][t])
            })
            .count();
        assert_eq!(correct, top1);
    }

    #[test]
    fn gradients_do_not_depend_on_the_thread_schedule() {
        let params = init(16, 9);
        let (rows, mut batch) = (sample(), PolicyBatch::new());
        for _ in 0..(2 * ROWS_PER_TASK / 3 + 1) {
            batch.append(&rows);
        }
        let first = loss_and_gradients(&params, &batch);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| loss_and_gradients(&params, &batch)), first, "{threads} threads");
        }
    }
}
