//! `deepchess sts`: runs an EPD test suite (STS or plain `bm`/`am`) through one of our
//! searches (`deepchess uci` with options) or any external UCI engine (`--uci "CMD"`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_arena::limits::TimeControl;
use deepchess_arena::player::split_command;
use deepchess_arena::suite::{Report, Suite};
use deepchess_arena::suite_runner::{SuiteSettings, run_suite};
use deepchess_arena::uci::EngineCommand;
use deepchess_core::atomic::{check_overwrite, write_atomic};
use indicatif::{ProgressBar, ProgressStyle};

/// Options of our own engine, sent as `setoption` (and `--option` for any engine).
#[derive(clap::Args, Debug, Default)]
pub struct EngineOptions {
    /// Our search: compare, eval, mcts or policy.
    #[arg(long)]
    search: Option<String>,
    /// Transposition table: true or false.
    #[arg(long)]
    tt: Option<String>,
    /// Move ordering by the move predictors: true or false.
    #[arg(long)]
    ordering: Option<String>,
    /// MCTS leaf evaluation: value (a), rollout (b), random (c) or puct (d).
    #[arg(long)]
    mcts_leaf: Option<String>,
    /// MCTS final-move rule: value, visits or both.
    #[arg(long)]
    mcts_select: Option<String>,
    /// Policy player mode (see `deepchess uci`).
    #[arg(long)]
    policy_mode: Option<String>,
    /// Hash table size in MB.
    #[arg(long)]
    hash: Option<u32>,
    /// Search threads (sent as the `Threads` option).
    #[arg(long)]
    threads: Option<u32>,
    /// Model directory.
    #[arg(long)]
    models: Option<String>,
    /// Move overhead in ms.
    #[arg(long)]
    move_overhead: Option<u32>,
    /// Any other engine option, `NAME=VALUE` (repeatable), e.g. `--option "Skill Level=5"`.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    extra: Vec<String>,
}

impl EngineOptions {
    /// The `setoption` pairs, in a fixed order.
    fn pairs(&self) -> anyhow::Result<Vec<(String, String)>> {
        let text = |v: &Option<String>| v.clone();
        let number = |v: Option<u32>| v.map(|n| n.to_string());
        let mut pairs: Vec<(String, String)> = [
            ("Search", text(&self.search)),
            ("TT", text(&self.tt)),
            ("Ordering", text(&self.ordering)),
            ("MctsLeaf", text(&self.mcts_leaf)),
            ("MctsSelect", text(&self.mcts_select)),
            ("PolicyMode", text(&self.policy_mode)),
            ("Hash", number(self.hash)),
            ("Threads", number(self.threads)),
            ("Models", text(&self.models)),
            ("MoveOverhead", number(self.move_overhead)),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect();
        for extra in &self.extra {
            let Some((name, value)) = extra.split_once('=') else {
                bail!("--option \"{extra}\": expected NAME=VALUE");
            };
            pairs.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        Ok(pairs)
    }
}

/// Arguments of `deepchess sts`.
#[derive(clap::Args)]
pub struct StsArgs {
    /// EPD suite (STS with c8/c9 scores, or bm/am positions).
    #[arg(long)]
    epd: PathBuf,
    /// Time per position in milliseconds.
    #[arg(long, default_value_t = 100, conflicts_with_all = ["nodes", "depth"])]
    movetime: u64,
    /// Fixed nodes per position instead of a time.
    #[arg(long, conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Fixed depth per position instead of a time.
    #[arg(long)]
    depth: Option<u32>,
    /// External UCI engine command (quoted as in a shell); default: our own `deepchess uci`.
    #[arg(long, value_name = "CMD")]
    uci: Option<String>,
    #[command(flatten)]
    options: EngineOptions,
    /// Engine processes running positions at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Only the first N positions.
    #[arg(long)]
    limit: Option<usize>,
    /// Save per-position results (move, points, time, nodes) and the table as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Overwrite the JSON file.
    #[arg(long)]
    force: bool,
    /// Time over the move time before an engine counts as hung, in ms.
    #[arg(long, default_value_t = 1000)]
    margin_ms: u64,
    /// Wait for fixed-node/depth searches and handshakes before an engine counts as hung, in s.
    #[arg(long, default_value_t = 60)]
    hang_timeout_s: u64,
}

/// The command that starts our own engine.
pub(crate) fn own_engine() -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe().context("cannot find the deepchess executable")?;
    Ok(vec![exe.to_string_lossy().into_owned(), "uci".into()])
}

/// Runs `deepchess sts`.
pub fn run(args: StsArgs) -> anyhow::Result<()> {
    if let Some(json) = &args.json {
        check_overwrite(json, args.force)?;
    }
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let mut suite = Suite::read(&args.epd)?;
    for e in &suite.errors {
        eprintln!("warning: {}: {e} (skipped)", args.epd.display());
    }
    if let Some(n) = args.limit {
        suite.positions.truncate(n);
    }
    if suite.positions.is_empty() {
        bail!("{}: no usable positions", args.epd.display());
    }
    let argv = match &args.uci {
        Some(cmd) => split_command(cmd).map_err(|e| anyhow::anyhow!("--uci: {e}"))?,
        None => own_engine()?,
    };
    let options = args.options.pairs()?;
    let engine = EngineCommand { name: deepchess_arena::player::default_name(&argv, &options), argv, options };
    let limit = match (args.nodes, args.depth) {
        (Some(n), _) => TimeControl::Nodes(n),
        (None, Some(d)) => TimeControl::Depth(d),
        (None, None) => TimeControl::MoveTime(Duration::from_millis(args.movetime)),
    };
    let settings = SuiteSettings {
        engine,
        limit,
        concurrency: args.concurrency,
        margin: Duration::from_millis(args.margin_ms),
        hang_timeout: Duration::from_secs(args.hang_timeout_s),
        handshake_timeout: Duration::from_secs(args.hang_timeout_s),
    };
    eprintln!(
        "{}: {} positions, engine `{}`, {}, {} at once",
        args.epd.display(),
        suite.positions.len(),
        settings.engine.argv.join(" "),
        limit,
        args.concurrency
    );

    let bar = ProgressBar::new(suite.positions.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg} ETA {eta}").expect("valid template").progress_chars("=> "),
    );
    let (mut points, mut max, mut best) = (0u64, 0u64, 0usize);
    let on_result = |r: &deepchess_arena::suite::PositionResult| {
        (points, max, best) = (points + u64::from(r.points), max + u64::from(r.max), best + usize::from(r.best));
        if let Some(e) = &r.error {
            bar.suspend(|| eprintln!("warning: {} (line {}): {e}", r.id, r.line));
        }
        bar.set_message(format!("points {points}/{max}, best {best}"));
        bar.inc(1);
    };
    let results = run_suite(&settings, &suite.positions, on_result, |w| bar.suspend(|| eprintln!("warning: {w}")));
    bar.finish_and_clear();
    let results = results?;
    let report = Report::new(&results);
    if let Some(json) = &args.json {
        let document = serde_json::json!({
            "epd": args.epd.display().to_string(),
            "engine": settings.engine.name,
            "command": settings.engine.argv,
            "options": settings.engine.options,
            "limit": limit.to_string(),
            "report": report,
            "rating": report.rating(),
            "positions": results,
        });
        write_atomic(json, serde_json::to_string_pretty(&document)?.as_bytes())?;
    }
    println!("{}", report.render());
    Ok(())
}
