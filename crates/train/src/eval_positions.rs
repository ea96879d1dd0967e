//! Training positions of the evaluation net: records filtered as datagen practice does
//! (quiet, scored, past the opening), held in the side to move's perspective with the
//! score and result from its view, and turned into batches with the blended target
//! `λ · result + (1 − λ) · sigmoid(score / K)`.

use anyhow::Context;
use deepchess_core::Record;
use deepchess_core::features::PERSPECTIVE_FEATURES;
use deepchess_core::record::EVAL_CP_LIMIT;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::{Color, Position};

use crate::data::DataFile;
use crate::nn::perspective::{PerspectiveBatch, side_to_move_view};

/// Default of `--min-ply`.
pub const DEFAULT_MIN_PLY: u16 = 16;
/// Default of `--max-score` (centipawns).
pub const DEFAULT_MAX_SCORE: i16 = 3000;

/// Which records become training positions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct PositionFilters {
    /// Skip positions before this ply (opening-book moves carry no search score anyway).
    #[arg(long, default_value_t = DEFAULT_MIN_PLY)]
    pub min_ply: u16,
    /// Skip positions whose score is beyond ±this many centipawns (mates included).
    #[arg(long, default_value_t = DEFAULT_MAX_SCORE)]
    pub max_score: i16,
    /// Keep positions whose played move is a capture or a promotion (skipped by default:
    /// their static score is not what the search saw).
    #[arg(long)]
    pub keep_noisy: bool,
    /// Keep positions with the side to move in check (skipped by default).
    #[arg(long)]
    pub keep_in_check: bool,
}

impl Default for PositionFilters {
    fn default() -> Self {
        PositionFilters {
            min_ply: DEFAULT_MIN_PLY,
            max_score: DEFAULT_MAX_SCORE,
            keep_noisy: false,
            keep_in_check: false,
        }
    }
}

/// How many records each filter removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FilterCounts {
    /// Records read.
    pub records: usize,
    /// Positions kept.
    pub kept: usize,
    /// No score (opening-book moves, a game's final position without `[%eval]`).
    pub no_score: usize,
    /// Before `--min-ply`.
    pub early: usize,
    /// Score beyond `--max-score` (mates included).
    pub extreme_score: usize,
    /// Played move a capture or promotion.
    pub noisy: usize,
    /// Side to move in check.
    pub in_check: usize,
}

/// Why a record is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    NoScore,
    Early,
    ExtremeScore,
    Noisy,
    InCheck,
}

/// Filtered positions in the side to move's perspective.
#[derive(Clone, Debug, Default)]
pub struct EvalPositions {
    features: Vec<u16>,
    offsets: Vec<usize>,
    /// Score in centipawns, side to move's view.
    scores: Vec<i16>,
    /// Game result, side to move's view: 1, 0, −1.
    results: Vec<i8>,
}

/// One kept position: perspective features, score and result for the side to move.
pub type Kept = (Vec<u16>, i16, i8);

fn convert(record: &Record, filters: &PositionFilters) -> anyhow::Result<Result<Kept, Skip>> {
    let Some(score) = record.eval() else { return Ok(Err(Skip::NoScore)) };
    if record.ply() < filters.min_ply {
        return Ok(Err(Skip::Early));
    }
    if score.abs() > filters.max_score.min(EVAL_CP_LIMIT) {
        return Ok(Err(Skip::ExtremeScore));
    }
    if !filters.keep_noisy
        && let Some(played) = record.played()?
        && (played.capture || played.promotion.is_some())
    {
        return Ok(Err(Skip::Noisy));
    }
    let position = record.position()?;
    if !filters.keep_in_check && position.is_check() {
        return Ok(Err(Skip::InCheck));
    }
    let turn = position.turn();
    let features = record.features()?;
    let pieces = features.as_slice().iter().copied().filter(|&f| usize::from(f) < PERSPECTIVE_FEATURES);
    let (score, result) = if turn == Color::White { (score, record.result()) } else { (-score, -record.result()) };
    Ok(Ok((side_to_move_view(pieces, turn), score, result)))
}

/// The training position of `record` when it passes `filters`, counting it in `counts`
/// (kept, or the filter that removed it).
pub fn keep(record: &Record, filters: &PositionFilters, counts: &mut FilterCounts) -> anyhow::Result<Option<Kept>> {
    counts.records += 1;
    Ok(match convert(record, filters)? {
        Ok(kept) => {
            counts.kept += 1;
            Some(kept)
        }
        Err(skip) => {
            counts.count(skip);
            None
        }
    })
}

impl FilterCounts {
    fn count(&mut self, skip: Skip) {
        match skip {
            Skip::NoScore => self.no_score += 1,
            Skip::Early => self.early += 1,
            Skip::ExtremeScore => self.extreme_score += 1,
            Skip::Noisy => self.noisy += 1,
            Skip::InCheck => self.in_check += 1,
        }
    }
}

impl std::ops::AddAssign for FilterCounts {
    fn add_assign(&mut self, other: FilterCounts) {
        self.records += other.records;
        self.kept += other.kept;
        self.no_score += other.no_score;
        self.early += other.early;
        self.extreme_score += other.extreme_score;
        self.noisy += other.noisy;
        self.in_check += other.in_check;
    }
}

