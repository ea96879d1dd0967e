//! `deepchess match`: engine-vs-engine matches and round robins with Elo estimates and PGN,
//! and SPRT tests between two engines.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_arena::game::{Adjudication, DrawRule, GameSettings, ResignRule};
use deepchess_arena::limits::TimeControl;
use deepchess_arena::openings::{Opening, OpeningBook, shuffle};
use deepchess_arena::pgn::{PgnHeader, today, write_game};
use deepchess_arena::player::parse_player;
use deepchess_arena::sprt::{SprtSettings, SprtTest};
use deepchess_arena::standings::Standings;
use deepchess_arena::tournament::{MatchSettings, run_match};
use deepchess_core::atomic::{check_overwrite, write_atomic};
use deepchess_engine::tablebase::Tablebases;
use indicatif::{ProgressBar, ProgressStyle};

use super::sts::own_engine;

/// Arguments of `deepchess match`.
#[derive(clap::Args)]
pub struct MatchArgs {
    /// A player (repeat, at least two): `name=SF,cmd="stockfish",hash=64,option.UCI_Elo=1500`
    /// for an external UCI engine, or `name=B,search=eval,tt=on,...` for our own engine.
    #[arg(long = "engine", value_name = "SPEC", required = true)]
    engines: Vec<String>,
    /// Openings: EPD (a position per line) or PGN (.pgn: each game's moves). Each opening is
    /// played twice with colours swapped. Default: the standard start position.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Skip this many openings of the file first (after shuffling).
    #[arg(long, default_value_t = 0)]
    openings_offset: usize,
    /// Play the openings in a random order fixed by --seed instead of file order.
    #[arg(long)]
    shuffle_openings: bool,
    /// Seed of --shuffle-openings.
    #[arg(long, default_value_t = 0, requires = "shuffle_openings")]
    seed: u64,
    /// Games per pair of players (with --sprt, the most games played).
    #[arg(long, default_value_t = 2)]
    games: usize,
    /// Sequential probability ratio test between the two players, stopping the match when
    /// it decides: `elo0=0,elo1=10,alpha=0.05,beta=0.05[,model=normalized|logistic]`
    /// (H0: the first player is elo0 stronger, H1: elo1; normalized Elo by default).
    #[arg(long, value_name = "SPEC")]
    sprt: Option<SprtSettings>,
    /// Time per move in milliseconds.
    #[arg(long, group = "limit")]
    movetime: Option<u64>,
    /// Fixed nodes per move.
    #[arg(long, group = "limit")]
    nodes: Option<u64>,
    /// Fixed depth per move.
    #[arg(long, group = "limit")]
    depth: Option<u32>,
    /// Clock: `SECONDS+INCREMENT`, e.g. `10+0.1`.
    #[arg(long, group = "limit")]
    tc: Option<String>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Resign adjudication: score in centipawns (with --resign-moves).
    #[arg(long, requires = "resign_moves")]
    resign_score: Option<i32>,
    /// Resign adjudication: consecutive moves of the losing side.
    #[arg(long, requires = "resign_score")]
    resign_moves: Option<usize>,
    /// Draw adjudication: score within ±CP for both sides (with --draw-moves).
    #[arg(long, requires = "draw_moves")]
    draw_score: Option<i32>,
    /// Draw adjudication: consecutive moves of each side.
    #[arg(long, requires = "draw_score")]
    draw_moves: Option<usize>,
    /// Draw adjudication applies from this full move on.
    #[arg(long, default_value_t = 40)]
    draw_after: u32,
    /// Draw when the game reaches this many full moves.
    #[arg(long)]
    max_moves: Option<u32>,
    /// Syzygy tables (directories separated by `:`): a position they cover ends the game
    /// with their result, the fifty-move rule counted. Engines get them with
    /// `option.SyzygyPath=DIR` in their --engine spec.
    #[arg(long, value_name = "DIR[:DIR]")]
    syzygy_path: Option<String>,
    /// Write every game as PGN (with [%eval] and [%emt] comments).
    #[arg(long)]
    pgn_out: Option<PathBuf>,
    /// Overwrite the PGN file.
    #[arg(long)]
    force: bool,
    /// PGN `Event` tag.
    #[arg(long, default_value = "deepchess match")]
    event: String,
    /// Time over the clock or move time before an engine loses on time, in ms.
    #[arg(long, default_value_t = 1000)]
    margin_ms: u64,
    /// Wait for fixed-node/depth searches and handshakes before an engine counts as hung, in s.
    #[arg(long, default_value_t = 60)]
    hang_timeout_s: u64,
}

impl MatchArgs {
    fn time_control(&self) -> anyhow::Result<TimeControl> {
        Ok(match (self.movetime, self.nodes, self.depth, &self.tc) {
            (Some(ms), ..) => TimeControl::MoveTime(Duration::from_millis(ms)),
            (_, Some(n), ..) => TimeControl::Nodes(n),
            (_, _, Some(d), _) => TimeControl::Depth(d),
            (_, _, _, Some(tc)) => TimeControl::parse_clock(tc).map_err(anyhow::Error::msg)?,
            _ => bail!("give a time control: --movetime MS, --nodes N, --depth N or --tc SECONDS+INC"),
        })
    }

    fn adjudication(&self) -> Adjudication {
        Adjudication {
            resign: self.resign_score.zip(self.resign_moves).map(|(score_cp, moves)| ResignRule { score_cp, moves }),
            draw: self.draw_score.zip(self.draw_moves).map(|(score_cp, moves)| DrawRule {
                after_move: self.draw_after,
                moves,
                score_cp,
            }),
            max_moves: self.max_moves,
        }
    }

