//! `summary.json`: the options that decided the games, the counts, and the time spent,
//! rewritten atomically after every game.

use std::collections::BTreeMap;
use std::path::Path;

use deepchess_core::atomic::write_atomic;
use serde::{Deserialize, Serialize};

use crate::adjudication::Termination;
use crate::error::{DatagenError, io_error};
use crate::game::PlayedGame;
use crate::options::GameOptions;

/// File name of the summary inside the output directory.
pub const SUMMARY_FILE: &str = "summary.json";
/// The `generator` field marking a directory as datagen output.
pub const GENERATOR: &str = "deepchess datagen";

/// Counts and settings of a datagen output directory, over all its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`GENERATOR`]; what makes `--force` willing to replace the directory.
    pub generator: String,
    /// The options every game was played with.
    pub options: GameOptions,
    /// Games written.
    pub games: u64,
    /// Positions (records) written, both splits.
    pub positions: u64,
    /// Positions in `moves-train.bin`.
    pub train_positions: u64,
    /// Positions in `moves-validation.bin`.
    pub validation_positions: u64,
    /// Games won by White.
    pub white_wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games won by Black.
    pub black_wins: u64,
    /// Games by how they ended (of the games this file was updated for; a game written just
    /// before a kill is counted above but not here).
    pub terminations: BTreeMap<Termination, u64>,
    /// One more than the highest game number written: where a resumed run continues, so no
    /// game is written twice.
    pub next_game: u32,
    /// Wall-clock seconds of all runs.
    pub seconds: f64,
    /// Seconds the worker threads spent on games, summed over threads.
    pub worker_seconds: f64,
    /// Seconds of those inside the search.
    pub search_seconds: f64,
    /// Nodes searched.
    pub nodes: u64,
    /// When this file was written (UTC, RFC 3339).
    pub updated: String,
    /// Git commit of the build that started the output (`None` in outputs from before it
    /// was recorded).
    #[serde(default)]
    pub build: Option<String>,
}

impl Summary {
    /// An empty summary for games played with `options`.
    pub fn new(options: GameOptions) -> Summary {
        Summary {
            generator: GENERATOR.to_string(),
            options,
            games: 0,
            positions: 0,
            train_positions: 0,
            validation_positions: 0,
            white_wins: 0,
            draws: 0,
            black_wins: 0,
            terminations: BTreeMap::new(),
            next_game: 0,
            seconds: 0.0,
            worker_seconds: 0.0,
            search_seconds: 0.0,
            nodes: 0,
            updated: String::new(),
            build: None,
        }
    }

    /// Reads `dir/summary.json`; `None` when there is none.
    pub fn load(dir: &Path) -> Result<Option<Summary>, DatagenError> {
        let path = dir.join(SUMMARY_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(io_error(&path))?;
        let summary: Summary = serde_json::from_str(&text).map_err(|e| {
            DatagenError::Invalid(format!(
                "{}: not a datagen summary ({e}); not touching {}",
                path.display(),
                dir.display()
            ))
        })?;
        if summary.generator != GENERATOR {
            return Err(DatagenError::Invalid(format!("{} was not written by {GENERATOR}", path.display())));
        }
        Ok(Some(summary))
    }

    /// Writes `dir/summary.json` atomically, stamped with the current time.
    pub fn save(&mut self, dir: &Path) -> Result<(), DatagenError> {
        self.updated = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let text = serde_json::to_string_pretty(self).expect("summary serialises");
        write_atomic(&dir.join(SUMMARY_FILE), text.as_bytes())?;
        Ok(())
    }

    /// Zeroes the game, position and result counts (to count them again from the datasets).
    pub fn clear_counts(&mut self) {
        self.games = 0;
        self.positions = 0;
        self.train_positions = 0;
        self.validation_positions = 0;
        self.white_wins = 0;
        self.draws = 0;
        self.black_wins = 0;
    }

    /// Counts a game of `positions` records in the result counts.
    pub fn count_game(&mut self, result: i8, positions: u64, validation: bool) {
        self.games += 1;
        self.positions += positions;
        if validation {
            self.validation_positions += positions;
        } else {
            self.train_positions += positions;
        }
        match result {
            1 => self.white_wins += 1,
            -1 => self.black_wins += 1,
            _ => self.draws += 1,
        }
    }

    /// Counts a finished game.
    pub fn add(&mut self, game: &PlayedGame) {
        self.count_game(game.ending.result, game.plies.len() as u64, game.validation);
        *self.terminations.entry(game.ending.termination).or_default() += 1;
        self.next_game = self.next_game.max(game.number + 1);
    }

    /// The settings of `self.options` that differ from `options`, as `name: old → new`.
    pub fn differences(&self, options: &GameOptions) -> Vec<String> {
        let (old, new) = (serde_json::json!(self.options), serde_json::json!(options));
        let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else { return vec!["options".into()] };
        old.iter()
            .filter(|(k, v)| new.get(*k) != Some(v))
            .map(|(k, v)| format!("{}: {v} → {}", k.replace('_', "-"), new.get(k).unwrap_or(&serde_json::Value::Null)))
            .collect()
    }
}
