//! Tests of the evaluation net's passes: gradients against finite differences, layouts and buckets.

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
        assert!((numeric - analytic).abs() <= 2e-3 * (1.0 + numeric.abs()), "{name}[{index}]: {analytic} vs {numeric}");
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
    assert!(check_gradients(&params, ValueInputLayout::Plain, &at) >= 3, "most checked gradients should be non-zero");
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

#[test]
fn factoriser_gradients_match_finite_differences() {
    // the d1 king's rows of the shared factoriser (every perspective of the sample is in
    // bucket 1), as in the king buckets' test above
    let layout = ValueInputLayout::MirrorKingBuckets;
    let params = with_king_buckets(lively(32, 8, 4), layout).unwrap();
    let params = crate::nn::factoriser::with_factoriser(params).unwrap();
    let at: Vec<(&str, usize)> = (0..32).map(|j| (FT_FACTOR, (5 * 64 + 3) * 32 + j)).collect();
    let n = check_gradients(&params, layout, &at);
    assert!(n >= 8, "many checked gradients should be non-zero: {n}");
}