    fn openings(&self) -> anyhow::Result<Vec<Opening>> {
        let Some(path) = &self.openings else { return Ok(vec![Opening::startpos()]) };
        let book = OpeningBook::read(path)?;
        for e in &book.errors {
            eprintln!("warning: {}: {e} (skipped)", path.display());
        }
        let mut openings = book.openings;
        if self.shuffle_openings {
            shuffle(&mut openings, self.seed);
        }
        let openings: Vec<Opening> = openings.into_iter().skip(self.openings_offset).collect();
        if openings.is_empty() {
            bail!("{}: no usable openings (after --openings-offset {})", path.display(), self.openings_offset);
        }
        Ok(openings)
    }
}

/// Runs `deepchess match`.
pub fn run(args: MatchArgs) -> anyhow::Result<()> {
    if let Some(pgn) = &args.pgn_out {
        check_overwrite(pgn, args.force)?;
    }
    if args.engines.len() < 2 {
        bail!("--engine: a match needs at least two players");
    }
    if args.concurrency == 0 || args.games == 0 {
        bail!("--concurrency and --games must be at least 1");
    }
    let own = own_engine()?;
    let players = args
        .engines
        .iter()
        .map(|spec| parse_player(spec, &own).map_err(|e| anyhow::anyhow!("--engine: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let names: Vec<String> = players.iter().map(|p| p.name.clone()).collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            bail!("--engine: two players are named \"{name}\"; give them distinct name=...");
        }
    }
    if args.sprt.is_some() && names.len() != 2 {
        bail!("--sprt: a test is between two players, got {}", names.len());
    }
    let tc = args.time_control()?;
    let tablebases = match &args.syzygy_path {
        Some(path) => {
            let tables = Tablebases::open(path).map_err(|e| anyhow::anyhow!("--syzygy-path: {e}"))?;
            eprintln!("adjudicating with {}", tables.summary());
            Some(Arc::new(tables))
        }
        None => None,
    };
    let settings = MatchSettings {
        players,
        openings: args.openings()?,
        games_per_pair: args.games,
        concurrency: args.concurrency,
        game: GameSettings {
            tc,
            adjudication: args.adjudication(),
            margin: Duration::from_millis(args.margin_ms),
            hang_timeout: Duration::from_secs(args.hang_timeout_s),
            handshake_timeout: Duration::from_secs(args.hang_timeout_s),
            tablebases,
        },
    };
    let pairs = names.len() * (names.len() - 1) / 2;
    let total = pairs * args.games;
    let order =
        if args.shuffle_openings { format!("shuffled with seed {}", args.seed) } else { "in file order".into() };
    eprintln!(
        "{} players, {} games ({} per pair), {}, {} openings {order}, {} at once",
        names.len(),
        total,
        args.games,
        tc,
        settings.openings.len(),
        args.concurrency
    );
    let mut sprt = args.sprt.map(SprtTest::new);
    if let Some(test) = &sprt {
        eprintln!(
            "SPRT {}, LLR bounds [{:.2}, {:.2}], at most {total} games",
            test.settings(),
            test.settings().lower_bound(),
            test.settings().upper_bound()
        );
        if total % 2 == 1 {
            eprintln!("warning: --games {total} is odd: the last game has no partner and stays out of the SPRT");
        }
    }

    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut tally: Vec<deepchess_arena::elo::Record> = vec![Default::default(); names.len()];
    let on_game = |g: &deepchess_arena::tournament::FinishedGame, done: usize| {
        let sign = g.record.end.result.white_sign();
        tally[g.pairing.white].add(sign);
        tally[g.pairing.black].add(-sign);
        let line = format!(
            "game {:>4} ({done}/{total}): {} - {} {} ({}, {} plies)",
            g.pairing.round,
            g.record.white,
            g.record.black,
            g.record.end.result.pgn(),
            g.record.end.reason,
            g.record.moves.len()
        );
        bar.suspend(|| eprintln!("{line}"));
        let mut line: Vec<String> = names
            .iter()
            .zip(&tally)
            .map(|(n, r)| format!("{n} +{}={}-{} {:.1}", r.wins, r.draws, r.losses, r.points()))
            .collect();
        let mut flow = ControlFlow::Continue(());
        if let Some(test) = &mut sprt {
            if let Some(verdict) = test.add(g) {
                bar.suspend(|| eprintln!("SPRT: {verdict}; no new games start"));
                flow = ControlFlow::Break(());
            }
            line.push(format!("LLR {:.2}", test.llr()));
        }
        bar.set_message(line.join(" | "));
        bar.inc(1);
        flow
    };
    let games = run_match(&settings, on_game, |w| bar.suspend(|| eprintln!("warning: {w}")))
        .context("the match cannot begin")?;
    bar.finish_and_clear();

    if let Some(path) = &args.pgn_out {
        let header = PgnHeader { event: args.event.clone(), site: hostname(), date: today(), tc };
        let text: String = games.iter().map(|g| write_game(&header, g.pairing.round, &g.record)).collect();
        write_atomic(path, text.as_bytes()).with_context(|| format!("--pgn-out {}", path.display()))?;
        eprintln!("{} games written to {}", games.len(), path.display());
    }
    println!("{}", Standings::new(&names, &games).render());
    if let Some(test) = &sprt {
        println!("\n{} vs {}: {}", names[0], names[1], test.report());
    }
    Ok(())
}

/// The machine's name for the PGN `Site` tag.
fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "?".into())
}
