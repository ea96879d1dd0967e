//! `deepchess prepare`: PGN databases → `positions` and `moves` datasets, split by game.
//!
//! The input is read as a stream, once, by one thread that decompresses it and cuts it
//! into batches of whole games; the batches are parsed in parallel (rayon) and their
//! records written in input order, so the output is deterministic and memory stays
//! bounded whatever the input size. The output directory is built under a temporary
//! name and renamed when complete.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use deepchess_core::atomic::{check_overwrite, temporary_path, write_atomic};
use deepchess_core::dataset::{Content, DatasetError, DatasetWriter, Split, file_name};
use rayon::prelude::*;
use serde::Serialize;

use crate::pgn::batches::GameBatches;
use crate::pgn::game::{ParseOptions, ParsedGame, SkipReason};
use crate::pgn::{input, parse_batch};

/// Options of `prepare`.
#[derive(Clone, Debug, Serialize)]
pub struct PrepareOptions {
    /// PGN files (`.pgn`, `.pgn.gz`, `.pgn.zst`, `.pgn.bz2`).
    pub inputs: Vec<PathBuf>,
    /// Output directory.
    pub out: PathBuf,
    /// Replace an existing output directory.
    pub force: bool,
    /// Positions of the first this-many moves of each game are left out of `positions`.
    pub skip_moves: u16,
    /// Keep positions whose played move is a capture in `positions`.
    pub keep_captures: bool,
    /// Keep drawn games in `positions` (for the evaluation net).
    pub draws: bool,
    /// `moves` only from games where both players have at least this Elo.
    pub min_elo: Option<u32>,
    /// Fraction of games (by hash) in the validation split.
    pub validation_fraction: f64,
    /// Seed mixed into the game hash that decides the split.
    pub split_seed: u64,
    /// Keep the moves before an illegal move instead of skipping the game.
    pub keep_truncated: bool,
    /// Name every skipped game.
    pub verbose: bool,
    /// Approximate size of a batch of PGN text parsed by one task.
    pub batch_bytes: usize,
}

impl PrepareOptions {
    /// Defaults as in DeepChess and the thesis: skip 5 moves, no captures, no draws, 10%
    /// validation.
    pub fn new(inputs: Vec<PathBuf>, out: PathBuf) -> PrepareOptions {
        PrepareOptions {
            inputs,
            out,
            force: false,
            skip_moves: 5,
            keep_captures: false,
            draws: false,
            min_elo: None,
            validation_fraction: 0.1,
            split_seed: 0,
            keep_truncated: false,
            verbose: false,
            batch_bytes: 1 << 19,
        }
    }
}

/// Errors of `prepare`; each names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// A file could not be opened, created or renamed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The input stream broke off: truncated or corrupt compressed data, or a read error.
    #[error("{path}: read failed after {games_read} complete games: {source}")]
    Input {
        /// The input file.
        path: PathBuf,
        /// Games fully read from this file before the failure.
        games_read: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing a dataset failed.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// An option is out of range.
    #[error("{0}")]
    Option(String),
}

/// Counts per split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SplitCounts {
    /// Training.
    pub train: u64,
    /// Validation.
    pub validation: u64,
}

impl SplitCounts {
    fn add(&mut self, split: Split, n: u64) {
        match split {
            Split::Train => self.train += n,
            Split::Validation => self.validation += n,
        }
    }
}

/// Games read from one input file.
#[derive(Clone, Debug, Serialize)]
pub struct InputSummary {
    /// The file.
    pub path: PathBuf,
    /// Games read from it.
    pub games_read: u64,
}

/// What `prepare` did; written as `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Inputs in order.
    pub inputs: Vec<InputSummary>,
    /// Games read, skipped ones included.
    pub games_read: u64,
    /// Games that gave records.
    pub games_used: u64,
    /// Skipped games by reason (every reason listed).
    pub skipped: BTreeMap<&'static str, u64>,
    /// Games cut at an illegal move whose earlier moves were kept (`--keep-truncated`).
    pub truncated: u64,
    /// Games read with result 1-0.
    pub white_wins: u64,
    /// Games read with result 0-1.
    pub black_wins: u64,
    /// Games read with result ½-½.
    pub draws: u64,
    /// Used games per split.
    pub games: SplitCounts,
    /// Records in the `positions` datasets.
    pub positions: SplitCounts,
    /// Records in the `moves` datasets.
    pub moves: SplitCounts,
    /// `positions` records that carry an engine evaluation.
    pub positions_with_eval: u64,
    /// Used drawn games left out of `positions` (no `--draws`).
    pub draws_excluded_from_positions: u64,
    /// Used games left out of `moves` by `--min-elo`.
    pub games_below_min_elo: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The options used.
    pub options: PrepareOptions,
}

