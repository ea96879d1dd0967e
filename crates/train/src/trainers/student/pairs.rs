//! Pairs labelled by the evaluation search's scores: positions of one game, one or two
//! plies apart (siblings, as a search compares them) and drawn at random from the game,
//! each with the probability `sigmoid((s_a − s_b) / K)` that the first is better for White
//! (`s` White's score from the `[%eval]` comments, mate scores clamped): near-equal scores
//! and draws get a probability near ½, not a coin.

use deepchess_core::record::MATE_BASE;
use rand::Rng;

use crate::data::{DataFile, rng};

/// Purpose of the random stream that draws pairs (see [`rng`]).
const PAIR_STREAM: u64 = 41;

/// Two records of one game and their scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoredPair {
    /// First record.
    pub a: usize,
    /// Second record.
    pub b: usize,
    /// White's score of the first minus that of the second, in centipawns (clamped).
    pub diff: i32,
}

impl ScoredPair {
    /// The probability that the first position is better for White at scale `k`.
    pub fn target(&self, k: f64) -> f32 {
        (1.0 / (1.0 + (-f64::from(self.diff) / k).exp())) as f32
    }
}

/// White's score of a record in centipawns clamped to ±`max_score` (mates at the bound),
/// `None` without one.
fn score(file: &DataFile, i: usize, max_score: i32) -> Option<i32> {
    let e = i32::from(file.get(i).eval()?);
    let e = if e.abs() >= i32::from(MATE_BASE) - 1000 { e.signum() * max_score } else { e };
    Some(e.clamp(-max_score, max_score))
}

/// Every pair of `file`: per scored position, the scored positions one and two plies
/// later in its game and one drawn at random from its game (seeded), each pair in a random
/// order.
pub fn game_pairs(file: &DataFile, max_score: i32, seed: u64) -> Vec<ScoredPair> {
    let mut rng = rng(seed, 0, PAIR_STREAM);
    let mut pairs = Vec::new();
    let mut start = 0;
    while start < file.len() {
        let game = file.get(start).game();
        let end = (start..file.len()).find(|&i| file.get(i).game() != game).unwrap_or(file.len());
        let scored: Vec<(usize, u16, i32)> =
            (start..end).filter_map(|i| score(file, i, max_score).map(|s| (i, file.get(i).ply(), s))).collect();
        for (k, &(i, ply, s)) in scored.iter().enumerate() {
            let later = scored[k + 1..].iter().take_while(|(_, p, _)| *p <= ply + 2);
            let random = scored[rng.random_range(0..scored.len())];
            for &(j, _, t) in later.chain(std::iter::once(&random)).filter(|(j, _, _)| *j != i) {
                let pair = if rng.random_bool(0.5) {
                    ScoredPair { a: i, b: j, diff: s - t }
                } else {
                    ScoredPair { a: j, b: i, diff: t - s }
                };
                pairs.push(pair);
            }
        }
        start = end;
    }
    pairs
}
