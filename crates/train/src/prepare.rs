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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use deepchess_core::atomic::{self, check_overwrite, temporary_path, write_atomic};
use deepchess_core::dataset::{Content, DatasetError, DatasetWriter, Split, file_name};
use rayon::prelude::*;
use serde::Serialize;

use crate::guard;
use crate::pgn::batches::{BatchError, DEFAULT_MAX_GAME_BYTES, GameBatches};
use crate::pgn::game::{ParseOptions, ParsedGame, SkipReason};
use crate::pgn::{input, parse_batch};

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

/// Files a `prepare` output directory holds.
fn output_files() -> Vec<String> {
    let mut names = vec!["summary.json".to_string()];
    names.extend(Content::ALL.iter().flat_map(|&c| Split::ALL.map(|s| file_name(c, s))));
    names
}

/// What makes `dir` other than an earlier `prepare` output, if anything.
fn not_a_prepare_output(dir: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Some("it is a file, not a directory".into());
    }
    let known = output_files();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return Some(format!("it cannot be listed ({e})")),
    };
    let mut others: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !known.contains(n))
        .collect();
    others.sort();
    if let Some(first) = others.first() {
        return Some(format!(
            "it holds `{first}`{}, which prepare does not write",
            if others.len() > 1 { " and more" } else { "" }
        ));
    }
    let summary: Option<serde_json::Value> =
        std::fs::read(dir.join("summary.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    match summary {
        None => Some("it has no readable summary.json".into()),
        Some(s) if ["games_read", "games_used", "skipped", "options"].iter().all(|k| s.get(k).is_some()) => None,
        Some(_) => Some("its summary.json is not a prepare summary".into()),
    }
}

/// Refuses a file given twice as `--pgn` (under any spelling or link): its games would
/// count twice.
fn check_distinct_inputs(inputs: &[PathBuf]) -> Result<(), PrepareError> {
    for (i, later) in inputs.iter().enumerate() {
        if let Some(first) = inputs[..i].iter().find(|earlier| guard::same_path(earlier, later)) {
            let also = if first == later { String::new() } else { format!(" (as {})", first.display()) };
            return Err(PrepareError::Option(format!(
                "--pgn {} is given twice{also}: its games would be counted twice",
                later.display()
            )));
        }
    }
    Ok(())
}

