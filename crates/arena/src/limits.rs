//! Search limits: time per move, fixed nodes or depth, or a game clock with increment; the
//! `go` arguments they give and how long to wait before an engine counts as hung.

use std::time::Duration;

/// How long an engine may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// Fixed time per move (`go movetime`).
    MoveTime(Duration),
    /// Fixed nodes per move (`go nodes`).
    Nodes(u64),
    /// Fixed depth per move (`go depth`).
    Depth(u32),
    /// A clock per side with an increment per move (`go wtime btime winc binc`).
    Clock {
        /// Starting time of each side.
        base: Duration,
        /// Added after each move.
        increment: Duration,
    },
}

impl TimeControl {
    /// Reads a clock written `SECONDS+INCREMENT` (`10+0.1`, `60`, `2+0`).
    pub fn parse_clock(text: &str) -> Result<TimeControl, String> {
        let (base, increment) = text.split_once('+').unwrap_or((text, "0"));
        let seconds = |s: &str| -> Result<Duration, String> {
            let value: f64 =
                s.trim().parse().map_err(|_| format!("--tc \"{text}\": \"{s}\" is not a number of seconds"))?;
            Duration::try_from_secs_f64(value).map_err(|_| format!("--tc \"{text}\": \"{s}\" is not a duration"))
        };
        let (base, increment) = (seconds(base)?, seconds(increment)?);
        if base.is_zero() {
            return Err(format!("--tc \"{text}\": the base time must be positive"));
        }
        Ok(TimeControl::Clock { base, increment })
    }

    /// The arguments of `go` given the clocks (White, Black) before the move.
    pub fn go_args(&self, clocks: [Duration; 2]) -> String {
        match self {
            TimeControl::MoveTime(t) => format!("movetime {}", t.as_millis()),
            TimeControl::Nodes(n) => format!("nodes {n}"),
            TimeControl::Depth(d) => format!("depth {d}"),
            TimeControl::Clock { increment, .. } => format!(
                "wtime {} btime {} winc {} binc {}",
                clocks[0].as_millis(),
                clocks[1].as_millis(),
                increment.as_millis(),
                increment.as_millis()
            ),
        }
    }

    /// How long to wait for `bestmove` before the engine counts as hung: the time it may
    /// use (its clock, or the move time) plus `margin`, or `hang` for nodes and depth.
    pub fn wait_limit(&self, own_clock: Duration, margin: Duration, hang: Duration) -> Duration {
        match self {
            TimeControl::MoveTime(t) => *t + margin,
            TimeControl::Clock { .. } => own_clock + margin,
            TimeControl::Nodes(_) | TimeControl::Depth(_) => hang,
        }
    }

    /// The starting clock of each side (zero for limits without a clock).
    pub fn start_clock(&self) -> Duration {
        match self {
            TimeControl::Clock { base, .. } => *base,
            _ => Duration::ZERO,
        }
    }

    /// The PGN `TimeControl` tag: `10+0.1`, `1/0.1` for a time per move, `-` otherwise.
    pub fn pgn_tag(&self) -> String {
        match self {
            TimeControl::MoveTime(t) => format!("1/{}", t.as_secs_f64()),
            TimeControl::Clock { base, increment } => format!("{}+{}", base.as_secs_f64(), increment.as_secs_f64()),
            TimeControl::Nodes(_) | TimeControl::Depth(_) => "-".into(),
        }
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeControl::MoveTime(t) => write!(f, "{} ms per move", t.as_millis()),
            TimeControl::Nodes(n) => write!(f, "{n} nodes per move"),
            TimeControl::Depth(d) => write!(f, "depth {d}"),
            TimeControl::Clock { base, increment } => write!(f, "{}+{} s", base.as_secs_f64(), increment.as_secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_and_go_arguments() {
        let tc = TimeControl::parse_clock("10+0.1").unwrap();
        assert_eq!(tc, TimeControl::Clock { base: Duration::from_secs(10), increment: Duration::from_millis(100) });
        assert_eq!(
            tc.go_args([Duration::from_millis(9500), Duration::from_secs(10)]),
            "wtime 9500 btime 10000 winc 100 binc 100"
        );
        assert_eq!(tc.pgn_tag(), "10+0.1");
        assert_eq!(TimeControl::parse_clock("60").unwrap().pgn_tag(), "60+0");
        assert!(TimeControl::parse_clock("x+1").unwrap_err().contains("\"x\""));
        assert!(TimeControl::parse_clock("0+1").unwrap_err().contains("positive"));
        assert_eq!(TimeControl::MoveTime(Duration::from_millis(100)).go_args([Duration::ZERO; 2]), "movetime 100");
        assert_eq!(TimeControl::MoveTime(Duration::from_millis(100)).pgn_tag(), "1/0.1");
        let hang = Duration::from_secs(60);
        assert_eq!(TimeControl::Nodes(5).wait_limit(Duration::ZERO, Duration::from_secs(1), hang), hang);
    }
}
