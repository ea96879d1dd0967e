//! `deepchess sts`: runs an EPD test suite (STS or plain `bm`/`am`) through one of our
//! searches (`deepchess uci` with options, one flag per option of the engine's table) or
//! any external UCI engine (`--uci "CMD"`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_arena::limits::TimeControl;
use deepchess_arena::player::split_command;
use deepchess_arena::suite::{Report, Suite};
use deepchess_arena::suite_runner::{SuiteSettings, run_suite};
use deepchess_arena::uci::EngineCommand;
use deepchess_core::atomic::{check_overwrite, write_atomic};
use deepchess_engine::engine::options::{OPTIONS, OptionType, UciOption};
use indicatif::{ProgressBar, ProgressStyle};

/// Our engine's options as flags, one per option of its table (`MctsLeaf` as `--mcts-leaf`),
/// sent as `setoption` in the table's order, then `--option NAME=VALUE` for any engine.
#[derive(Debug, Default)]
pub struct EngineFlags {
    /// The flags given, as (option name, value).
    options: Vec<(String, String)>,
    /// The `--option` texts.
    extra: Vec<String>,
}

/// The options that take a value, hence a flag (not buttons).
fn flag_options() -> impl Iterator<Item = &'static UciOption> {
    OPTIONS.iter().filter(|o| !matches!(o.kind, OptionType::Button { .. }))
}

/// An option's flag: `MctsLeaf` → `mcts-leaf`, `Move Overhead` → `move-overhead`, `UCI_Elo` →
/// `uci-elo`.
fn flag(name: &str) -> String {
    let mut flag = String::new();
    let mut previous = ' ';
    for c in name.chars() {
        if c == ' ' || c == '_' {
            flag.push('-');
        } else {
            if c.is_ascii_uppercase() && (previous.is_ascii_lowercase() || previous.is_ascii_digit()) {
                flag.push('-');
            }
            flag.push(c.to_ascii_lowercase());
        }
        previous = c;
    }
    flag
}

impl clap::Args for EngineFlags {
    fn augment_args(command: clap::Command) -> clap::Command {
        let flags = flag_options().map(|option| {
            let default = option.default_value().unwrap_or_default();
            // clap keeps `'static` flag names; these few are made once per run.
            let long: &'static str = String::leak(flag(option.name));
            let arg = clap::Arg::new(option.name).long(long).help(format!(
                "Our engine's `{}`: {} ({}; default {default})",
                option.name,
                option.doc,
                option.allowed()
            ));
            match option.kind {
                // Numbers are checked here for any engine; ranges are the engine's own.
                OptionType::Spin { .. } => arg.value_name("N").value_parser(clap::value_parser!(i64)),
                _ => arg.value_name("VALUE"),
            }
        });
        command.args(flags).arg(
            clap::Arg::new("option")
                .long("option")
                .value_name("NAME=VALUE")
                .action(clap::ArgAction::Append)
                .help("Any other engine option, `NAME=VALUE` (repeatable), e.g. `--option \"Skill Level=5\"`"),
        )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl clap::FromArgMatches for EngineFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = EngineFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for option in flag_options() {
            let value = match option.kind {
                OptionType::Spin { .. } => matches.get_one::<i64>(option.name).map(i64::to_string),
                _ => matches.get_one::<String>(option.name).cloned(),
            };
            if let Some(value) = value {
                self.options.retain(|(name, _)| name != option.name);
                self.options.push((option.name.to_owned(), value));
            }
        }
        self.extra.extend(matches.get_many::<String>("option").into_iter().flatten().cloned());
        Ok(())
    }
}

impl EngineFlags {
    /// The `setoption` pairs: the flags in the table's order, then the `--option`s.
    fn pairs(&self) -> anyhow::Result<Vec<(String, String)>> {
        let mut pairs = self.options.clone();
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
    options: EngineFlags,
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
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
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
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    if failed == results.len() {
        bail!(
            "all {failed} positions failed (the warnings above say why): the engine `{}` was not measured",
            settings.engine.argv.join(" ")
        );
    }
    if failed > 0 {
        eprintln!("warning: {failed} of {} positions failed and scored 0 (see the warnings above)", results.len());
    }
    Ok(())
}
