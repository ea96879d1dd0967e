//! MCTS visit distributions as move records, the move predictors' training targets: each
//! parent position of a dataset is searched by the engine's MCTS (`Search mcts`, its
//! defaults, one thread, a fresh tree) for a number of playouts, and the root's visits are
//! shared out among `samples` records of the position, one move each, by largest
//! remainders. A predictor trained on them (`train movepred --data OUT`) learns the
//! search's distribution over the moves, as AlphaZero's and Monty's policies learn their
//! search's visits, instead of the one move a game played. A proven win's root gives all
//! its records to the winning move.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use deepchess_core::record::EVAL_NONE;
use deepchess_core::{Dataset, GameInfo, PlayedMove, Record, Split};
use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::mcts::{Mcts, MctsOptions};
use deepchess_engine::search::{Control, Limits, Score};
use shakmaty::Position;

use crate::error::DatagenError;
use crate::groups::{GroupCounts, Parents, write_groups};

/// How the visit records are made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisitOptions {
    /// Which records are parents.
    pub parents: Parents,
    /// Playouts of each parent's search (`go nodes`).
    pub playouts: u64,
    /// Records per parent, shared out by visits.
    pub samples: usize,
}

/// Writes `out/moves-{train,validation}.bin`, for each parent in
/// `data/moves-{train,validation}.bin` (a split that `data` lacks is skipped) a group of
/// `samples` records of the parent's position (its ply, score and result) whose moves are
/// shared out by the visits of its search's root, as [`write_groups`] does. A parent with no
/// legal move gives no group.
pub fn visits(
    data: &Path,
    out: &Path,
    options: &VisitOptions,
    networks: &Networks,
) -> Result<Vec<(Split, GroupCounts)>, DatagenError> {
    if options.playouts == 0 || options.samples == 0 {
        return Err(DatagenError::Invalid("--playouts and --samples must be at least 1".into()));
    }
    write_groups(
        data,
        out,
        &options.parents,
        "visits",
        || (),
        |(), dataset, input, index| group(dataset, input, index, options, networks),
    )
}

/// The visit records of record `index`.
fn group(
    dataset: &Dataset,
    input: &Path,
    index: usize,
    options: &VisitOptions,
    networks: &Networks,
) -> Result<Vec<Record>, DatagenError> {
    let record = dataset.get(index);
    let bad = |e: &dyn std::fmt::Display| DatagenError::Invalid(format!("{}: record {index}: {e}", input.display()));
    let position = record.position().map_err(|e| bad(&e))?;
    if position.legal_moves().is_empty() {
        return Ok(Vec::new());
    }
    // A player of its own per parent, seeded by the record: the same records whatever the
    // threads and the order of the parents.
    let mut mcts = Mcts::new(MctsOptions::default(), index as u64);
    let limits = Limits { nodes: Some(options.playouts), ..Limits::default() };
    let control = Control::new(&limits, position.turn(), Duration::ZERO, Arc::default());
    let result = mcts.search(networks, &Game::new(position.clone()), &control, &mut |_| {});
    let visits = match result.score {
        Score::Mate(n) if n > 0 => vec![(result.best, 1)],
        _ => mcts.root_visits(),
    };
    let weights: Vec<u32> = visits.iter().map(|&(_, v)| v).collect();
    let info = GameInfo { game: 0, result: record.result() };
    let eval = record.eval().unwrap_or(EVAL_NONE);
    let mut records = Vec::with_capacity(options.samples);
    for ((m, _), share) in visits.iter().zip(allot(&weights, options.samples)) {
        let played = PlayedMove::new(&position, m);
        let made = Record::new(&position, record.ply(), eval, info, played).map_err(|e| bad(&e))?;
        records.extend(std::iter::repeat_n(made, share));
    }
    Ok(records)
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
}
