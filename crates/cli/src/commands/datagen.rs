//! `deepchess datagen`: self-play games of the evaluation search → datasets for the
//! evaluation net (see docs/datagen.md).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deepchess_datagen::{GameOptions, RunOptions, RunReport, Summary, Target};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `deepchess datagen`.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true).args(["games", "positions"]))]
pub struct DatagenArgs {
    /// Output directory: `moves-{train,validation}.bin`, `summary.json`, `games.pgn`;
    /// an existing datagen output is resumed.
    #[arg(long)]
    out: PathBuf,
    /// Directory with comparator/movepred/value models (default: the embedded ones).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Play until the output holds this many games.
    #[arg(long)]
    games: Option<u64>,
    /// Play until the output holds this many positions.
    #[arg(long)]
    positions: Option<u64>,
    /// Worker threads, one game each.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Soft node limit per move: no new iteration starts after it.
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Hard node limit per move: the search aborts (default: 4 × --nodes).
    #[arg(long)]
    hard_nodes: Option<u64>,
    /// Uniformly random legal plies from the start (or book) position.
    #[arg(long, default_value_t = 8)]
    random_plies: u32,
    /// Opening book: EPD, or PGN (by extension); a random position of it starts each game.
    #[arg(long)]
    book: Option<PathBuf>,
    /// Seed of the openings and the train/validation split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Nodes of the search that scores an opening.
    #[arg(long, default_value_t = 1000)]
    opening_nodes: u64,
    /// Openings scored beyond ± this many centipawns are drawn again.
    #[arg(long, default_value_t = 300, allow_negative_numbers = true)]
    opening_bound: i32,
    /// Win adjudication: |score| at least this many centipawns ...
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true)]
    win_score: i32,
    /// ... for this many consecutive plies (a mate score wins at once).
    #[arg(long, default_value_t = 6)]
    win_plies: u32,
    /// Draw adjudication only from this ply on.
    #[arg(long, default_value_t = 80)]
    draw_after: u32,
    /// Draw adjudication: |score| at most this many centipawns ...
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    draw_score: i32,
    /// ... for this many consecutive plies.
    #[arg(long, default_value_t = 12)]
    draw_plies: u32,
    /// Games still going after this many searched plies are draws.
    #[arg(long, default_value_t = 400)]
    max_plies: u32,
    /// Fraction of games in the validation split.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    validation_fraction: f64,
    /// Transposition table per thread in MB.
    #[arg(long, default_value_t = 16)]
    hash: usize,
    /// Start afresh: replace a previous datagen output in --out (nothing else is deleted).
    #[arg(long)]
    force: bool,
    /// Also write the games with `[%eval]` comments to `OUT/games.pgn`.
    #[arg(long)]
    pgn: bool,
}

impl DatagenArgs {
    fn options(self) -> RunOptions {
        let target = match (self.games, self.positions) {
            (Some(games), _) => Target::Games(games),
            (None, positions) => Target::Positions(positions.unwrap_or(0)),
        };
        RunOptions {
            game: GameOptions {
                models: self.models,
                nodes: self.nodes,
                hard_nodes: self.hard_nodes.unwrap_or(self.nodes.saturating_mul(4)),
                random_plies: self.random_plies,
                book: self.book,
                seed: self.seed,
                opening_nodes: self.opening_nodes,
                opening_bound: self.opening_bound,
                win_score: self.win_score,
                win_plies: self.win_plies,
                draw_after: self.draw_after,
                draw_score: self.draw_score,
                draw_plies: self.draw_plies,
                max_plies: self.max_plies,
                validation_fraction: self.validation_fraction,
                hash_mb: self.hash,
            },
            out: self.out,
            target,
            threads: self.threads,
            force: self.force,
            pgn: self.pgn,
            build: Some(env!("DEEPCHESS_GIT_COMMIT").to_string()),
        }
    }
}

/// The flag SIGINT raises.
static SIGINT_FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Makes SIGINT (Ctrl-C) raise `stop` instead of killing the process, so the games written so
/// far stay consistent and the summary gets its final update. (A direct `signal(2)` rather
/// than the `ctrlc` crate: that one's `nix` dependency changes `libc`'s features and with it
/// the build of every crate above `libc`.)
fn stop_on_sigint(stop: Arc<AtomicBool>) {
    extern "C" fn on_sigint(_: i32) {
        // Async-signal-safe: an atomic load and an atomic store.
        if let Some(flag) = SIGINT_FLAG.get() {
            flag.store(true, Ordering::Relaxed);
        }
    }
    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGINT: i32 = 2;
    if SIGINT_FLAG.set(stop).is_ok() {
        // SAFETY: installs a handler that only touches an atomic flag.
        unsafe { signal(SIGINT, on_sigint) };
    }
}

/// Runs `deepchess datagen`.
pub fn run(args: DatagenArgs) -> anyhow::Result<()> {
    let options = args.options();
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_sigint(stop.clone());
    let (length, unit) = match options.target {
        Target::Games(n) => (n, "games"),
        Target::Positions(n) => (n, "positions"),
    };
    let bar = ProgressBar::new(length);
    bar.set_style(
        ProgressStyle::with_template(&format!("{{spinner}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ETA {{eta}}"))
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let mut first = true;
    let mut on_game = |s: &Summary, run: &RunReport| {
        let (total, this_run) = match options.target {
            Target::Games(_) => (s.games, run.games),
            Target::Positions(_) => (s.positions, run.positions),
        };
        if std::mem::take(&mut first) {
            // A resumed run starts the bar (and its ETA) at what the output already held.
            bar.set_position(total - this_run);
            bar.reset_eta();
        }
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        bar.set_position(total);
        bar.set_message(format!(
            "{:.2} games/s {:.0} positions/s W/D/L {}/{}/{}",
            run.games as f64 / seconds,
            run.positions as f64 / seconds,
            s.white_wins,
            s.draws,
            s.black_wins
        ));
    };
    let result = deepchess_datagen::run(&options, stop, &mut on_game);
    bar.finish_and_clear();
    let report = result?;
    let s = &report.summary;
    if report.interrupted {
        println!("interrupted: the games in progress were dropped; run the same command again to resume");
    }
    println!(
        "{}: games={} positions={} (train {}, validation {}) W/D/L={}/{}/{}",
        options.out.display(),
        s.games,
        s.positions,
        s.train_positions,
        s.validation_positions,
        s.white_wins,
        s.draws,
        s.black_wins
    );
    println!(
        "this run: games={} positions={} seconds={:.1} threads={} positions/hour/thread={:.0} search_nps={:.0} overhead={:.1}%",
        report.games,
        report.positions,
        report.seconds,
        options.threads,
        report.positions_per_hour_per_thread(),
        report.search_nps(),
        report.overhead() * 100.0
    );
    Ok(())
}
