//! `deepchess prepare`: PGN databases → `positions` and `moves` datasets, split by game.
//!
//! The input is read as a stream, once, by one thread that decompresses it and cuts it
//! into batches of whole games; the batches are parsed in parallel (rayon) and their
//! records written in input order, so the output is deterministic and memory stays
//! bounded whatever the input size. The output directory is built under a temporary
//! name and renamed when complete.
//!
//! Input that cannot be what it claims fails, naming the file: a file that is not PGN
//! text (see [`crate::pgn::input`]), a file without a single usable game, a game of absurd
//! length (an unclosed comment, see [`crate::pgn::batches`]), a truncated or corrupt
//! compressed stream (unless `allow_truncated`, which keeps the complete games before the
//! break). `--out` never replaces an input, and `--force` replaces only an earlier
//! `prepare` output.

mod output;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use deepchess_core::atomic::{self, temporary_path, write_atomic};
use deepchess_core::dataset::{Content, DatasetError, DatasetWriter, Split, file_name};
use rayon::prelude::*;
use serde::Serialize;

use crate::guard;
use crate::pgn::batches::{BatchError, DEFAULT_MAX_GAME_BYTES, GameBatches};
use crate::pgn::game::{ParseOptions, ParsedGame, SkipReason};
use crate::pgn::{input, parse_batch};
use output::{check_distinct_inputs, check_output, publish};

/// Options of `prepare`.
#[derive(Clone, Debug, Serialize)]
pub struct PrepareOptions {
    /// PGN files, plain or compressed with gzip, zstd or bzip2 (told by their content).
    pub inputs: Vec<PathBuf>,
    /// Output directory.
    pub out: PathBuf,
    /// Replace an existing output directory (only an earlier `prepare` output).
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
    /// Keep the complete games before the break of a truncated or corrupt compressed
    /// stream (with a warning) instead of failing.
    pub allow_truncated: bool,
    /// Longest text of one game, in bytes; a longer one is an error.
    pub max_game_bytes: u64,
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
            allow_truncated: false,
            max_game_bytes: DEFAULT_MAX_GAME_BYTES,
            verbose: false,
            batch_bytes: 1 << 19,
        }
    }
}

