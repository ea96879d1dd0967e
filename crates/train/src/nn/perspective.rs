//! The evaluation net's forward pass and gradients, by hand on flat `f32` buffers.
//!
//! The net (see `deepchess_engine`'s `ValueNet` for the integer inference): a feature
//! transformer `ft` `[768, N]` shared by both perspectives, SCReLU (`clamp(x, 0, 1)²`) of
//! the side to move's accumulator and of the opponent's, concatenated, into the output
//! layer `out` `[2N, B]`: column `b` of the position's output bucket (by its number of
//! pieces, [`value_output_bucket`]) gives a logit `o` of the side to move's expected
//! score. Under [`ValueInputLayout::HorizontalMirror`] each perspective's features are
//! mirrored a ↔ h when its own king stands on files e–h, and under
//! [`ValueInputLayout::MirrorKingBuckets`] its king's square also picks one of four sets of
//! 768 rows of `ft` ([`perspective_maps`]). The loss is `(sigmoid(o) − t)²`. A position has
//! ~30 active inputs of 768, so the feature
//! transformer's forward pass and gradient touch only those rows: a burn graph would
//! spend its time on zeros, so this small net is done by hand, in parallel over the batch.

use std::collections::BTreeMap;

use deepchess_core::arch::{
    VALUE_FT_STACK, VALUE_MAX_OUTPUT_BUCKETS, VALUE_OUT_STACK, VALUE_OUT_WEIGHT_LIMIT, ValueInputLayout,
    value_output_bucket, value_output_bucket_major,
};
use deepchess_core::features::{PERSPECTIVE_FEATURES, perspective_feature, perspective_maps};
use rayon::prelude::*;
use shakmaty::Color;

use super::params::Params;

/// Name of the feature transformer's weights `[768·K, N]`.
pub use deepchess_core::arch::VALUE_FT_WEIGHT as FT_WEIGHT;
/// Name of the feature transformer's biases `[N]`.
pub const FT_BIAS: &str = "ft.0.bias";
/// Name of the king buckets' factoriser `[768, N]`, a training-only tensor: every
/// bucket's row of a feature is its own row plus the factoriser's, so that what all
/// buckets share is learnt from every position ([`super::factoriser`] folds it into the
/// buckets when the model is written).
pub const FT_FACTOR: &str = "ft.factor";
/// Name of the output layer's weights `[2N, B]`.
pub const OUT_WEIGHT: &str = "out.0.weight";
/// Name of the output layer's biases `[B]`.
pub const OUT_BIAS: &str = "out.0.bias";

/// Positions as the side to move sees them: its perspective's active features (the
/// opponent's are the same pieces mirrored, [`opponent_view`]) and a target each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerspectiveBatch {
    /// Active features of all rows in the side to move's perspective, one row after the other.
    pub features: Vec<u16>,
    /// Row `r` is `features[offsets[r]..offsets[r + 1]]`.
    pub offsets: Vec<usize>,
    /// Target expected score of the side to move, per row.
    pub targets: Vec<f32>,
}

impl PerspectiveBatch {
    /// An empty batch.
    pub fn new() -> PerspectiveBatch {
        PerspectiveBatch { features: Vec::new(), offsets: vec![0], targets: Vec::new() }
    }

