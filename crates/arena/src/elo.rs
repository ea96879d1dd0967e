//! Elo statistics of a series of games: score, Elo difference from the logistic model, and
//! its 95% confidence interval from the trinomial (win/draw/loss) standard error.

use serde::Serialize;

/// Wins, draws and losses of one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Record {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

/// The Elo difference for an expected score in (0, 1); infinite at 0 and 1.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        // `+ 0.0` turns the -0 of an even score into 0.
        -400.0 * (1.0 / score - 1.0).log10() + 0.0
    }
}

/// An Elo estimate with its 95% interval (NaN ends when every game had the same result).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EloEstimate {
    /// Point estimate.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl std::fmt::Display for EloEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |x: f64| {
            if x.is_finite() {
                format!("{x:+.0}")
            } else if x > 0.0 {
                "+inf".into()
            } else {
                "-inf".into()
            }
        };
        if self.low.is_nan() {
            return write!(f, "{} [no interval: every game had the same result]", show(self.elo));
        }
        write!(f, "{} [{}, {}]", show(self.elo), show(self.low), show(self.high))
    }
}

impl Record {
    /// Adds one game result: +1 win, 0 draw, −1 loss.
    pub fn add(&mut self, sign: i32) {
        match sign.signum() {
            1 => self.wins += 1,
            0 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Points: a win 1, a draw ½.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }

    /// Points per game (0 with no games).
    pub fn score(&self) -> f64 {
        if self.games() == 0 { 0.0 } else { self.points() / f64::from(self.games()) }
    }

    /// Elo difference to the opponents, with the 95% interval of the score mapped through
    /// the logistic curve (score ± 1.96 standard errors of the mean game result).
    pub fn elo(&self) -> Option<EloEstimate> {
        let n = f64::from(self.games());
        if n == 0.0 {
            return None;
        }
        let s = self.score();
        let variance = (f64::from(self.wins) * (1.0 - s).powi(2)
            + f64::from(self.draws) * (0.5 - s).powi(2)
            + f64::from(self.losses) * s.powi(2))
            / n;
        if variance == 0.0 {
            // All wins, all draws or all losses: the spread of results is unknown.
            return Some(EloEstimate { elo: elo_from_score(s), low: f64::NAN, high: f64::NAN });
        }
        let margin = 1.959_963_985 * (variance / n).sqrt();
        Some(EloEstimate { elo: elo_from_score(s), low: elo_from_score(s - margin), high: elo_from_score(s + margin) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_and_interval() {
        assert_eq!(elo_from_score(0.5), 0.0);
        assert!((elo_from_score(0.75) - 190.848).abs() < 0.01);
        let r = Record { wins: 30, draws: 40, losses: 30 };
        let e = r.elo().unwrap();
        assert_eq!(e.elo, 0.0);
        // score 0.5, variance (30·0.25 + 30·0.25)/100 = 0.15, se = sqrt(0.15/100)
        let se = (0.15f64 / 100.0).sqrt();
        assert!((e.high - elo_from_score(0.5 + 1.959_963_985 * se)).abs() < 1e-9);
        assert!((e.low + e.high).abs() < 1e-9, "symmetric at 50%");
        assert_eq!(e.to_string(), "+0 [-53, +53]");
        let sweep = Record { wins: 4, draws: 0, losses: 0 };
        assert_eq!(sweep.elo().unwrap().to_string(), "+inf [no interval: every game had the same result]");
        let draws = Record { wins: 0, draws: 6, losses: 0 };
        assert_eq!(draws.elo().unwrap().to_string(), "+0 [no interval: every game had the same result]");
        let near_sweep = Record { wins: 3, draws: 0, losses: 1 };
        assert_eq!(near_sweep.elo().unwrap().to_string(), "+191 [-126, +inf]");
        assert_eq!(Record::default().elo(), None);
    }
}
