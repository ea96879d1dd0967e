//! Soft move targets for the move predictors: every legal move of a dataset's positions
//! scored by the evaluation search (each child searched for a few nodes), and each position
//! written as `samples` records of itself, one move each: `played` of them carry the move
//! the game played, the others are shared out among the legal moves by a softmax of their
//! scores (`exp(score / temperature)`), by largest remainders. A predictor trained on them
//! (`train movepred --data OUT`) learns which alternatives the search thinks playable and
//! how much, besides the one move its game chose: a distillation of the alpha-beta's
//! MultiPV view into the MCTS's priors. A move that mates at once takes every soft record.

use std::path::Path;
use std::sync::Arc;

use deepchess_core::record::EVAL_NONE;
use deepchess_core::{Dataset, GameInfo, PlayedMove, Record, Split};
use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::Score;
use shakmaty::{Chess, Move, Position};

use crate::error::DatagenError;
use crate::groups::{GroupCounts, Parents, write_groups};
use crate::player::Player;

/// How the scored-move records are made.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredMoveOptions {
    /// Which records are parents.
    pub parents: Parents,
    /// Soft node limit of the search that scores each child (hard limit: four times).
    pub nodes: u64,
    /// Records per parent.
    pub samples: usize,
    /// Of those, the records that carry the played move (all soft when the record has none).
    pub played: usize,
    /// Softmax temperature in centipawns.
    pub temperature: f32,
}

/// Transposition table of each worker's searches, MB (cleared at every parent).
const HASH_MB: usize = 2;

/// A mate's score in centipawns for the softmax: above any evaluation, nearer mates higher.
const MATE_CP: i32 = 20_000;

/// Writes `out/moves-{train,validation}.bin`: for each parent of
/// `data/moves-{train,validation}.bin` (a split that `data` lacks is skipped) a group of
/// `samples` records of the parent's position (its ply, score and result), their moves
/// shared out as the module says, written as [`write_groups`] does. A parent with no legal
/// move gives no group.
pub fn scored_moves(
    data: &Path,
    out: &Path,
    options: &ScoredMoveOptions,
    networks: &Networks,
) -> Result<Vec<(Split, GroupCounts)>, DatagenError> {
    if options.nodes == 0 || options.samples == 0 || options.played > options.samples {
        return Err(DatagenError::Invalid(
            "--nodes and --samples must be at least 1, and --played at most --samples".into(),
        ));
    }
    if !(options.temperature.is_finite() && options.temperature > 0.0) {
        return Err(DatagenError::Invalid(format!("--temperature {} must be above 0", options.temperature)));
    }
    let new_player = || Player::new(networks, HASH_MB, Arc::default());
    write_groups(data, out, &options.parents, "scored-moves", new_player, |player, dataset, input, index| {
        group(dataset, input, index, options, player)
    })
}

/// The records of record `index`.
fn group(
    dataset: &Dataset,
    input: &Path,
    index: usize,
    options: &ScoredMoveOptions,
    player: &mut Player<'_>,
) -> Result<Vec<Record>, DatagenError> {
    let record = dataset.get(index);
    let bad = |e: &dyn std::fmt::Display| DatagenError::Invalid(format!("{}: record {index}: {e}", input.display()));
    let position = record.position().map_err(|e| bad(&e))?;
    let played = record.played().map_err(|e| bad(&e))?.and_then(|p| p.to_move(&position));
    // Every parent starts from an empty table: the records depend on the parent alone,
    // whatever the threads and the order of the parents.
    player.new_game();
    let scores = move_scores(&position, options.nodes, player);
    if scores.is_empty() {
        return Ok(Vec::new());
    }
    let weights = softmax(&scores.iter().map(|&(_, cp)| cp).collect::<Vec<_>>(), options.temperature);
    let hard = if played.is_some() { options.played } else { 0 };
    let shares = allot(&weights, options.samples - hard);
    let info = GameInfo { game: 0, result: record.result() };
    let eval = record.eval().unwrap_or(EVAL_NONE);
    let mut records = Vec::with_capacity(options.samples);
    for (&(m, _), share) in scores.iter().zip(shares) {
        let count = share + if Some(m) == played { hard } else { 0 };
        let made =
            Record::new(&position, record.ply(), eval, info, PlayedMove::new(&position, &m)).map_err(|e| bad(&e))?;
        records.extend(std::iter::repeat_n(made, count));
    }
    Ok(records)
}

