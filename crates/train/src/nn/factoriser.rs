//! The king buckets' factoriser, as bullet trains bucketed first layers: beside the
//! buckets' rows `[4·768, N]` a shared tensor `[768, N]` ([`FT_FACTOR`]) whose row of a
//! feature is added to that feature's row in every bucket. A position trains its own
//! bucket's row and the shared one, so what the buckets have in common is learnt from every
//! position and each bucket learns only how it differs. The engine never sees it: the
//! model is written with the factoriser folded into every bucket ([`fold`]).

use super::params::Params;
use super::perspective::{FT_FACTOR, FT_WEIGHT, width};
use deepchess_core::features::PERSPECTIVE_FEATURES;

/// `params` (a net with king buckets) with a factoriser, the same function: the factoriser
/// takes the mean of the buckets' rows of each feature and each bucket keeps its
/// difference from it (so a net copied into its buckets puts all of itself into the
/// factoriser and starts its buckets at zero). Unchanged if it has one already.
pub fn with_factoriser(mut params: Params) -> Result<Params, String> {
    if params.values.contains_key(FT_FACTOR) {
        return Ok(params);
    }
    let n = width(&params);
    let block = PERSPECTIVE_FEATURES * n;
    let weight = params.values.get_mut(FT_WEIGHT).expect("a value net has a feature transformer");
    let buckets = weight.len() / block;
    if buckets < 2 || weight.len() != buckets * block {
        return Err(format!(
            "a factoriser needs king buckets: the feature transformer has {} input rows, not a multiple of {PERSPECTIVE_FEATURES} above it",
            weight.len() / n.max(1)
        ));
    }
    let mut factor = vec![0.0f32; block];
    for bucket in weight.chunks(block) {
        factor.iter_mut().zip(bucket).for_each(|(f, w)| *f += w / buckets as f32);
    }
    for bucket in weight.chunks_mut(block) {
        bucket.iter_mut().zip(&factor).for_each(|(w, f)| *w -= f);
    }
    params.values.insert(FT_FACTOR.to_string(), factor);
    Ok(params)
}

/// `params` with its factoriser, if any, added into every bucket's rows and removed: the
/// net the engine reads, the same function.
pub fn fold(params: &Params) -> Params {
    let mut params = params.clone();
    if let Some(factor) = params.values.remove(FT_FACTOR) {
        let weight = params.values.get_mut(FT_WEIGHT).expect("a value net has a feature transformer");
        for bucket in weight.chunks_mut(factor.len()) {
            bucket.iter_mut().zip(&factor).for_each(|(w, f)| *w += f);
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::perspective::{self, PerspectiveBatch, side_to_move_view, with_king_buckets};
    use deepchess_core::SparseFeatures;
    use deepchess_core::arch::ValueInputLayout;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

    const LAYOUT: ValueInputLayout = ValueInputLayout::MirrorKingBuckets;

    /// A bucketed net whose buckets differ (seeded noise on every row).
    fn bucketed(seed: u64) -> Params {
        let mut params = with_king_buckets(perspective::init(16, 8, seed), LAYOUT).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for v in params.values.values_mut() {
            v.iter_mut().for_each(|x| *x = *x * 6.0 + rng.random_range(-0.2..0.2));
        }
        params
    }

    /// Positions with kings in three of the four buckets.
    fn batch() -> PerspectiveBatch {
        let mut batch = PerspectiveBatch::new();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r4rk1/ppp2ppp/8/8/8/8/PPP2PPP/2KR3R w - - 0 1",
            "8/8/4k3/8/8/3K4/4P3/8 w - - 0 1",
        ] {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let f = SparseFeatures::from_position(&pos);
            let pieces = f.as_slice().iter().copied().filter(|&i| usize::from(i) < PERSPECTIVE_FEATURES);
            batch.push(&side_to_move_view(pieces, pos.turn()), 0.5);
        }
        batch
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()))
    }

    #[test]
    fn adding_and_folding_a_factoriser_keep_the_logits() {
        let plain = bucketed(1);
        let factored = with_factoriser(plain.clone()).unwrap();
        assert_eq!(factored.get(FT_FACTOR).len(), PERSPECTIVE_FEATURES * 16);
        let expected = perspective::logits(&plain, LAYOUT, &batch());
        assert!(close(&perspective::logits(&factored, LAYOUT, &batch()), &expected));
        let folded = fold(&factored);
        assert!(!folded.values.contains_key(FT_FACTOR));
        assert!(close(folded.get(FT_WEIGHT), plain.get(FT_WEIGHT)));
        assert_eq!(fold(&plain), plain, "a net without a factoriser is written as it is");
        assert_eq!(with_factoriser(factored.clone()).unwrap(), factored);
    }

    #[test]
    fn a_net_copied_into_its_buckets_starts_them_at_zero() {
        let plain = perspective::init(16, 8, 2);
        let rows = plain.get(FT_WEIGHT).to_vec();
        let factored = with_factoriser(with_king_buckets(plain, LAYOUT).unwrap()).unwrap();
        assert!(close(factored.get(FT_FACTOR), &rows));
        assert!(factored.get(FT_WEIGHT).iter().all(|w| w.abs() < 1e-6));
    }

    #[test]
    fn the_factoriser_learns_from_every_bucket() {
        let params = with_factoriser(bucketed(3)).unwrap();
        let (_, grads) = perspective::loss_and_gradients(&params, LAYOUT, &batch());
        let n = 16;
        // the factoriser's gradient of a feature is the sum of its buckets' gradients
        let weight = &grads[FT_WEIGHT];
        let summed: Vec<f32> = (0..PERSPECTIVE_FEATURES * n)
            .map(|i| (0..4).map(|b| weight[b * PERSPECTIVE_FEATURES * n + i]).sum())
            .collect();
        assert!(close(&grads[FT_FACTOR], &summed));
        let used =
            |b: usize| weight[b * PERSPECTIVE_FEATURES * n..][..PERSPECTIVE_FEATURES * n].iter().any(|&g| g != 0.0);
        assert!((0..4).filter(|&b| used(b)).count() >= 2, "the batch's kings stand in two buckets or more");
    }

    #[test]
    fn a_net_without_buckets_has_no_factoriser() {
        let err = with_factoriser(perspective::init(16, 8, 4)).unwrap_err();
        assert!(err.contains("needs king buckets"), "{err}");
    }
}
