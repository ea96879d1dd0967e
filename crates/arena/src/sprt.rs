//! The sequential probability ratio test of engine testing as fishtest and fastchess run it:
//! games are played in pairs (one opening, colours swapped), each pair scores 0, ½, 1, 1½ or
//! 2 points (the pentanomial counts), and after every pair the generalised log-likelihood
//! ratio (GSPRT) of H1 (Elo = elo1) against H0 (Elo = elo0) is compared with the bounds
//! ln(β/(1−α)) and ln((1−β)/α).
//!
//! The LLR follows fishtest's `LLRcalc.py` and fastchess's `sprt.cpp`: empty counts are
//! replaced by 0.001, and each hypothesis is represented by the maximum-likelihood
//! distribution over the five pair scores under its constraint (M. Van den Bergh, "Comments
//! on normalized Elo", proposition 1.1 for a given mean score, section 4.1 for a given
//! t-value). The bounds are in normalised Elo by default (fastchess's default `model`,
//! fishtest's current one) or in logistic Elo.

use std::collections::BTreeMap;
use std::f64::consts::{LN_10, SQRT_2};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::elo::{EloEstimate, Record, elo_from_score};
use crate::tournament::FinishedGame;

/// The score of a game pair per game: 0 (two losses), ¼, ½ (two draws or a win and a
/// loss), ¾, 1 (two wins); index = half-points of the pair.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// What an empty pentanomial count is replaced by (fishtest's and fastchess's prior).
const EMPTY_COUNT: f64 = 1e-3;

/// Normalised Elo per t-value of one game: 800 / ln 10.
const NELO_PER_T: f64 = 800.0 / LN_10;

/// The 97.5% quantile of the standard normal distribution.
const Z_95: f64 = 1.959_963_984_540_054;

/// Normalised Elo bounds beyond which the constrained maximum-likelihood distribution does
/// not exist for every outcome (the t-value would need a spread five pair scores lack).
pub const MAX_NORMALIZED_ELO: f64 = 200.0;

/// The Elo scale of the hypotheses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EloModel {
    /// Normalised Elo: the expected score's distance from ½ in standard deviations of a
    /// game pair, scaled so that small differences read like logistic Elo at a typical draw
    /// rate (fastchess's default, fishtest's).
    Normalized,
    /// Logistic Elo: expected score 1 / (1 + 10^(−Elo/400)).
    Logistic,
}

impl fmt::Display for EloModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EloModel::Normalized => "normalized",
            EloModel::Logistic => "logistic",
        })
    }
}

/// Largest Elo bound a logistic test takes: beyond it one side scores over 99.7%, and no
/// test needs games to tell that.
const MAX_LOGISTIC_ELO: f64 = 1000.0;

/// A number for a message: as written when short, in scientific notation when huge or tiny
/// (`1e308` rather than 309 digits).
fn short(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() > 12 { format!("{x:e}") } else { plain }
}

/// The hypotheses and error rates of a test, checked when made.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SprtSettings {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    model: EloModel,
}

impl SprtSettings {
    /// H0: Elo = `elo0`, H1: Elo = `elo1` (`elo0 < elo1`), false-positive rate `alpha`,
    /// false-negative rate `beta` (each in (0, 1), summing to less than 1).
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64, model: EloModel) -> Result<SprtSettings, String> {
        let (e0, e1) = (short(elo0), short(elo1));
        if !elo0.is_finite() || !elo1.is_finite() || elo0 >= elo1 {
            return Err(format!("elo0 ({e0}) must be less than elo1 ({e1})"));
        }
        if model == EloModel::Normalized && elo0.abs().max(elo1.abs()) > MAX_NORMALIZED_ELO {
            return Err(format!("normalized Elo bounds must lie within ±{MAX_NORMALIZED_ELO} (got {e0}, {e1})"));
        }
        if model == EloModel::Logistic && elo0.abs().max(elo1.abs()) > MAX_LOGISTIC_ELO {
            return Err(format!("logistic Elo bounds must lie within ±{MAX_LOGISTIC_ELO} (got {e0}, {e1})"));
        }
        for (name, rate) in [("alpha", alpha), ("beta", beta)] {
            let inside = rate > 0.0 && rate < 1.0;
            if !inside {
                return Err(format!("{name} must lie between 0 and 1 (got {})", short(rate)));
            }
        }
        if alpha + beta >= 1.0 {
            return Err(format!("alpha + beta must be less than 1 (got {alpha} + {beta})"));
        }
        Ok(SprtSettings { elo0, elo1, alpha, beta, model })
    }

    /// H0's Elo.
    pub fn elo0(&self) -> f64 {
        self.elo0
    }

    /// H1's Elo.
    pub fn elo1(&self) -> f64 {
        self.elo1
    }

    /// The Elo scale of both.
    pub fn model(&self) -> EloModel {
        self.model
    }

    /// H0 is accepted at or below ln(β / (1 − α)).
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// H1 is accepted at or above ln((1 − β) / α).
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The decision for a log-likelihood ratio.
    pub fn verdict(&self, llr: f64) -> Verdict {
        if llr >= self.upper_bound() {
            Verdict::H1
        } else if llr <= self.lower_bound() {
            Verdict::H0
        } else {
            Verdict::Continue
        }
    }
}