/// A progress report, sent after each group of batches.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Input being read.
    pub path: &'a Path,
    /// Its bytes consumed so far (compressed).
    pub bytes_done: u64,
    /// Its size.
    pub bytes_total: u64,
    /// Games read so far, all inputs.
    pub games: u64,
    /// Records written so far, both datasets.
    pub records: u64,
}

/// The split a game goes to: a deterministic function of its hash and the seed.
pub fn split_of(game_hash: u64, seed: u64, validation_fraction: f64) -> Split {
    // the finaliser spreads FNV's low-entropy bits over the whole word
    let z = crate::data::splitmix64(game_hash ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
    if unit < validation_fraction { Split::Validation } else { Split::Train }
}

struct Writers {
    files: BTreeMap<(Content, Split), DatasetWriter>,
}

impl Writers {
    fn create(dir: &Path) -> Result<Writers, DatasetError> {
        let mut files = BTreeMap::new();
        for content in Content::ALL {
            for split in Split::ALL {
                let w = DatasetWriter::create(&dir.join(file_name(content, split)), content, split)?;
                files.insert((content, split), w);
            }
        }
        Ok(Writers { files })
    }

    fn get(&mut self, content: Content, split: Split) -> &mut DatasetWriter {
        self.files.get_mut(&(content, split)).expect("all writers exist")
    }

    fn records(&self) -> u64 {
        self.files.values().map(DatasetWriter::len).sum()
    }
}

/// Accumulates games into the datasets and the summary.
struct Collector<'a> {
    options: &'a PrepareOptions,
    writers: Writers,
    summary: Summary,
    log: &'a mut dyn FnMut(String),
}

impl Collector<'_> {
    fn add(&mut self, mut game: ParsedGame) -> Result<(), PrepareError> {
        let number = self.summary.games_read;
        self.summary.games_read += 1;
        match game.result {
            Some(1) => self.summary.white_wins += 1,
            Some(-1) => self.summary.black_wins += 1,
            Some(_) => self.summary.draws += 1,
            None => {}
        }
        if let Some(reason) = game.skip {
            *self.summary.skipped.entry(reason.name()).or_default() += 1;
            if self.options.verbose {
                (self.log)(format!(
                    "game {number} skipped ({}): {} [{}]",
                    reason.name(),
                    game.detail,
                    game.description
                ));
            }
            return Ok(());
        }
        if game.truncated {
            self.summary.truncated += 1;
            if self.options.verbose {
                (self.log)(format!("game {number} truncated: {} [{}]", game.detail, game.description));
            }
        }
        self.summary.games_used += 1;
        let split = split_of(game.hash, self.options.split_seed, self.options.validation_fraction);
        self.summary.games.add(split, 1);
        let result = game.result.expect("used games have a result");
        let with_moves = match self.options.min_elo {
            None => true,
            Some(min) => game.elo.iter().all(|e| e.is_some_and(|e| e >= min)),
        };
        self.summary.games_below_min_elo += u64::from(!with_moves);
        let with_positions = result != 0 || self.options.draws;
        self.summary.draws_excluded_from_positions += u64::from(!with_positions);
        let first_ply = 2 * self.options.skip_moves;
        let (mut positions, mut moves) = (0, 0);
        for record in &mut game.records {
            record.set_game(number as u32);
            let played = record.played().expect("records built by the parser decode");
            if with_moves && played.is_some() {
                self.writers.get(Content::Moves, split).push(record)?;
                moves += 1;
            }
            let capture = played.is_some_and(|p| p.capture);
            if with_positions && record.ply() >= first_ply && (self.options.keep_captures || !capture) {
                self.writers.get(Content::Positions, split).push(record)?;
                self.summary.positions_with_eval += u64::from(record.eval().is_some());
                positions += 1;
            }
        }
        self.summary.positions.add(split, positions);
        self.summary.moves.add(split, moves);
        Ok(())
    }
}