    /// Appends a row: the side to move's perspective features and its target.
    pub fn push(&mut self, features: &[u16], target: f32) {
        self.features.extend_from_slice(features);
        self.offsets.push(self.features.len());
        self.targets.push(target);
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
    pub fn row(&self, r: usize) -> &[u16] {
        &self.features[self.offsets[r]..self.offsets[r + 1]]
    }
}

/// The side to move's perspective features of the piece features (`< 768`) of a 773
/// encoding.
pub fn side_to_move_view(pieces: impl Iterator<Item = u16>, side_to_move: Color) -> Vec<u16> {
    pieces.map(|f| perspective_feature(f, side_to_move)).collect()
}

/// The opponent's perspective feature of a side-to-move perspective feature: colours
/// swapped and the board mirrored, whichever side is to move.
#[inline]
pub fn opponent_view(feature: u16) -> u16 {
    perspective_feature(feature, Color::Black)
}

/// Fresh parameters of width `width` with `buckets` output buckets: the feature
/// transformer uniform in ±1/√768 (a small start keeps SCReLU out of saturation), the
/// output layer uniform in ±1/√(2N).
pub fn init(width: usize, buckets: usize, seed: u64) -> Params {
    let stacks = deepchess_core::ModelKind::Value
        .default_stacks()
        .into_iter()
        .map(|mut s| {
            if s.name == VALUE_FT_STACK {
                s.layers = vec![PERSPECTIVE_FEATURES, width];
            } else if s.name == VALUE_OUT_STACK {
                s.layers = vec![2 * width, buckets];
            }
            s
        })
        .collect();
    Params::init(stacks, seed)
}

/// Width N of the feature transformer of `params`.
pub fn width(params: &Params) -> usize {
    params.get(FT_BIAS).len()
}

/// Number B of output buckets of `params`.
pub fn output_buckets(params: &Params) -> usize {
    params.get(OUT_BIAS).len()
}

/// `params` with `buckets` output buckets: unchanged if it has them already; a net with a
/// single output gets it copied into every bucket (a warm start that begins where the
/// single-output net is and lets the buckets part from there).
pub fn with_output_buckets(mut params: Params, buckets: usize) -> Result<Params, String> {
    let have = output_buckets(&params);
    if have == buckets {
        return Ok(params);
    }
    if have != 1 || !(1..=VALUE_MAX_OUTPUT_BUCKETS).contains(&buckets) {
        return Err(format!(
            "the net has {have} output buckets; it can become a net of 1 to {VALUE_MAX_OUTPUT_BUCKETS} buckets only from a single output, not {buckets}"
        ));
    }
    let spread = |v: &[f32]| v.iter().flat_map(|&x| std::iter::repeat_n(x, buckets)).collect::<Vec<f32>>();
    let (weight, bias) = (spread(params.get(OUT_WEIGHT)), spread(params.get(OUT_BIAS)));
    params.values.insert(OUT_WEIGHT.to_string(), weight);
    params.values.insert(OUT_BIAS.to_string(), bias);
    let out = params.stacks.iter_mut().find(|s| s.name == VALUE_OUT_STACK).expect("a value net has an output stack");
    out.layers[1] = buckets;
    Ok(params)
}

/// `params` with the feature-transformer rows of `layout` (768 per king bucket): unchanged
/// if it has them already; a net of 768 rows gets them copied into every king bucket (a
/// warm start that begins where the net without buckets is and lets the buckets part from
/// there).
pub fn with_king_buckets(mut params: Params, layout: ValueInputLayout) -> Result<Params, String> {
    let (n, want) = (width(&params), layout.inputs());
    let have = params.get(FT_WEIGHT).len() / n.max(1);
    if have == want {
        return Ok(params);
    }
    if have != PERSPECTIVE_FEATURES {
        return Err(format!(
            "the net's feature transformer has {have} input rows; the input layout {} needs {want}, made only from a net of {PERSPECTIVE_FEATURES}",
            layout.name()
        ));
    }
    let weight = params.get(FT_WEIGHT).repeat(layout.king_buckets());
    params.values.insert(FT_WEIGHT.to_string(), weight);
    let ft =
        params.stacks.iter_mut().find(|s| s.name == VALUE_FT_STACK).expect("a value net has a feature transformer");
    ft.layers[0] = want;
    Ok(params)
}

/// The output layer bucket by bucket ([`value_output_bucket_major`]): bucket `b`'s
/// weights are `weight[b · 2N..(b + 1) · 2N]`, the side to move's half, then the opponent's.
struct Output {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Output {
    fn of(params: &Params) -> Output {
        let bias = params.get(OUT_BIAS).to_vec();
        Output { weight: value_output_bucket_major(params.get(OUT_WEIGHT), bias.len()), bias }
    }

    /// The bucket of a row with the active features `row` (one per piece).
    fn bucket(&self, row: &[u16]) -> usize {
        value_output_bucket(row.len(), self.bias.len())
    }

    /// Bucket `b`'s weights for accumulators of width `n`.
    fn weights(&self, b: usize, n: usize) -> &[f32] {
        &self.weight[b * 2 * n..][..2 * n]
    }