impl FromStr for SprtSettings {
    type Err = String;

    /// Reads `elo0=0,elo1=10,alpha=0.05,beta=0.05[,model=normalized|logistic]`; alpha and
    /// beta default to 0.05, the model to normalized.
    fn from_str(text: &str) -> Result<SprtSettings, String> {
        let (mut elo0, mut elo1, mut alpha, mut beta, mut model) = (None, None, 0.05, 0.05, EloModel::Normalized);
        let mut seen: Vec<&str> = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| format!("expected key=value, got \"{pair}\""))?;
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(format!("{key} is given twice"));
            }
            seen.push(key);
            let number = || value.parse::<f64>().map_err(|_| format!("{key}: \"{value}\" is not a number"));
            match key {
                "elo0" => elo0 = Some(number()?),
                "elo1" => elo1 = Some(number()?),
                "alpha" => alpha = number()?,
                "beta" => beta = number()?,
                "model" => {
                    model = match value {
                        "normalized" | "normalised" => EloModel::Normalized,
                        "logistic" => EloModel::Logistic,
                        _ => return Err(format!("model: \"{value}\" is neither normalized nor logistic")),
                    }
                }
                _ => return Err(format!("unknown key \"{key}\" (elo0, elo1, alpha, beta, model)")),
            }
        }
        let (Some(elo0), Some(elo1)) = (elo0, elo1) else { return Err("elo0 and elo1 are required".into()) };
        SprtSettings::new(elo0, elo1, alpha, beta, model)
    }
}

impl fmt::Display for SprtSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "H0 {} vs H1 {} ({} Elo), alpha {}, beta {}", self.elo0, self.elo1, self.model, self.alpha, self.beta)
    }
}

/// The decision of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// The LLR is between the bounds: play on.
    Continue,
    /// The LLR reached the lower bound: Elo = elo0 accepted.
    H0,
    /// The LLR reached the upper bound: Elo = elo1 accepted.
    H1,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Continue => "no decision",
            Verdict::H0 => "H0 accepted",
            Verdict::H1 => "H1 accepted",
        })
    }
}

/// Game pairs by their score from one player's view, in half-points: `[LL, LD, DD + WL, WD,
/// WW]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pentanomial(pub [u32; 5]);