/// Games of more plies than this get a warning: no real game is that long.
pub const IMPLAUSIBLE_PLIES: usize = 2000;

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
    /// A game too long to be real (see [`BatchError::GameTooLarge`]).
    #[error("{path}: {source}")]
    Damaged {
        /// The input file.
        path: PathBuf,
        /// What is wrong, with the game's number and line.
        source: BatchError,
    },
    /// An input file gave no usable game.
    #[error("{path}: no usable game ({detail}): not a PGN database, or every game was skipped")]
    NoGames {
        /// The input file.
        path: PathBuf,
        /// Games read from it and why they were skipped.
        detail: String,
    },
    /// `--out` or `--force` would replace an input or a file `prepare` did not write.
    #[error("{0}")]
    Output(String),
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
    /// Its compression, told by its first bytes.
    pub compression: &'static str,
    /// Games read from it.
    pub games_read: u64,
    /// Games of it that gave records.
    pub games_used: u64,
    /// Whether its stream broke off and only the games before the break were kept
    /// (`allow_truncated`).
    pub truncated: bool,
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
    /// Warnings (damaged input that did not stop the run), each naming the file.
    pub warnings: Vec<String>,
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
    /// Logs a warning and records it in the summary.
    fn warn(&mut self, warning: String) {
        (self.log)(format!("warning: {warning}"));
        self.summary.warnings.push(warning);
    }

    /// Adds the next game of `path`, of which `games_before` games were read before it
    /// (from earlier inputs).
    fn add(&mut self, path: &Path, games_before: u64, mut game: ParsedGame) -> Result<(), PrepareError> {
        // The records' game index counts every input's games from 0; messages number a
        // game from 1 within its file, as the other messages do.
        let index = self.summary.games_read;
        let number = index - games_before + 1;
        // The records hold every position, the final one included.
        let plies = game.records.len().saturating_sub(1);
        if plies > IMPLAUSIBLE_PLIES {
            self.warn(format!(
                "{}: game {number} has {plies} plies, more than any real game: games run together, or a damaged file?",
                path.display()
            ));
        }
        if game.skip == Some(SkipReason::PlyOutOfRange) {
            self.warn(format!("{}: game {number} skipped: {}", path.display(), game.detail));
        }
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
            record.set_game(index as u32);
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
/// `options.out`. `progress` is called regularly; `log` receives warnings and the
/// `--verbose` lines.
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
    check_distinct_inputs(&options.inputs)?;
    let out = &options.out;
    check_output(options)?;
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = out.parent().unwrap_or(Path::new("."));
    guard::sweep(parent, |n| n == name || n.strip_suffix("-old") == Some(name.as_str()))
        .map_err(|e| PrepareError::Output(e.to_string()))?;
    let tmp = temporary_path(out);
    let _ = std::fs::remove_dir_all(&tmp);
    atomic::register_temporary(&tmp);
    let result = std::fs::create_dir_all(&tmp)
        .map_err(|source| PrepareError::Io { path: tmp.clone(), source })
        .and_then(|()| build(options, &tmp, progress, log))
        .and_then(|summary| {
            publish(&tmp, out).map_err(|source| PrepareError::Io { path: out.clone(), source })?;
            Ok(summary)
        });
    if result.is_err() {
        atomic::remove_temporary(&tmp);
    } else {
        atomic::unregister_temporary(&tmp);
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
        warnings: Vec::new(),
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

/// What the thread reading an input sends.
enum Item {
    /// Whole games.
    Batch(Vec<u8>),
    /// Damage that does not stop the run.
    Warning(String),
    /// The end of the readable stream: the error that ended it, if any, and whether the
    /// complete games before it were kept (`allow_truncated`).
    Broken(BatchError, bool),
}

fn read_input(
    path: &Path,
    collector: &mut Collector<'_>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<(), PrepareError> {
    let input = input::open(path).map_err(|source| PrepareError::Io { path: path.to_path_buf(), source })?;
    let (file_size, consumed, compression) = (input.file_size, input.consumed.clone(), input.compression);
    let parse_options =
        ParseOptions { keep_truncated: collector.options.keep_truncated, describe: collector.options.verbose };
    let group_size = 2 * rayon::current_num_threads();
    let (games_before, used_before) = (collector.summary.games_read, collector.summary.games_used);
    let skipped_before = collector.summary.skipped.clone();
    let (batch_bytes, max_game_bytes) = (collector.options.batch_bytes, collector.options.max_game_bytes);
    let allow_truncated = collector.options.allow_truncated;
    let mut truncated = false;
    std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Item>(group_size);
        let mut reader = input.reader;
        scope.spawn(move || {
            let mut batches = GameBatches::new(&mut reader, batch_bytes).with_max_game_bytes(max_game_bytes);
            loop {
                let next = batches.next_batch();
                let mut items: Vec<Item> = batches.take_warnings().into_iter().map(Item::Warning).collect();
                let stop = !matches!(next, Ok(Some(_)));
                match next {
                    Ok(Some(batch)) => items.push(Item::Batch(batch)),
                    Ok(None) => {}
                    Err(e) => {
                        let keep = allow_truncated && matches!(e, BatchError::Read { .. });
                        if keep && let Some(games) = batches.salvage() {
                            items.push(Item::Batch(games));
                        }
                        items.push(Item::Broken(e, keep));
                    }
                }
                if items.into_iter().any(|item| tx.send(item).is_err()) || stop {
                    break;
                }
            }
        });
        loop {
            let mut group = Vec::with_capacity(group_size);
            let mut failure = None;
            while group.len() < group_size {
                match rx.recv() {
                    Ok(Item::Batch(batch)) => group.push(batch),
                    Ok(Item::Warning(w)) => collector.warn(format!("{}: {w}", path.display())),
                    Ok(Item::Broken(e, kept)) => {
                        failure = Some((e, kept));
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
                collector.add(path, games_before, game)?;
            }
            progress(Progress {
                path,
                bytes_done: consumed.load(std::sync::atomic::Ordering::Relaxed),
                bytes_total: file_size,
                games: collector.summary.games_read,
                records: collector.writers.records(),
            });
            match failure {
                None => {}
                Some((BatchError::Read { complete_games, source }, true)) => {
                    truncated = true;
                    collector.warn(format!(
                        "{}: the stream breaks off after {complete_games} complete games ({source}); they are kept (--allow-truncated)",
                        path.display()
                    ));
                    break;
                }
                Some((BatchError::Read { complete_games, source }, false)) => {
                    return Err(PrepareError::Input { path: path.to_path_buf(), games_read: complete_games, source });
                }
                Some((source, _)) => return Err(PrepareError::Damaged { path: path.to_path_buf(), source }),
            }
        }
        Ok(())
    })?;
    let summary = &mut collector.summary;
    let (games_read, games_used) = (summary.games_read - games_before, summary.games_used - used_before);
    if games_used == 0 {
        // the reasons this file's games were skipped: the counts that grew
        let grown: BTreeMap<&'static str, u64> =
            summary.skipped.iter().map(|(&r, &n)| (r, n - skipped_before.get(r).copied().unwrap_or(0))).collect();
        let mut detail = format!("{games_read} games read");
        if truncated {
            detail += " before the stream breaks off";
        }
        if games_read > 0 {
            detail += &format!(", skipped: {}", skip_counts(&grown));
        }
        return Err(PrepareError::NoGames { path: path.to_path_buf(), detail });
    }
    summary.inputs.push(InputSummary {
        path: path.to_path_buf(),
        compression: compression.name(),
        games_read,
        games_used,
        truncated,
    });
    Ok(())
}

/// `reason count, ...` for the reasons with games.
fn skip_counts(skipped: &BTreeMap<&'static str, u64>) -> String {
    let counts: Vec<String> = skipped.iter().filter(|(_, n)| **n > 0).map(|(r, n)| format!("{r} {n}")).collect();
    counts.join(", ")
}

#[cfg(test)]
mod tests;