    /// The logit of bucket `b` for the accumulators `us` and `them`.
    fn logit(&self, b: usize, us: &[f32], them: &[f32]) -> f32 {
        let (w_us, w_them) = self.weights(b, us.len()).split_at(us.len());
        self.bias[b]
            + us.iter().zip(w_us).map(|(a, w)| screlu(*a) * w).sum::<f32>()
            + them.iter().zip(w_them).map(|(a, w)| screlu(*a) * w).sum::<f32>()
    }
}

#[inline]
fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

/// The feature transformer: its weights, biases and, while training with one, the
/// factoriser shared by the king buckets.
struct FeatureTransformer<'a> {
    weight: &'a [f32],
    bias: &'a [f32],
    factor: Option<&'a [f32]>,
}

impl FeatureTransformer<'_> {
    fn of(params: &Params) -> FeatureTransformer<'_> {
        FeatureTransformer {
            weight: params.get(FT_WEIGHT),
            bias: params.get(FT_BIAS),
            factor: params.values.get(FT_FACTOR).map(Vec::as_slice),
        }
    }

    /// The accumulator of the rows `features` in `acc` (bias plus the rows, each with its
    /// factoriser row if there is one).
    #[inline]
    fn accumulate(&self, acc: &mut [f32], features: impl Iterator<Item = u16>) {
        let n = acc.len();
        acc.copy_from_slice(self.bias);
        for f in features {
            add(acc, &self.weight[usize::from(f) * n..][..n]);
            if let Some(factor) = self.factor {
                add(acc, &factor[factor_row(f) * n..][..n]);
            }
        }
    }
}

/// The factoriser's row of the feature-transformer row `row`: the same feature in the
/// bucket-free 768.
#[inline]
pub fn factor_row(row: u16) -> usize {
    usize::from(row) % PERSPECTIVE_FEATURES
}

/// The feature-transformer rows of the side to move's perspective and of the opponent's
/// for a row of side-to-move features, under `layout`.
#[inline]
fn views(row: &[u16], layout: ValueInputLayout) -> (impl Iterator<Item = u16> + '_, impl Iterator<Item = u16> + '_) {
    let (us, them) = perspective_maps(row, layout);
    (row.iter().map(move |&f| us.row(f)), row.iter().map(move |&f| them.row(opponent_view(f))))
}

/// Output logits `o` of every row of `batch`, the inputs indexed by `layout`.
pub fn logits(params: &Params, layout: ValueInputLayout, batch: &PerspectiveBatch) -> Vec<f32> {
    let n = width(params);
    let (ft, out) = (FeatureTransformer::of(params), Output::of(params));
    (0..batch.len())
        .into_par_iter()
        .map_init(
            || (vec![0.0; n], vec![0.0; n]),
            |(us, them), r| {
                let row = batch.row(r);
                let (us_rows, them_rows) = views(row, layout);
                ft.accumulate(us, us_rows);
                ft.accumulate(them, them_rows);
                out.logit(out.bucket(row), us, them)
            },
        )
        .collect()
}

/// Sum of squared errors `(sigmoid(o) − t)²` over the batch, with gradients of the
/// summed loss in one buffer per tensor (the output layer's bucket by bucket, as
/// [`Output`]).
struct Partial {
    loss: f64,
    ft_weight: Vec<f32>,
    /// Empty without a factoriser.
    ft_factor: Vec<f32>,
    ft_bias: Vec<f32>,
    out_weight: Vec<f32>,
    out_bias: Vec<f32>,
}

impl Partial {
    fn new(ft: &FeatureTransformer<'_>, buckets: usize) -> Partial {
        let n = ft.bias.len();
        Partial {
            loss: 0.0,
            ft_weight: vec![0.0; ft.weight.len()],
            ft_factor: vec![0.0; ft.factor.map_or(0, <[f32]>::len)],
            ft_bias: vec![0.0; n],
            out_weight: vec![0.0; buckets * 2 * n],
            out_bias: vec![0.0; buckets],
        }
    }

    fn merge(mut self, other: Partial) -> Partial {
        self.loss += other.loss;
        add(&mut self.ft_weight, &other.ft_weight);
        add(&mut self.ft_factor, &other.ft_factor);
        add(&mut self.ft_bias, &other.ft_bias);
        add(&mut self.out_weight, &other.out_weight);
        add(&mut self.out_bias, &other.out_bias);
        self
    }
}