impl Pentanomial {
    /// Adds a pair from the two game results (+1 win, 0 draw, −1 loss).
    pub fn add(&mut self, first: i32, second: i32) {
        self.0[(first.signum() + second.signum() + 2) as usize] += 1;
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u32 {
        self.0.iter().sum()
    }

    /// The counts with empty ones replaced by [`EMPTY_COUNT`], their total, and the
    /// frequencies.
    fn regularized(&self) -> (f64, [f64; 5]) {
        let counts = self.0.map(|c| if c == 0 { EMPTY_COUNT } else { f64::from(c) });
        let total: f64 = counts.iter().sum();
        (total, counts.map(|c| c / total))
    }

    /// The generalised log-likelihood ratio of H1 against H0; 0 without pairs.
    pub fn llr(&self, settings: &SprtSettings) -> f64 {
        if self.pairs() == 0 {
            return 0.0;
        }
        let (total, observed) = self.regularized();
        let [h0, h1] = [settings.elo0, settings.elo1].map(|elo| match settings.model {
            EloModel::Logistic => mle_with_mean(&observed, 1.0 / (1.0 + 10f64.powf(-elo / 400.0))),
            EloModel::Normalized => mle_with_t_value(&observed, elo * SQRT_2 / NELO_PER_T),
        });
        total * (0..5).map(|i| observed[i] * (h1[i].ln() - h0[i].ln())).sum::<f64>()
    }

    /// Mean and variance of the per-game score of a pair (from the regularised counts, as
    /// fishtest's Elo estimate; `None` without pairs).
    fn score_and_variance(&self) -> Option<(f64, f64)> {
        (self.pairs() > 0).then(|| mean_and_variance(&self.regularized().1))
    }

    /// Logistic Elo with its 95% interval from the pentanomial variance: the mean pair score
    /// s ± 1.96·σ/√pairs mapped through the logistic curve.
    pub fn elo(&self) -> Option<EloEstimate> {
        let (s, variance) = self.score_and_variance()?;
        let margin = Z_95 * (variance / f64::from(self.pairs())).sqrt();
        Some(EloEstimate { elo: elo_from_score(s), low: elo_from_score(s - margin), high: elo_from_score(s + margin) })
    }

    /// Normalised Elo: (s − ½) / √(2σ²) · 800 / ln 10, σ² the variance of a pair's per-game
    /// score.
    pub fn normalized_elo(&self) -> Option<f64> {
        let (s, variance) = self.score_and_variance()?;
        Some((s - 0.5) / (2.0 * variance).sqrt() * NELO_PER_T)
    }

    /// Likelihood of superiority: the probability that the true score exceeds ½, Φ((s − ½)
    /// / (σ/√pairs)).
    pub fn los(&self) -> Option<f64> {
        let (s, variance) = self.score_and_variance()?;
        Some(normal_cdf((s - 0.5) / (variance / f64::from(self.pairs())).sqrt()))
    }
}

/// Mean and variance of the pair scores under the distribution `p`.
fn mean_and_variance(p: &[f64; 5]) -> (f64, f64) {
    let mean: f64 = (0..5).map(|i| p[i] * PAIR_SCORES[i]).sum();
    (mean, (0..5).map(|i| p[i] * (PAIR_SCORES[i] - mean).powi(2)).sum())
}

/// The root x of Σ pᵢ·aᵢ / (1 + x·aᵢ) = 0 between −1/max aᵢ and −1/min aᵢ, where the sum
/// falls from +∞ to −∞; `None` unless the aᵢ have both signs.
fn secular_root(a: &[f64; 5], p: &[f64; 5]) -> Option<f64> {
    let (min, max) = a.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if !(min < 0.0 && max > 0.0) {
        return None;
    }
    let f = |x: f64| (0..5).map(|i| p[i] * a[i] / (1.0 + x * a[i])).sum::<f64>();
    let (mut low, mut high) = (-1.0 / max, -1.0 / min);
    // Bisection: the sum is decreasing, and halving the interval to the end of f64 precision
    // takes at most a few hundred steps.
    for _ in 0..300 {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if f(mid) > 0.0 { low = mid } else { high = mid }
    }
    Some(0.5 * (low + high))
}

/// The distribution closest (maximum likelihood) to `observed` whose mean pair score is `s`
/// (Van den Bergh, proposition 1.1).
fn mle_with_mean(observed: &[f64; 5], s: f64) -> [f64; 5] {
    let a = PAIR_SCORES.map(|x| x - s);
    match secular_root(&a, observed) {
        Some(x) => std::array::from_fn(|i| observed[i] / (1.0 + x * a[i])),
        None => *observed,
    }
}

/// The distribution closest (maximum likelihood) to `observed` whose t-value (mean − ½) /
/// σ is `t`, by the fixed-point iteration of Van den Bergh's section 4.1 from the uniform
/// distribution, until no probability moves by more than 1e-12.
fn mle_with_t_value(observed: &[f64; 5], t: f64) -> [f64; 5] {
    let mut p = [0.2; 5];
    for _ in 0..100 {
        let (mean, variance) = mean_and_variance(&p);
        let sigma = variance.sqrt();
        let a = PAIR_SCORES.map(|x| x - 0.5 - 0.5 * t * sigma * (1.0 + ((x - mean) / sigma).powi(2)));
        let Some(x) = secular_root(&a, observed) else { break };
        let next: [f64; 5] = std::array::from_fn(|i| observed[i] / (1.0 + x * a[i]));
        let moved = (0..5).map(|i| (next[i] - p[i]).abs()).fold(0.0, f64::max);
        p = next;
        if moved < 1e-12 {
            break;
        }
    }
    p
}

/// The standard normal distribution function, Φ(x) = erfc(−x/√2) / 2, with erfc from its
/// Chebyshev fit in Numerical Recipes (relative error below 1.2e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = (x / SQRT_2).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = [
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ]
    .iter()
    .rev()
    .fold(0.0, |acc, c| acc * t + c);
    let erfc = t * (-z * z - 1.265_512_23 + t * poly).exp();
    if x >= 0.0 { 1.0 - 0.5 * erfc } else { 0.5 * erfc }
}

/// A test in progress between the first player of a two-player match and the second: games
/// arrive in any order and are paired by schedule (games 2k + 1 and 2k + 2 share an opening
/// with colours swapped); the decision is taken at the first pair whose LLR reaches a bound
/// and kept, while pairs still arriving (games in flight when the match stopped) go on
/// counting.
#[derive(Clone, Debug)]
pub struct SprtTest {
    settings: SprtSettings,
    pentanomial: Pentanomial,
    /// The first player's results over every game, paired or not.
    record: Record,
    /// First games of unfinished pairs: pair number → result (first player's view).
    waiting: BTreeMap<usize, i32>,
    /// The decision and the pairs it took.
    decision: Option<(Verdict, u32)>,
}