impl EvalPositions {
    /// Moves the positions of `other` after these.
    pub fn append(&mut self, other: EvalPositions) {
        let base = self.features.len();
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.offsets.extend(other.offsets.iter().skip(1).map(|o| base + o));
        self.features.extend(other.features);
        self.scores.extend(other.scores);
        self.results.extend(other.results);
    }

    /// Reads every record of `file` and keeps those that pass `filters`.
    pub fn load(file: &DataFile, filters: &PositionFilters) -> anyhow::Result<(EvalPositions, FilterCounts)> {
        let converted: Vec<Result<Kept, Skip>> = (0..file.len())
            .into_par_iter()
            .map(|i| convert(&file.get(i), filters).with_context(|| format!("{}: record {i}", file.path.display())))
            .collect::<anyhow::Result<_>>()?;
        let mut counts = FilterCounts { records: converted.len(), ..FilterCounts::default() };
        let mut positions = EvalPositions::default();
        for item in converted {
            match item {
                Ok(kept) => {
                    positions.push(&kept);
                    counts.kept += 1;
                }
                Err(skip) => counts.count(skip),
            }
        }
        Ok((positions, counts))
    }

    /// Adds a kept position after these.
    pub fn push(&mut self, (features, score, result): &Kept) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.features.extend_from_slice(features);
        self.offsets.push(self.features.len());
        self.scores.push(*score);
        self.results.push(*result);
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// Score (centipawns) and result (1, 0, −1) of position `i`, side to move's view.
    pub fn score_and_result(&self, i: usize) -> (i16, i8) {
        (self.scores[i], self.results[i])
    }

    /// The batch of positions `indices` with targets `λ · result + (1 − λ) · sigmoid(score / K)`.
    pub fn batch(&self, indices: &[usize], target: &Target) -> PerspectiveBatch {
        let mut batch = PerspectiveBatch::new();
        for &i in indices {
            let (score, result) = self.score_and_result(i);
            batch.push(&self.features[self.offsets[i]..self.offsets[i + 1]], target.of(score, result));
        }
        batch
    }
}

/// The blended training target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Target {
    /// Weight λ of the game result (the score gets 1 − λ).
    pub result_weight: f64,
    /// Centipawns K per logit unit of the score: `sigmoid(score / K)`.
    pub scale: f64,
}

impl Target {
    /// The target of a score and result, side to move's view.
    pub fn of(&self, score: i16, result: i8) -> f32 {
        let result = (f64::from(result) + 1.0) / 2.0;
        (self.result_weight * result + (1.0 - self.result_weight) * sigmoid(f64::from(score) / self.scale)) as f32
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The scale K that best predicts the game results from the scores:
/// `argmin_K Σ (result − sigmoid(score / K))²`, by golden-section search in 50..2000.
pub fn fit_scale(positions: &EvalPositions) -> f64 {
    let error = |k: f64| -> f64 {
        (0..positions.len())
            .into_par_iter()
            .map(|i| {
                let (score, result) = positions.score_and_result(i);
                (((f64::from(result) + 1.0) / 2.0) - sigmoid(f64::from(score) / k)).powi(2)
            })
            .sum()
    };
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (50.0f64, 2000.0f64);
    for _ in 0..40 {
        let (c, d) = (b - ratio * (b - a), a + ratio * (b - a));
        if error(c) < error(d) {
            b = d;
        } else {
            a = c;
        }
    }
    (a + b) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(items: &[(i16, i8)]) -> EvalPositions {
        let mut p = EvalPositions { offsets: vec![0], ..EvalPositions::default() };
        for &(score, result) in items {
            p.features.push(4);
            p.offsets.push(p.features.len());
            p.scores.push(score);
            p.results.push(result);
        }
        p
    }

    #[test]
    fn appended_positions_keep_their_features_scores_and_results() {
        let mut all = EvalPositions::default();
        all.append(positions(&[(10, 1), (-20, 0)]));
        let mut more = positions(&[(30, -1)]);
        more.features[0] = 7;
        all.append(more);
        assert_eq!(all.len(), 3);
        assert_eq!((0..3).map(|i| all.score_and_result(i)).collect::<Vec<_>>(), [(10, 1), (-20, 0), (30, -1)]);
        assert_eq!(all.offsets, [0, 1, 2, 3]);
        assert_eq!(all.features, [4, 4, 7]);
    }

    #[test]
    fn target_blends_result_and_score() {
        let t = Target { result_weight: 0.25, scale: 400.0 };
        assert!((t.of(0, 1) - (0.25 + 0.75 * 0.5)).abs() < 1e-6);
        assert!((t.of(400, -1) - (0.75 / (1.0 + (-1f64).exp())) as f32).abs() < 1e-6);
    }

    #[test]
    fn fitted_scale_recovers_the_scale_results_were_drawn_with() {
        // Results drawn so that P(win) = sigmoid(score / 300) exactly, in proportion.
        let mut items = Vec::new();
        for score in (-900..=900).step_by(30) {
            let p = sigmoid(f64::from(score) / 300.0);
            let wins = (p * 200.0).round() as usize;
            items.extend(std::iter::repeat_n((score as i16, 1), wins));
            items.extend(std::iter::repeat_n((score as i16, -1), 200 - wins));
        }
        let k = fit_scale(&positions(&items));
        assert!((k - 300.0).abs() < 10.0, "{k}");
    }
}
