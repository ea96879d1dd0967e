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

/// The accumulator of the feature-transformer rows `features` in `acc` (bias plus the rows).
#[inline]
fn accumulate(acc: &mut [f32], weight: &[f32], bias: &[f32], features: impl Iterator<Item = u16>) {
    let n = acc.len();
    acc.copy_from_slice(bias);
    for f in features {
        let row = &weight[usize::from(f) * n..][..n];
        acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
    }
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
    let (w, b, out) = (params.get(FT_WEIGHT), params.get(FT_BIAS), Output::of(params));
    (0..batch.len())
        .into_par_iter()
        .map_init(
            || (vec![0.0; n], vec![0.0; n]),
            |(us, them), r| {
                let row = batch.row(r);
                let (us_rows, them_rows) = views(row, layout);
                accumulate(us, w, b, us_rows);
                accumulate(them, w, b, them_rows);
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
    ft_bias: Vec<f32>,
    out_weight: Vec<f32>,
    out_bias: Vec<f32>,
}

impl Partial {
    fn new(rows: usize, n: usize, buckets: usize) -> Partial {
        Partial {
            loss: 0.0,
            ft_weight: vec![0.0; rows * n],
            ft_bias: vec![0.0; n],
            out_weight: vec![0.0; buckets * 2 * n],
            out_bias: vec![0.0; buckets],
        }
    }

    fn merge(mut self, other: Partial) -> Partial {
        self.loss += other.loss;
        add(&mut self.ft_weight, &other.ft_weight);
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
    let (w, b, out) = (params.get(FT_WEIGHT), params.get(FT_BIAS), Output::of(params));
    let rows: Vec<usize> = (0..batch.len()).collect();
    let total = rows
        .par_chunks(ROWS_PER_TASK)
        .map(|chunk| {
            let mut p = Partial::new(w.len() / n, n, buckets);
            let (mut us, mut them) = (vec![0.0f32; n], vec![0.0f32; n]);
            let (mut d_us, mut d_them) = (vec![0.0f32; n], vec![0.0f32; n]);
            for &r in chunk {
                let row = batch.row(r);
                let (us_rows, them_rows) = views(row, layout);
                accumulate(&mut us, w, b, us_rows);
                accumulate(&mut them, w, b, them_rows);
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
                }
            }
            p
        })
        // collected in order and summed in order: the same batch always gives the same
        // gradients, whatever threads ran which rows (a resumed run repeats a run bit for bit)
        .collect::<Vec<Partial>>()
        .into_iter()
        .fold(Partial::new(w.len() / n, n, buckets), Partial::merge);
    let scale = 1.0 / batch.len().max(1) as f32;
    let scaled = |v: Vec<f32>| v.into_iter().map(|x| x * scale).collect::<Vec<f32>>();
    // bucket-major back to the tensor's [2N, B]
    let out_weight = (0..2 * n * buckets).map(|i| total.out_weight[(i % buckets) * 2 * n + i / buckets]).collect();
    let grads = BTreeMap::from([
        (FT_WEIGHT.to_string(), scaled(total.ft_weight)),
        (FT_BIAS.to_string(), scaled(total.ft_bias)),
        (OUT_WEIGHT.to_string(), scaled(out_weight)),
        (OUT_BIAS.to_string(), scaled(total.out_bias)),
    ]);
    (total.loss / batch.len().max(1) as f64, grads)
}

/// Clips the output weights to what the engine's 16-bit quantisation holds.
pub fn clip(params: &mut Params) {
    if let Some(w) = params.values.get_mut(OUT_WEIGHT) {
        w.iter_mut().for_each(|x| *x = x.clamp(-VALUE_OUT_WEIGHT_LIMIT, VALUE_OUT_WEIGHT_LIMIT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::SparseFeatures;
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

    fn batch_of(fens: &[(&str, f32)]) -> PerspectiveBatch {
        let mut batch = PerspectiveBatch::new();
        for (fen, t) in fens {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let f = SparseFeatures::from_position(&pos);
            let pieces = f.as_slice().iter().copied().filter(|&i| usize::from(i) < PERSPECTIVE_FEATURES);
            batch.push(&side_to_move_view(pieces, pos.turn()), *t);
        }
        batch
    }

    fn sample() -> PerspectiveBatch {
        batch_of(&[
            ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", 0.45),
            ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 0.55),
            ("4k3/8/8/8/8/8/4P3/4K2R w K - 0 1", 0.95),
            ("4k3/8/8/3q4/8/8/8/4K3 w - - 0 1", 0.02),
        ])
    }

    /// Checks the analytic gradients of `params` on [`sample`] at `(tensor, index)` against
    /// central differences; returns how many of them are non-zero.
    fn check_gradients(params: &Params, layout: ValueInputLayout, at: &[(&str, usize)]) -> usize {
        let batch = sample();
        let (_, grads) = loss_and_gradients(params, layout, &batch);
        let loss = |p: &Params| loss_and_gradients(p, layout, &batch).0;
        let mut checked = 0;
        for &(name, index) in at {
            let h = 1e-3f32;
            let (mut plus, mut minus) = (params.clone(), params.clone());
            plus.values.get_mut(name).unwrap()[index] += h;
            minus.values.get_mut(name).unwrap()[index] -= h;
            let numeric = (loss(&plus) - loss(&minus)) / (2.0 * f64::from(h));
            let analytic = f64::from(grads[name][index]);
            assert!(
                (numeric - analytic).abs() <= 2e-3 * (1.0 + numeric.abs()),
                "{name}[{index}]: {analytic} vs {numeric}"
            );
            checked += usize::from(analytic != 0.0);
        }
        checked
    }

    /// Fresh parameters with larger weights than at initialisation, so that SCReLU is
    /// neither all zero nor flat.
    fn lively(width: usize, buckets: usize, seed: u64) -> Params {
        let mut params = init(width, buckets, seed);
        for v in params.values.values_mut() {
            v.iter_mut().for_each(|x| *x *= 6.0);
        }
        params
    }

    #[test]
    fn gradients_match_finite_differences() {
        let params = lively(32, 1, 3);
        let at = [(FT_WEIGHT, 12 * 32 + 5), (FT_WEIGHT, 700 * 32 + 1), (FT_BIAS, 7), (OUT_WEIGHT, 40), (OUT_BIAS, 0)];
        assert!(
            check_gradients(&params, ValueInputLayout::Plain, &at) >= 3,
            "most checked gradients should be non-zero"
        );
    }

    #[test]
    fn mirrored_gradients_match_finite_differences() {
        // every king of the sample stands on e1 or e8: every perspective is mirrored, and
        // its own king's row is 5·64 + 3 (d1) instead of 5·64 + 4 (e1)
        let params = lively(32, 8, 4);
        // every neuron of the d1 king's row (some are outside SCReLU's slope for every row)
        let at: Vec<(&str, usize)> = (0..32).map(|j| (FT_WEIGHT, (5 * 64 + 3) * 32 + j)).collect();
        let n = check_gradients(&params, ValueInputLayout::HorizontalMirror, &at);
        assert!(n >= 8, "many checked gradients should be non-zero: {n}");
        let (_, grads) = loss_and_gradients(&params, ValueInputLayout::HorizontalMirror, &sample());
        let king_e = &grads[FT_WEIGHT][(5 * 64 + 4) * 32..][..32];
        assert!(king_e.iter().all(|&g| g == 0.0), "no perspective sees its king on files e-h");
    }

    #[test]
    fn king_bucket_gradients_match_finite_differences() {
        // the sample's kings: e1 and e8 (bucket 1 for both sides, mirrored), a king on e1
        // with a king on e8 in the endings too; every row a perspective uses lies in bucket 1
        let layout = ValueInputLayout::MirrorKingBuckets;
        let params = with_king_buckets(lively(32, 8, 4), layout).unwrap();
        let d1_king = |bucket: usize| (bucket * 768 + 5 * 64 + 3) * 32;
        let at: Vec<(&str, usize)> = (0..32).map(|j| (FT_WEIGHT, d1_king(1) + j)).collect();
        let n = check_gradients(&params, layout, &at);
        assert!(n >= 8, "many checked gradients should be non-zero: {n}");
        let (_, grads) = loss_and_gradients(&params, layout, &sample());
        for bucket in [0, 2, 3] {
            let rows = &grads[FT_WEIGHT][bucket * 768 * 32..][..768 * 32];
            assert!(rows.iter().all(|&g| g == 0.0), "no perspective's king is in bucket {bucket}");
        }
    }

    #[test]
    fn a_net_copied_into_king_buckets_keeps_the_logits() {
        let (plain, layout) = (lively(16, 8, 8), ValueInputLayout::MirrorKingBuckets);
        let bucketed = with_king_buckets(plain.clone(), layout).unwrap();
        assert_eq!(bucketed.stack(VALUE_FT_STACK).layers, vec![4 * 768, 16]);
        assert_eq!(bucketed.get(FT_WEIGHT).len(), 4 * 768 * 16);
        let batch = sample();
        assert_eq!(logits(&bucketed, layout, &batch), logits(&plain, ValueInputLayout::HorizontalMirror, &batch));
        assert_eq!(with_king_buckets(bucketed.clone(), layout).unwrap(), bucketed);
        let err = with_king_buckets(bucketed, ValueInputLayout::HorizontalMirror).unwrap_err();
        assert!(err.contains("3072 input rows"), "{err}");
    }

    #[test]
    fn a_mirrored_net_scores_a_position_and_its_mirror_image_alike() {
        let params = lively(16, 8, 7);
        let (rows, mut images) = (sample(), PerspectiveBatch::new());
        for r in 0..rows.len() {
            let image: Vec<u16> = rows.row(r).iter().map(|&f| f ^ 7).collect();
            images.push(&image, rows.targets[r]);
        }
        let mirror = ValueInputLayout::HorizontalMirror;
        assert_eq!(logits(&params, mirror, &rows), logits(&params, mirror, &images));
        assert_ne!(logits(&params, ValueInputLayout::Plain, &rows), logits(&params, ValueInputLayout::Plain, &images));
    }

    #[test]
    fn bucketed_gradients_match_finite_differences() {
        // the sample's rows have 32, 32, 4 and 3 pieces: buckets 7 and 0 of 8
        let params = lively(32, 8, 3);
        let at = [
            (FT_WEIGHT, 12 * 32 + 5),
            (FT_BIAS, 7),
            (OUT_WEIGHT, 40 * 8 + 7),
            (OUT_WEIGHT, 40 * 8),
            (OUT_WEIGHT, 3 * 8 + 7),
            (OUT_BIAS, 7),
            (OUT_BIAS, 0),
        ];
        let n = check_gradients(&params, ValueInputLayout::Plain, &at);
        assert!(n >= 6, "most checked gradients should be non-zero: {n}");
        let (_, grads) = loss_and_gradients(&params, ValueInputLayout::Plain, &sample());
        assert_eq!(grads[OUT_BIAS][1..7], [0.0; 6], "buckets without a row get no gradient");
        assert!((0..64).all(|j| (1..7).all(|b| grads[OUT_WEIGHT][j * 8 + b] == 0.0)));
    }

    #[test]
    fn a_single_output_spread_into_buckets_keeps_the_logits() {
        let single = lively(16, 1, 6);
        let bucketed = with_output_buckets(single.clone(), 8).unwrap();
        assert_eq!(output_buckets(&bucketed), 8);
        assert_eq!(bucketed.stack(VALUE_OUT_STACK).layers, vec![32, 8]);
        assert_eq!(
            logits(&bucketed, ValueInputLayout::Plain, &sample()),
            logits(&single, ValueInputLayout::Plain, &sample())
        );
        assert_eq!(with_output_buckets(bucketed.clone(), 8).unwrap(), bucketed);
        let err = with_output_buckets(bucketed, 4).unwrap_err();
        assert!(err.contains("8 output buckets"), "{err}");
        let buckets = |row: usize| value_output_bucket(sample().row(row).len(), 8);
        assert_eq!((0..4).map(buckets).collect::<Vec<_>>(), vec![7, 7, 0, 0]);
    }

    #[test]
    fn gradients_do_not_depend_on_the_thread_schedule() {
        let params = init(32, 8, 9);
        let (rows, mut batch) = (sample(), PerspectiveBatch::new());
        for k in 0..(3 * ROWS_PER_TASK) {
            let r = k % rows.len();
            batch.push(rows.row(r), rows.targets[r] + k as f32 * 1e-5);
        }
        let first = loss_and_gradients(&params, ValueInputLayout::Plain, &batch);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(
                pool.install(|| loss_and_gradients(&params, ValueInputLayout::Plain, &batch)),
                first,
                "{threads} threads"
            );
        }
    }

    #[test]
    fn logits_agree_with_the_loss() {
        let params = init(16, 8, 5);
        let batch = sample();
        let o = logits(&params, ValueInputLayout::Plain, &batch);
        let expected: f64 =
            o.iter().zip(&batch.targets).map(|(o, t)| f64::from((1.0 / (1.0 + (-o).exp()) - t).powi(2))).sum::<f64>()
                / batch.len() as f64;
        assert!((loss_and_gradients(&params, ValueInputLayout::Plain, &batch).0 - expected).abs() < 1e-6);
    }

    #[test]
    fn opponent_view_is_an_involution_that_swaps_colours() {
        for f in 0..PERSPECTIVE_FEATURES as u16 {
            assert_eq!(opponent_view(opponent_view(f)), f);
            assert_eq!(f < 384, opponent_view(f) >= 384);
        }
    }
}
