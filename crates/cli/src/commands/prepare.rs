//! `deepchess prepare`: PGN databases → training datasets.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use deepchess_train::prepare::{PrepareOptions, Progress, prepare};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `deepchess prepare`.
#[derive(clap::Args)]
pub struct PrepareArgs {
    /// PGN files, plain or compressed with gzip, zstd or bzip2 (told by their first bytes,
    /// not their name; read as streams).
    #[arg(long = "pgn", required = true, num_args = 1..)]
    pgn: Vec<PathBuf>,
    /// Output directory (written under a temporary name, then renamed).
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing output directory; only the output of an earlier `prepare` is
    /// replaced, never an input or another file or directory.
    #[arg(long)]
    force: bool,
    /// Leave the positions of each game's first N moves out of `positions`.
    #[arg(long, default_value_t = 5)]
    skip_moves: u16,
    /// Keep positions whose played move is a capture in `positions`.
    #[arg(long)]
    keep_captures: bool,
    /// Keep drawn games in `positions` (for the evaluation net).
    #[arg(long)]
    draws: bool,
    /// Only games where both players have at least this Elo go into `moves`.
    #[arg(long)]
    min_elo: Option<u32>,
    /// Fraction of games (chosen by a hash of the game) in the validation split.
    #[arg(long, default_value_t = 0.1)]
    validation_fraction: f64,
    /// Seed mixed into the game hash that decides the split.
    #[arg(long, default_value_t = 0)]
    split_seed: u64,
    /// Keep the moves before an illegal move instead of skipping the game.
    #[arg(long)]
    keep_truncated: bool,
    /// A compressed input that breaks off (truncated or corrupt): keep the complete games
    /// before the break, with a warning, instead of failing.
    #[arg(long)]
    allow_truncated: bool,
    /// Longest text of one game in bytes, and eight times the longest comment; a longer
    /// one (the symptom of a `{` comment never closed) is an error naming the game's number
    /// and line.
    #[arg(long, default_value_t = deepchess_train::pgn::batches::DEFAULT_MAX_GAME_BYTES)]
    max_game_bytes: u64,
    /// Name every skipped game (index and header).
    #[arg(long, short)]
    verbose: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

/// Runs `deepchess prepare`.
pub fn run(args: PrepareArgs) -> anyhow::Result<()> {
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("--threads: cannot start the thread pool")?;
    }
    let mut options = PrepareOptions::new(args.pgn, args.out);
    options.force = args.force;
    options.skip_moves = args.skip_moves;
    options.keep_captures = args.keep_captures;
    options.draws = args.draws;
    options.min_elo = args.min_elo;
    options.validation_fraction = args.validation_fraction;
    options.split_seed = args.split_seed;
    options.keep_truncated = args.keep_truncated;
    options.allow_truncated = args.allow_truncated;
    options.max_game_bytes = args.max_game_bytes;
    options.verbose = args.verbose;

    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} {msg} ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let mut on_progress = |p: Progress<'_>| {
        bar.set_prefix(p.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        bar.set_length(p.bytes_total);
        bar.set_position(p.bytes_done);
        let rate = p.games as f64 / started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{} games ({rate:.0}/s), {} records", p.games, p.records));
    };
    let mut log = |line: String| bar.suspend(|| eprintln!("{line}"));
    let result = prepare(&options, &mut on_progress, &mut log);
    bar.finish_and_clear();
    let summary = result?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    println!(
        "games_read={} games_used={} positions={}/{} moves={}/{} warnings={} seconds={:.2}",
        summary.games_read,
        summary.games_used,
        summary.positions.train,
        summary.positions.validation,
        summary.moves.train,
        summary.moves.validation,
        summary.warnings.len(),
        summary.seconds
    );
    Ok(())
}