impl SprtTest {
    /// A test with no games yet.
    pub fn new(settings: SprtSettings) -> SprtTest {
        SprtTest {
            settings,
            pentanomial: Pentanomial::default(),
            record: Record::default(),
            waiting: BTreeMap::new(),
            decision: None,
        }
    }

    /// The hypotheses.
    pub fn settings(&self) -> &SprtSettings {
        &self.settings
    }

    /// The log-likelihood ratio over the pairs finished so far.
    pub fn llr(&self) -> f64 {
        self.pentanomial.llr(&self.settings)
    }

    /// Counts a game of the match; returns the verdict when this game's pair decided the
    /// test.
    pub fn add(&mut self, game: &FinishedGame) -> Option<Verdict> {
        let sign = game.record.end.result.white_sign();
        let result = if game.pairing.white == 0 { sign } else { -sign };
        self.record.add(result);
        let pair = (game.pairing.round - 1) / 2;
        let Some(first) = self.waiting.remove(&pair) else {
            self.waiting.insert(pair, result);
            return None;
        };
        self.pentanomial.add(first, result);
        if self.decision.is_some() {
            return None;
        }
        let verdict = self.settings.verdict(self.llr());
        (verdict != Verdict::Continue).then(|| {
            self.decision = Some((verdict, self.pentanomial.pairs()));
            verdict
        })
    }

    /// The state of the test.
    pub fn report(&self) -> SprtReport {
        let p = &self.pentanomial;
        SprtReport {
            settings: self.settings,
            llr: self.llr(),
            lower_bound: self.settings.lower_bound(),
            upper_bound: self.settings.upper_bound(),
            verdict: self.decision.map_or(Verdict::Continue, |(v, _)| v),
            decided_after_pairs: self.decision.map(|(_, pairs)| pairs),
            pentanomial: *p,
            unpaired_games: self.waiting.len(),
            record: self.record,
            elo: p.elo(),
            normalized_elo: p.normalized_elo(),
            los: p.los(),
        }
    }
}

/// Where a test stands, for the summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SprtReport {
    /// The hypotheses.
    pub settings: SprtSettings,
    /// Log-likelihood ratio of H1 against H0 over every finished pair.
    pub llr: f64,
    /// H0 is accepted at or below it.
    pub lower_bound: f64,
    /// H1 is accepted at or above it.
    pub upper_bound: f64,
    /// The decision (kept once taken).
    pub verdict: Verdict,
    /// The pairs it took.
    pub decided_after_pairs: Option<u32>,
    /// Finished pairs by score.
    pub pentanomial: Pentanomial,
    /// Games whose partner was not played (an odd cap, or a match stopped mid-pair).
    pub unpaired_games: usize,
    /// The first player's wins, draws and losses over every game.
    pub record: Record,
    /// Logistic Elo with its 95% interval (pentanomial variance).
    pub elo: Option<EloEstimate>,
    /// Normalised Elo.
    pub normalized_elo: Option<f64>,
    /// Likelihood of superiority.
    pub los: Option<f64>,
}

impl fmt::Display for SprtReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.record;
        let [ll, ld, dd_wl, wd, ww] = self.pentanomial.0;
        let verdict = match self.decided_after_pairs {
            Some(pairs) => format!("{} after {pairs} pairs", self.verdict),
            None => "no decision".to_owned(),
        };
        writeln!(f, "SPRT {}", self.settings)?;
        writeln!(f, "LLR {:.2} [{:.2}, {:.2}]: {verdict}", self.llr, self.lower_bound, self.upper_bound)?;
        write!(
            f,
            "pentanomial [LL, LD, DD+WL, WD, WW]: [{ll}, {ld}, {dd_wl}, {wd}, {ww}] ({} pairs",
            self.pentanomial.pairs()
        )?;
        if self.unpaired_games > 0 {
            let plural = if self.unpaired_games == 1 { "" } else { "s" };
            write!(f, ", {} unpaired game{plural} left out", self.unpaired_games)?;
        }
        writeln!(f, ")")?;
        write!(f, "W/D/L {}/{}/{} ({} games)", r.wins, r.draws, r.losses, r.games())?;
        if let (Some(elo), Some(nelo), Some(los)) = (self.elo, self.normalized_elo, self.los) {
            let show = |x: f64| {
                if x.is_finite() {
                    format!("{x:+.2}")
                } else if x > 0.0 {
                    "+inf".into()
                } else {
                    "-inf".into()
                }
            };
            write!(
                f,
                ", Elo {} [{}, {}] (95%), nElo {nelo:+.2}, LOS {:.1}%",
                show(elo.elo),
                show(elo.low),
                show(elo.high),
                100.0 * los
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