fn add(a: &mut [f32], b: &[f32]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// Rows per parallel task of [`loss_and_gradients`].
const ROWS_PER_TASK: usize = 1024;

/// Mean loss `(sigmoid(o) − t)²` over `batch` and its gradients by tensor name, ready
/// for Adam, the inputs indexed by `layout`.
pub fn loss_and_gradients(
    params: &Params,
    layout: ValueInputLayout,
    batch: &PerspectiveBatch,
) -> (f64, BTreeMap<String, Vec<f32>>) {
    let (n, buckets) = (width(params), output_buckets(params));
    let (ft, out) = (FeatureTransformer::of(params), Output::of(params));
    let rows: Vec<usize> = (0..batch.len()).collect();
    let total = rows
        .par_chunks(ROWS_PER_TASK)
        .map(|chunk| {
            let mut p = Partial::new(&ft, buckets);
            let (mut us, mut them) = (vec![0.0f32; n], vec![0.0f32; n]);
            let (mut d_us, mut d_them) = (vec![0.0f32; n], vec![0.0f32; n]);
            for &r in chunk {
                let row = batch.row(r);
                let (us_rows, them_rows) = views(row, layout);
                ft.accumulate(&mut us, us_rows);
                ft.accumulate(&mut them, them_rows);
                let bucket = out.bucket(row);
                let o = out.logit(bucket, &us, &them);
                let s = 1.0 / (1.0 + (-o).exp());
                let e = s - batch.targets[r];
                p.loss += f64::from(e * e);
                let g = 2.0 * e * s * (1.0 - s);
                p.out_bias[bucket] += g;
                let (ow, d_out) = (out.weights(bucket, n), &mut p.out_weight[bucket * 2 * n..][..2 * n]);
                for j in 0..n {
                    d_out[j] += g * screlu(us[j]);
                    d_out[n + j] += g * screlu(them[j]);
                    let du = if us[j] > 0.0 && us[j] < 1.0 { 2.0 * us[j] } else { 0.0 };
                    let dt = if them[j] > 0.0 && them[j] < 1.0 { 2.0 * them[j] } else { 0.0 };
                    d_us[j] = g * ow[j] * du;
                    d_them[j] = g * ow[n + j] * dt;
                    p.ft_bias[j] += d_us[j] + d_them[j];
                }
                let (us_rows, them_rows) = views(row, layout);
                for (f_us, f_them) in us_rows.zip(them_rows) {
                    add(&mut p.ft_weight[usize::from(f_us) * n..][..n], &d_us);
                    add(&mut p.ft_weight[usize::from(f_them) * n..][..n], &d_them);
                    if ft.factor.is_some() {
                        add(&mut p.ft_factor[factor_row(f_us) * n..][..n], &d_us);
                        add(&mut p.ft_factor[factor_row(f_them) * n..][..n], &d_them);
                    }
                }
            }
            p
        })
        // collected in order and summed in order: the same batch always gives the same
        // gradients, whatever threads ran which rows (a resumed run repeats a run bit for bit)
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::new(&ft, buckets), Partial::merge);
    let scale = 1.0 / batch.len().max(1) as f32;
    let scaled = |v: Vec<f32>| v.into_iter().map(|x| x * scale).collect::<Vec<f32>>();
    // bucket-major back to the tensor's [2N, B]
    let out_weight = (0..2 * n * buckets).map(|i| total.out_weight[(i % buckets) * 2 * n + i / buckets]).collect();
    let mut grads = BTreeMap::from([
        (FT_WEIGHT.to_string(), scaled(total.ft_weight)),
        (FT_BIAS.to_string(), scaled(total.ft_bias)),
        (OUT_WEIGHT.to_string(), scaled(out_weight)),
        (OUT_BIAS.to_string(), scaled(total.out_bias)),
    ]);
    if ft.factor.is_some() {
        grads.insert(FT_FACTOR.to_string(), scaled(total.ft_factor));
    }
    (total.loss / batch.len().max(1) as f64, grads)
}

/// Clips the output weights to what the engine's 16-bit quantisation holds.
pub fn clip(params: &mut Params) {
    if let Some(w) = params.values.get_mut(OUT_WEIGHT) {
        w.iter_mut().for_each(|x| *x = x.clamp(-VALUE_OUT_WEIGHT_LIMIT, VALUE_OUT_WEIGHT_LIMIT));
    }
}

#[cfg(test)]
mod tests;