/// Runs `prepare`: reads every input, writes the datasets and `summary.json` into
/// `options.out`. `progress` is called regularly; `log` receives `--verbose` lines.
pub fn prepare(
    options: &PrepareOptions,
    progress: &mut dyn FnMut(Progress<'_>),
    log: &mut dyn FnMut(String),
) -> Result<Summary, PrepareError> {
    if !(0.0..=1.0).contains(&options.validation_fraction) {
        return Err(PrepareError::Option(format!(
            "--validation-fraction {} is outside 0..=1",
            options.validation_fraction
        )));
    }
    if options.inputs.is_empty() {
        return Err(PrepareError::Option("no input: give at least one --pgn FILE".into()));
    }
    let out = &options.out;
    check_overwrite(out, options.force).map_err(|source| PrepareError::Io { path: out.clone(), source })?;
    let tmp = temporary_path(out);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|source| PrepareError::Io { path: tmp.clone(), source })?;
    let result = build(options, &tmp, progress, log).and_then(|summary| {
        publish(&tmp, out).map_err(|source| PrepareError::Io { path: out.clone(), source })?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn build(
    options: &PrepareOptions,
    dir: &Path,
    progress: &mut dyn FnMut(Progress<'_>),
    log: &mut dyn FnMut(String),
) -> Result<Summary, PrepareError> {
    let start = Instant::now();
    let skipped = SkipReason::ALL.iter().map(|r| (r.name(), 0)).collect();
    let summary = Summary {
        inputs: Vec::new(),
        games_read: 0,
        games_used: 0,
        skipped,
        truncated: 0,
        white_wins: 0,
        black_wins: 0,
        draws: 0,
        games: SplitCounts::default(),
        positions: SplitCounts::default(),
        moves: SplitCounts::default(),
        positions_with_eval: 0,
        draws_excluded_from_positions: 0,
        games_below_min_elo: 0,
        seconds: 0.0,
        options: options.clone(),
    };
    let mut collector = Collector { options, writers: Writers::create(dir)?, summary, log };
    for path in &options.inputs {
        read_input(path, &mut collector, progress)?;
    }
    let Collector { writers, mut summary, .. } = collector;
    for ((content, split), writer) in writers.files {
        let count = writer.finish()?;
        let expected = match (content, split) {
            (Content::Positions, s) => summary.positions.get(s),
            (Content::Moves, s) => summary.moves.get(s),
        };
        debug_assert_eq!(count, expected);
    }
    summary.seconds = start.elapsed().as_secs_f64();
    let json = serde_json::to_vec_pretty(&summary).expect("summary serialises");
    let path = dir.join("summary.json");
    write_atomic(&path, &json).map_err(|source| PrepareError::Io { path, source })?;
    Ok(summary)
}

impl SplitCounts {
    fn get(&self, split: Split) -> u64 {
        match split {
            Split::Train => self.train,
            Split::Validation => self.validation,
        }
    }
}

fn read_input(
    path: &Path,
    collector: &mut Collector<'_>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(), PrepareError> {
    let input = input::open(path).map_err(|source| PrepareError::Io { path: path.to_path_buf(), source })?;
    let (file_size, consumed) = (input.file_size, input.consumed.clone());
    let parse_options =
        ParseOptions { keep_truncated: collector.options.keep_truncated, describe: collector.options.verbose };
    let group_size = 2 * rayon::current_num_threads();
    let games_before = collector.summary.games_read;
    let batch_bytes = collector.options.batch_bytes;
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<std::io::Result<Vec<u8>>>(group_size);
        let mut reader = input.reader;
        scope.spawn(move || {
            let mut batches = GameBatches::new(&mut reader, batch_bytes);
            loop {
                let next = batches.next_batch().transpose();
                let stop = !matches!(next, Some(Ok(_)));
                if let Some(item) = next
                    && tx.send(item).is_err()
                {
                    break;
                }
                if stop {
                    break;
                }
            }
        });
        loop {
            let mut group = Vec::with_capacity(group_size);
            let mut failure = None;
            while group.len() < group_size {
                match rx.recv() {
                    Ok(Ok(batch)) => group.push(batch),
                    Ok(Err(e)) => {
                        failure = Some(e);
                        break;
                    }
                    Err(_) => break,
                }
            }
            if group.is_empty() && failure.is_none() {
                break;
            }
            let parsed: Vec<Vec<ParsedGame>> = group.par_iter().map(|b| parse_batch(b, parse_options)).collect();
            drop(group);
            for game in parsed.into_iter().flatten() {
                collector.add(game)?;
            }
            progress(Progress {
                path,
                bytes_done: consumed.load(std::sync::atomic::Ordering::Relaxed),
                bytes_total: file_size,
                games: collector.summary.games_read,
                records: collector.writers.records(),
            });
            if let Some(source) = failure {
                return Err(PrepareError::Input {
                    path: path.to_path_buf(),
                    games_read: collector.summary.games_read - games_before,
                    source,
                });
            }
        }
        Ok(())
    })?;
    collector
        .summary
        .inputs
        .push(InputSummary { path: path.to_path_buf(), games_read: collector.summary.games_read - games_before });
    Ok(())
}

/// Moves the finished temporary directory to `out`, replacing an old one only after the
/// new one is complete.
fn publish(tmp: &Path, out: &Path) -> std::io::Result<()> {
    if out.exists() {
        let old = temporary_path(&out.with_file_name(format!(
            "{}-old",
            out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        )));
        std::fs::rename(out, &old)?;
        std::fs::rename(tmp, out)?;
        std::fs::remove_dir_all(&old)
    } else {
        std::fs::rename(tmp, out)
    }
}