/// Refuses an `--out` that is an input or holds one, and, without `--force`, one that
/// exists; with `--force`, one that is not an earlier `prepare` output.
fn check_output(options: &PrepareOptions) -> Result<(), PrepareError> {
    let out = &options.out;
    let out_canonical = guard::canonical(out);
    for input in &options.inputs {
        let input_canonical = guard::canonical(input);
        if input_canonical == out_canonical {
            return Err(PrepareError::Output(format!(
                "--out {} is the input --pgn {}: give the datasets a directory of their own",
                out.display(),
                input.display()
            )));
        }
        if input_canonical.starts_with(&out_canonical) {
            return Err(PrepareError::Output(format!(
                "--out {} holds the input --pgn {}: replacing it would delete the input",
                out.display(),
                input.display()
            )));
        }
    }
    if std::fs::symlink_metadata(out).is_err() {
        return Ok(());
    }
    check_overwrite(out, options.force).map_err(|source| PrepareError::Io { path: out.clone(), source })?;
    match not_a_prepare_output(out) {
        None => Ok(()),
        Some(why) => Err(PrepareError::Output(format!(
            "--force: {} is not the output of an earlier `deepchess prepare` ({why}); --force replaces only those: choose another --out",
            out.display()
        ))),
    }
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

/// Moves the finished temporary directory to `out`, replacing an old one only after the
/// new one is complete; an interruption waits until this is done.
fn publish(tmp: &Path, out: &Path) -> std::io::Result<()> {
    atomic::publishing(|| {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const SAMPLE: &[u8] = include_bytes!("../../../tests/data/sample.pgn");
    const DECISIVE: &[u8] = include_bytes!("../../../tests/data/decisive.pgn");

    fn run(options: &PrepareOptions) -> (Result<Summary, PrepareError>, Vec<String>) {
        let mut lines = Vec::new();
        let result = prepare(options, &mut |_| {}, &mut |l| lines.push(l));
        (result, lines)
    }

    fn compress(plain: &[u8], how: u8) -> Vec<u8> {
        match how {
            0 => plain.to_vec(),
            1 => {
                let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                w.write_all(plain).unwrap();
                w.finish().unwrap()
            }
            2 => zstd::encode_all(plain, 1).unwrap(),
            _ => {
                let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                w.write_all(plain).unwrap();
                w.finish().unwrap()
            }
        }
    }

    /// `n` short legal games (the same opening, told apart by their tags).
    fn games(n: usize) -> Vec<u8> {
        let mut pgn = String::new();
        for g in 0..n {
            pgn += &format!("[Event \"g{g}\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n");
        }
        pgn.into_bytes()
    }

    #[test]
    fn compression_is_read_from_the_content_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        for (how, name) in [(2, "games.pgn"), (1, "games.pgn.zst"), (3, "games.txt"), (0, "games.pgn.gz")] {
            let input = dir.path().join(name);
            std::fs::write(&input, compress(SAMPLE, how)).unwrap();
            let options = PrepareOptions::new(vec![input], dir.path().join(format!("out-{name}")));
            let summary = run(&options).0.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((summary.games_read, summary.games_used), (6, 5), "{name}");
            assert_eq!(summary.inputs[0].compression, ["plain text", "gzip", "zstd", "bzip2"][how as usize]);
        }
    }

    #[test]
    fn text_that_is_no_pgn_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let utf16: Vec<u8> = [0xff, 0xfe].into_iter().chain(SAMPLE.iter().flat_map(|&b| [b, 0])).collect();
        let xz = [&[0xfd, b'7', b'z', b'X', b'Z', 0x00][..], &[1; 200]].concat();
        let cases: [(&str, Vec<u8>, &str); 5] = [
            ("utf16.pgn", utf16, "UTF-16"),
            ("nul.pgn", SAMPLE.iter().flat_map(|&b| [0, b]).collect(), "NUL"),
            ("archive.pgn", xz, "xz-compressed"),
            (
                "prose.pgn",
                b"Dear diary,\nno chess today.\n".to_vec(),
                "no usable game (1 games read, skipped: no_result 1)",
            ),
            ("empty.pgn", Vec::new(), "no usable game (0 games read)"),
        ];
        for (name, bytes, expected) in cases {
            let input = dir.path().join(name);
            std::fs::write(&input, bytes).unwrap();
            let out = dir.path().join(format!("out-{name}"));
            let err = run(&PrepareOptions::new(vec![input.clone()], out.clone())).0.unwrap_err().to_string();
            assert!(err.contains(&input.display().to_string()) && err.contains(expected), "{name}: {err}");
            assert!(!out.exists());
        }
        // a second file without games fails the run even when the first has some
        let good = dir.path().join("good.pgn");
        std::fs::write(&good, SAMPLE).unwrap();
        let options = PrepareOptions::new(vec![good, dir.path().join("empty.pgn")], dir.path().join("two"));
        assert!(run(&options).0.unwrap_err().to_string().contains("empty.pgn: no usable game"));
    }

    #[test]
    fn a_stray_brace_fails_or_warns_naming_the_game_and_line() {
        let dir = tempfile::tempdir().unwrap();
        // game 3 (line 11) opens a comment that is never closed: the 3000 games after it
        // would be one comment and the run would succeed with 2 games
        let mut text = games(2);
        text.extend_from_slice(b"[Event \"stray\"]\n[Result \"1-0\"]\n\n1. e4 { e5 1-0\n\n");
        text.extend(games(3000));
        let input = dir.path().join("stray.pgn");
        std::fs::write(&input, &text).unwrap();
        let mut options = PrepareOptions::new(vec![input.clone()], dir.path().join("out"));
        options.max_game_bytes = 64 << 10;
        let err = run(&options).0.unwrap_err().to_string();
        assert!(err.contains("stray.pgn: game 3 starting at line 11: the comment opened at line 14"), "{err}");
        // near the end, the comment swallows a few games only: a warning, in the summary too
        let mut text = games(3000);
        text.extend_from_slice(b"[Event \"stray\"]\n[Result \"1-0\"]\n\n1. e4 { e5 1-0\n\n");
        text.extend(games(2));
        std::fs::write(&input, &text).unwrap();
        let (summary, lines) = run(&options);
        let summary = summary.unwrap();
        assert_eq!(summary.games_read, 3001, "the 2 games inside the comment are lost");
        assert_eq!(summary.warnings.len(), 1, "{:?}", summary.warnings);
        let w = &summary.warnings[0];
        assert!(w.contains("stray.pgn: game 3001 (line 15001): the comment opened at line 15004"), "{w}");
        assert!(lines.iter().any(|l| l.starts_with("warning: ") && l.contains("game 3001")), "{lines:?}");
    }

    #[test]
    fn allow_truncated_keeps_the_complete_games_before_the_break() {
        let dir = tempfile::tempdir().unwrap();
        let plain = games(4000);
        for how in [1, 2, 3] {
            let full = compress(&plain, how);
            let input = dir.path().join(format!("cut{how}.pgn"));
            std::fs::write(&input, &full[..full.len() * 2 / 3]).unwrap();
            let mut options = PrepareOptions::new(vec![input.clone()], dir.path().join(format!("out{how}")));
            let err = run(&options).0.unwrap_err().to_string();
            assert!(err.contains(&input.display().to_string()) && err.contains("complete games"), "{how}: {err}");
            options.allow_truncated = true;
            let summary = run(&options).0.unwrap_or_else(|e| panic!("{how}: {e}"));
            assert!((1000..4000).contains(&summary.games_used), "{how}: {} games", summary.games_used);
            assert_eq!(summary.games_used, summary.games_read, "{how}: no partial game");
            assert!(summary.inputs[0].truncated && summary.warnings[0].contains("--allow-truncated"), "{how}");
        }
    }

    /// Random bytes and damaged real PGN (bytes flipped, braces, brackets and NULs
    /// inserted, cut short; plain and compressed), seeded: `prepare` never panics, and it
    /// either succeeds with usable games or fails naming the file; no temporary stays.
    #[test]
    fn fuzzed_inputs_never_panic_and_errors_name_the_file() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        // in memory where there is such a file system: each run syncs five files to disk
        let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
        let base = [SAMPLE, DECISIVE].concat();
        let config = Config { cases: 300, failure_persistence: None, ..Config::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
        let strategy = (
            0..4u8,
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..600),
            proptest::collection::vec((any::<usize>(), 0..6u8, any::<u8>()), 0..30),
            any::<usize>(),
        );
        let outcomes = std::cell::Cell::new((0, 0));
        runner
            .run(&strategy, |(how, random, noise, edits, cut)| {
                let mut text = if random { noise } else { base.clone() };
                for &(at, kind, byte) in &edits {
                    let at = at % (text.len() + 1);
                    match kind {
                        0 if at < text.len() => text[at] = byte,
                        1 => text.insert(at, b'{'),
                        2 => text.insert(at, b'}'),
                        3 => text.insert(at, b'['),
                        4 => text.insert(at, 0),
                        _ => text.truncate(at),
                    }
                }
                let mut bytes = compress(&text, how);
                if cut % 4 == 0 && !bytes.is_empty() {
                    bytes.truncate(cut % bytes.len());
                }
                let input = dir.path().join("fuzz.pgn");
                std::fs::write(&input, &bytes).unwrap();
                let out = dir.path().join("out");
                let mut options = PrepareOptions::new(vec![input.clone()], out.clone());
                options.force = true;
                options.keep_truncated = cut % 3 == 0;
                options.allow_truncated = cut % 5 == 0;
                let (ok, failed) = outcomes.get();
                match run(&options).0 {
                    Ok(summary) => {
                        outcomes.set((ok + 1, failed));
                        prop_assert!(summary.games_used > 0 && out.join("summary.json").exists());
                    }
                    Err(e) => {
                        outcomes.set((ok, failed + 1));
                        let e = e.to_string();
                        prop_assert!(e.contains(&input.display().to_string()), "{}", e);
                    }
                }
                let left: Vec<_> = std::fs::read_dir(dir.path())
                    .unwrap()
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
                    .collect();
                prop_assert!(left.is_empty(), "temporaries left: {:?}", left);
                Ok(())
            })
            .unwrap();
        let (ok, failed) = outcomes.get();
        assert!(ok > 30 && failed > 30, "{ok} succeeded, {failed} failed");
    }
}