/// Each legal move of `position` with its score in centipawns for the side that plays it:
/// the negated score of a search of the position after it (`nodes` soft, four times that
/// hard), a mate given at once [`MATE_CP`], a stalemate 0. Empty when the search is stopped
/// or the position has no legal move.
fn move_scores(position: &Chess, nodes: u64, player: &mut Player<'_>) -> Vec<(Move, i32)> {
    let mut scores = Vec::new();
    for m in position.legal_moves() {
        let mut child = position.clone();
        child.play_unchecked(m);
        let cp = if child.legal_moves().is_empty() {
            if child.is_check() { MATE_CP } else { 0 }
        } else {
            let Some(result) = player.search(&Game::new(child), nodes, nodes.saturating_mul(4)) else {
                return Vec::new();
            };
            -centipawns(result.score)
        };
        scores.push((m, cp));
    }
    scores
}

/// `score` on one centipawn scale: a mate in `n` (for the side to move when positive) is
/// `±(MATE_CP − n)`.
fn centipawns(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp.clamp(-MATE_CP / 2, MATE_CP / 2),
        Score::Mate(n) if n > 0 => MATE_CP - n,
        Score::Mate(n) => -MATE_CP - n,
    }
}

/// `exp((s − max) / temperature)` of each score, in `u32` units of at most 2^20 (the best
/// scores get the most; a weight under one unit is 0).
fn softmax(scores: &[i32], temperature: f32) -> Vec<u32> {
    let best = scores.iter().copied().max().unwrap_or(0);
    scores.iter().map(|&s| ((((s - best) as f32) / temperature).exp() * (1 << 20) as f32) as u32).collect()
}

/// `samples` shared out in proportion to `weights` by largest remainders (equal remainders
/// to the first); all zeros when the weights sum to zero.
fn allot(weights: &[u32], samples: usize) -> Vec<usize> {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    if total == 0 {
        return vec![0; weights.len()];
    }
    let exact: Vec<u64> = weights.iter().map(|&w| u64::from(w) * samples as u64).collect();
    let mut shares: Vec<usize> = exact.iter().map(|&e| (e / total) as usize).collect();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exact[i] % total));
    let left = samples - shares.iter().sum::<usize>();
    for &i in order.iter().take(left) {
        shares[i] += 1;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_weights_and_sum_to_the_samples() {
        assert_eq!(allot(&[600, 300, 100], 10), vec![6, 3, 1]);
        assert_eq!(allot(&[5, 3, 2], 4), vec![2, 1, 1], "remainders 0, 0.2, 0.8: the largest gets the last one");
        assert_eq!(allot(&[1, 1, 1], 2), vec![1, 1, 0], "equal remainders go to the first");
        assert_eq!(allot(&[997, 1, 1, 1], 16), vec![16, 0, 0, 0]);
        assert_eq!(allot(&[0, 0], 8), vec![0, 0]);
        assert_eq!(allot(&[], 8), Vec::<usize>::new());
        for samples in [1, 7, 16, 100] {
            let shares = allot(&[13, 8, 5, 3, 2, 1, 1], samples);
            assert_eq!(shares.iter().sum::<usize>(), samples);
        }
    }

    #[test]
    fn softmax_weights_fall_by_e_per_temperature_below_the_best() {
        let w = softmax(&[100, 40, 100, -2000], 60.0);
        assert_eq!(w[0], 1 << 20);
        assert_eq!(w[2], 1 << 20, "equal scores, equal weights");
        let ratio = f64::from(w[1]) / f64::from(w[0]);
        assert!((ratio - (-1f64).exp()).abs() < 1e-4, "60 cp below at temperature 60: 1/e, got {ratio}");
        assert_eq!(w[3], 0, "a blunder gets nothing");
    }

    #[test]
    fn mates_outrank_every_evaluation_and_nearer_ones_more() {
        assert!(centipawns(Score::Mate(1)) > centipawns(Score::Mate(3)));
        assert!(centipawns(Score::Mate(3)) > centipawns(Score::Cp(30_000)));
        assert!(centipawns(Score::Mate(-1)) < centipawns(Score::Mate(-4)));
        assert!(centipawns(Score::Mate(-4)) < centipawns(Score::Cp(-30_000)));
        assert_eq!(centipawns(Score::Cp(-35)), -35);
    }
}
