//! The settings of a datagen run: what decides the games (stored in `summary.json` and
//! compared when a run resumes) and how long and how wide this run goes.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Everything that decides which games are played and where they land: two runs with the
/// same settings play the same game for the same game number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameOptions {
    /// Model directory (`None`: the embedded models).
    pub models: Option<PathBuf>,
    /// Soft node limit per move: no iteration starts after it.
    pub nodes: u64,
    /// Hard node limit per move: the search aborts.
    pub hard_nodes: u64,
    /// Uniformly random legal plies played from the start or book position.
    pub random_plies: u32,
    /// Opening book (EPD or PGN); `None`: the standard start position.
    pub book: Option<PathBuf>,
    /// Seed of the openings and of the train/validation split.
    pub seed: u64,
    /// Nodes of the search that scores an opening.
    pub opening_nodes: u64,
    /// Openings scoring beyond ± this many centipawns are drawn again.
    pub opening_bound: i32,
    /// Win adjudication: |score| at least this many centipawns ...
    pub win_score: i32,
    /// ... for this many consecutive plies.
    pub win_plies: u32,
    /// Draw adjudication only after this ply of the game.
    pub draw_after: u32,
    /// Draw adjudication: |score| at most this many centipawns ...
    pub draw_score: i32,
    /// ... for this many consecutive plies.
    pub draw_plies: u32,
    /// Games still going after this many plies (from the first searched move) are draws.
    pub max_plies: u32,
    /// Fraction of games in the validation split.
    pub validation_fraction: f64,
    /// Transposition table per thread, in MB.
    pub hash_mb: usize,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            models: None,
            nodes: 5000,
            hard_nodes: 20_000,
            random_plies: 8,
            book: None,
            seed: 0,
            opening_nodes: 1000,
            opening_bound: 300,
            win_score: 2000,
            win_plies: 6,
            draw_after: 80,
            draw_score: 10,
            draw_plies: 12,
            max_plies: 400,
            validation_fraction: 0.05,
            hash_mb: 16,
        }
    }
}

/// When a run stops taking new games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Once the output holds this many games.
    Games(u64),
    /// Once the output holds this many positions.
    Positions(u64),
}

/// A whole run: the game settings, the output directory and this run's extent.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// What decides the games.
    pub game: GameOptions,
    /// Output directory.
    pub out: PathBuf,
    /// When to stop.
    pub target: Target,
    /// Worker threads, one game each.
    pub threads: usize,
    /// Start afresh: replace a previous datagen output in `out`.
    pub force: bool,
    /// Also write the games as PGN with `[%eval]` comments to `out/games.pgn`.
    pub pgn: bool,
    /// Git commit of the build, recorded in `summary.json` by the run that starts the output.
    pub build: Option<String>,
}

impl RunOptions {
    /// Checks every setting; the error names the command-line option at fault.
    pub fn validate(&self) -> Result<(), String> {
        let g = &self.game;
        let positive = |name: &str, value: u64| {
            if value == 0 { Err(format!("--{name} must be at least 1")) } else { Ok(()) }
        };
        let non_negative = |name: &str, value: i32| {
            if value < 0 { Err(format!("--{name} must not be negative, got {value}")) } else { Ok(()) }
        };
        positive("threads", self.threads as u64)?;
        match self.target {
            Target::Games(n) => positive("games", n)?,
            Target::Positions(n) => positive("positions", n)?,
        }
        positive("nodes", g.nodes)?;
        positive("opening-nodes", g.opening_nodes)?;
        positive("win-plies", u64::from(g.win_plies))?;
        positive("draw-plies", u64::from(g.draw_plies))?;
        positive("max-plies", u64::from(g.max_plies))?;
        positive("hash", g.hash_mb as u64)?;
        if g.hard_nodes < g.nodes {
            return Err(format!("--hard-nodes ({}) must be at least --nodes ({})", g.hard_nodes, g.nodes));
        }
        non_negative("opening-bound", g.opening_bound)?;
        non_negative("draw-score", g.draw_score)?;
        if g.win_score <= 0 {
            return Err(format!("--win-score must be positive, got {}", g.win_score));
        }
        if !(0.0..=1.0).contains(&g.validation_fraction) {
            return Err(format!("--validation-fraction must be in 0..=1, got {}", g.validation_fraction));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunOptions {
        RunOptions {
            game: GameOptions::default(),
            out: PathBuf::from("out"),
            target: Target::Games(1),
            threads: 1,
            force: false,
            pgn: false,
            build: None,
        }
    }

    #[test]
    fn bad_settings_name_their_option() {
        assert!(run().validate().is_ok());
        let mut o = run();
        o.threads = 0;
        assert!(o.validate().unwrap_err().contains("--threads"));
        let mut o = run();
        o.game.opening_bound = -1;
        assert!(o.validate().unwrap_err().contains("--opening-bound"));
        let mut o = run();
        o.game.hard_nodes = 10;
        assert!(o.validate().unwrap_err().contains("--hard-nodes"));
        let mut o = run();
        o.game.win_score = 0;
        assert!(o.validate().unwrap_err().contains("--win-score"));
        let mut o = run();
        o.game.validation_fraction = 1.5;
        assert!(o.validate().unwrap_err().contains("--validation-fraction"));
    }
}
