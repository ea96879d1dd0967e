//! The output directory: a fresh start, a resume (the datasets reopened in append mode and
//! recounted, the options checked against `summary.json`), or `--force`, which replaces a
//! previous datagen output and nothing else; then appending each finished game.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Dataset, DatasetWriter, Split};

use crate::error::{DatagenError, io_error};
use crate::game::PlayedGame;
use crate::options::RunOptions;
use crate::pgn::game_pgn;
use crate::pgn_resume;
use crate::summary::{SUMMARY_FILE, Summary};

/// File name of the PGN output inside the output directory.
pub const PGN_FILE: &str = "games.pgn";

/// The files a datagen run writes (and `--force` removes).
fn own_files(dir: &Path) -> [PathBuf; 4] {
    [
        dir.join(file_name(Content::Moves, Split::Train)),
        dir.join(file_name(Content::Moves, Split::Validation)),
        dir.join(PGN_FILE),
        dir.join(SUMMARY_FILE),
    ]
}

/// The open output: both datasets in append mode and, with `--pgn`, the PGN file.
pub struct Output {
    dir: PathBuf,
    train: DatasetWriter,
    validation: DatasetWriter,
    pgn: Option<File>,
}

impl Output {
    /// Opens `options.out` for this run and returns the summary to continue from. Refuses
    /// an input (`--book`) that is one of the output's files, files datagen did not write
    /// (datasets or a `games.pgn` without a datagen `summary.json`, `--force` or not), a
    /// resume with a dataset missing, and a `games.pgn` that does not match the datasets
    /// (its partial last game, a killed run's, is cut off).
    pub fn open(options: &RunOptions) -> Result<(Output, Summary), DatagenError> {
        let dir = &options.out;
        let invalid = |message: String| Err(DatagenError::Invalid(format!("--out {}: {message}", dir.display())));
        if dir.exists() && !dir.is_dir() {
            return invalid("not a directory".into());
        }
        let files = own_files(dir);
        if let Some(book) = &options.game.book
            && let Some(file) = files.iter().find(|f| same_file(book, f))
        {
            return Err(DatagenError::Invalid(format!(
                "--book {} is {}, a file datagen writes: give the book another name",
                book.display(),
                file.display()
            )));
        }
        let [train_path, validation_path, pgn_path, _] = &files;
        let mut summary = match Summary::load(dir)? {
            None => {
                if let Some(found) = [train_path, validation_path, pgn_path].into_iter().find(|f| f.exists()) {
                    return invalid(format!(
                        "holds {} without a datagen {SUMMARY_FILE}; not touching it",
                        found.display()
                    ));
                }
                Summary::new(options.game.clone())
            }
            Some(_) if options.force => {
                for file in &files {
                    match std::fs::remove_file(file) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(file)(e)),
                        _ => {}
                    }
                }
                Summary::new(options.game.clone())
            }
            Some(old) => {
                let differences = old.differences(&options.game);
                if !differences.is_empty() {
                    return invalid(format!(
                        "was generated with other options ({}); use the same ones to resume, or --force to start afresh",
                        differences.join(", ")
                    ));
                }
                if let Some(missing) = [train_path, validation_path].into_iter().find(|f| !f.exists()) {
                    return invalid(format!(
                        "{SUMMARY_FILE} counts {} games but {} is missing: cannot resume; --force to start afresh",
                        old.games,
                        missing.display()
                    ));
                }
                old
            }
        };
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let train = DatasetWriter::append(train_path, Content::Moves, Split::Train)?;
        let validation = DatasetWriter::append(validation_path, Content::Moves, Split::Validation)?;
        recount(&mut summary, train_path, validation_path)?;
        let pgn = open_pgn(dir, pgn_path, options.pgn, summary.games)?;
        if summary.build.is_none() {
            summary.build.clone_from(&options.build);
        }
        summary.save(dir)?;
        Ok((Output { dir: dir.clone(), train, validation, pgn }, summary))
    }

    /// The output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends a finished game: its PGN, then its records, then the datasets' headers (a
    /// kill leaves the PGN at most one game ahead, which a resume cuts off).
    pub fn append(&mut self, game: &PlayedGame) -> Result<(), DatagenError> {
        let records = game
            .records()
            .map_err(|e| DatagenError::Invalid(format!("game {}: cannot store a position: {e}", game.number)))?;
        if let Some(file) = &mut self.pgn {
            let path = self.dir.join(PGN_FILE);
            file.write_all(game_pgn(game).as_bytes()).map_err(io_error(&path))?;
        }
        let writer = if game.validation { &mut self.validation } else { &mut self.train };
        for record in &records {
            writer.push(record)?;
        }
        writer.checkpoint()?;
        Ok(())
    }
}

/// Whether `a` and `b` are the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// Opens `games.pgn` for appending when `wanted` (`--pgn`): a new one only while the
/// datasets hold no game; an existing one after checking it against the datasets' `games`
/// and cutting its partial tail. Without `--pgn` an existing one is refused (it would fall
/// behind the datasets).
fn open_pgn(dir: &Path, path: &Path, wanted: bool, games: u64) -> Result<Option<File>, DatagenError> {
    let invalid = |message: String| Err(DatagenError::Invalid(format!("--out {}: {message}", dir.display())));
    match (wanted, path.exists()) {
        (false, false) => return Ok(None),
        (false, true) => {
            return invalid(format!(
                "{} holds this output's games: resume with --pgn, or it falls behind the datasets",
                path.display()
            ));
        }
        (true, false) if games > 0 => {
            return invalid(format!(
                "the datasets hold {games} games and there is no {PGN_FILE}: resume without --pgn, or --force to start afresh"
            ));
        }
        (true, false) => {}
        (true, true) => _ = pgn_resume::cut_to(path, games)?,
    }
    let file = OpenOptions::new().create(true).append(true).open(path).map_err(io_error(path))?;
    Ok(Some(file))
}

/// Sets the summary's counts to what the datasets hold: after a kill they may hold a game
/// more than the summary says. Game numbers continue after the highest one written.
fn recount(summary: &mut Summary, train: &Path, validation: &Path) -> Result<(), DatagenError> {
    summary.clear_counts();
    for (path, is_validation) in [(train, false), (validation, true)] {
        let dataset = Dataset::open(path)?;
        let mut previous: Option<(u32, i8, u64)> = None;
        for record in dataset.iter() {
            match &mut previous {
                Some((game, _, count)) if *game == record.game() => *count += 1,
                _ => {
                    if let Some((_, result, count)) = previous {
                        summary.count_game(result, count, is_validation);
                    }
                    previous = Some((record.game(), record.result(), 1));
                }
            }
            summary.next_game = summary.next_game.max(record.game() + 1);
        }
        if let Some((_, result, count)) = previous {
            summary.count_game(result, count, is_validation);
        }
    }
    Ok(())
}
