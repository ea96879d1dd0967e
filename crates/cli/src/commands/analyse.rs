//! `deepchess analyse`: one position, searched and explained for a person at a terminal
//! (best lines, win/draw/loss chances, the move predictors' favourites), or a whole PGN
//! game annotated with the engine's scores and choices (read and written by
//! `deepchess_arena::pgn_game` and `deepchess_arena::annotate`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_arena::annotate::{annotate, san, san_line};
use deepchess_arena::pgn_game::{PgnGame, read_game};
use deepchess_core::atomic::{check_overwrite, write_atomic};
use deepchess_engine::engine::Engine;
use deepchess_engine::nn::Scratch;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::ordering::move_probabilities;
use deepchess_engine::search::{Info, Limits, Report, Score, SearchResult, wdl};
use deepchess_train::guard;
use deepchess_train::pgn::input as pgn_input;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

/// How many of the move predictors' favourite moves are listed.
const POLICY_MOVES: usize = 5;

/// Arguments of `deepchess analyse`.
#[derive(clap::Args)]
pub struct AnalyseArgs {
    /// The position: a FEN, or `startpos` (the default when neither --fen nor --pgn is given).
    #[arg(long, conflicts_with = "pgn")]
    fen: Option<String>,
    /// Moves to play from the position first, in UCI (e2e4) or SAN (e4, Nf3, O-O).
    #[arg(long, num_args = 1.., conflicts_with = "pgn")]
    moves: Vec<String>,
    /// Lines to search and print, best first (the engine's `MultiPV`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    multipv: u32,
    /// Annotate a game of this PGN file instead: every position is searched and the game is
    /// written as PGN with `[%eval]` comments and the engine's choices as variations.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Which game of the PGN file to annotate, from 1.
    #[arg(long, default_value_t = 1, requires = "pgn", value_parser = clap::value_parser!(u64).range(1..))]
    game: u64,
    /// Write the annotated PGN here instead of standard output.
    #[arg(long, value_name = "FILE", requires = "pgn")]
    out: Option<PathBuf>,
    /// Overwrite the --out file if it exists.
    #[arg(long, requires = "out")]
    force: bool,
    /// Thinking time in milliseconds (default 1000, with --pgn 200 per position, unless
    /// --depth or --nodes is given).
    #[arg(long)]
    movetime: Option<u64>,
    /// Search depth in plies.
    #[arg(long)]
    depth: Option<u32>,
    /// Node budget (MCTS: playouts).
    #[arg(long)]
    nodes: Option<u64>,
    /// The search: compare, eval, mcts or policy.
    #[arg(long, default_value = "eval")]
    search: String,
    /// Any engine option as NAME=VALUE (the UCI options, e.g. TT=false, MctsLeaf=value).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Directory with comparator/movepred/value models (default: the embedded ones).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Syzygy endgame tables, directories separated by `:` (the `SyzygyPath` option).
    #[arg(long, value_name = "DIR[:DIR]")]
    syzygy_path: Option<String>,
    /// Print the engine's progress lines.
    #[arg(long, short)]
    verbose: bool,
}

/// Runs `deepchess analyse`.
pub fn run(args: AnalyseArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        check_output(out, args.pgn.as_deref(), args.force)?;
    }
    // Read the input before the networks load, so that mistakes are reported at once.
    let input = match &args.pgn {
        Some(path) => Input::Pgn(read_pgn_game(path, args.game)?),
        None => Input::Position(parse_game(args.fen.as_deref().unwrap_or("startpos"), &args.moves)?),
    };
    let mut engine = Engine::load(args.models.as_deref()).context("loading the networks")?;
    // Nothing stands between the search and the terminal: no time is kept in hand.
    engine.set_option("Move Overhead", "0").map_err(|e| anyhow::anyhow!(e))?;
    engine.set_option("Search", &args.search).map_err(|e| anyhow::anyhow!("--search: {e}"))?;
    engine.set_option("UCI_ShowWDL", "true").map_err(|e| anyhow::anyhow!(e))?;
    let multipv = if args.pgn.is_some() { 1 } else { args.multipv };
    engine.set_option("MultiPV", &multipv.to_string()).map_err(|e| anyhow::anyhow!("--multipv: {e}"))?;
    for option in &args.options {
        let Some((name, value)) = option.split_once('=') else { bail!("--option `{option}`: expected NAME=VALUE") };
        engine.set_option(name, value).map_err(|e| anyhow::anyhow!("--option {option}: {e}"))?;
    }
    if let Some(path) = &args.syzygy_path {
        engine.set_option("SyzygyPath", path).map_err(|e| anyhow::anyhow!("--syzygy-path: {e}"))?;
    }
    for note in engine.take_notes() {
        eprintln!("{note}");
    }
    let default_ms = if args.pgn.is_some() { 200 } else { 1000 };
    let limits = Limits {
        move_time: args
            .movetime
            .or((args.depth.is_none() && args.nodes.is_none()).then_some(default_ms))
            .map(Duration::from_millis),
        depth: args.depth,
        nodes: args.nodes,
        ..Limits::default()
    };
    match input {
        Input::Position(game) => analyse_position(&mut engine, &game, &limits, args.verbose),
        Input::Pgn(pgn) => {
            let text = annotate(&pgn, |game| search(&mut engine, game, &limits, args.verbose).map(|a| a.result));
            match &args.out {
                None => {
                    print!("{text}");
                    Ok(())
                }
                Some(out) => {
                    // Checked again: the file may have appeared during the search.
                    check_output(out, args.pgn.as_deref(), args.force)?;
                    write_atomic(out, text.as_bytes()).map_err(|e| anyhow::anyhow!("--out {e}"))
                }
            }
        }
    }
}

/// What `analyse` works on.
enum Input {
    /// One position (with the moves that led to it).
    Position(Game),
    /// A game read from a PGN file.
    Pgn(PgnGame),
}

/// The game at `fen` (`startpos` or a FEN) after `moves`, each in UCI or SAN and checked
/// in the position it is played in.
fn parse_game(fen: &str, moves: &[String]) -> anyhow::Result<Game> {
    let position = if fen.trim() == "startpos" {
        Chess::default()
    } else {
        let parsed: Fen = fen.trim().parse().map_err(|e| anyhow::anyhow!("--fen `{fen}`: {e}"))?;
        parsed.into_position(CastlingMode::Standard).map_err(|e| anyhow::anyhow!("--fen `{fen}`: {e}"))?
    };
    let mut game = Game::new(position);
    for (i, text) in moves.iter().enumerate() {
        let m = parse_move(game.position(), text).map_err(|reason| {
            let fen = Fen::from_position(game.position(), shakmaty::EnPassantMode::Legal);
            anyhow::anyhow!("--moves: move {} `{text}` {reason} (position {fen})", i + 1)
        })?;
        game.play(m);
    }
    Ok(game)
}

/// A move of `position` in UCI (`e2e4`) or SAN (`e4`, `Nxf7+`).
fn parse_move(position: &Chess, text: &str) -> Result<Move, &'static str> {
    if let Ok(uci) = UciMove::from_ascii(text.as_bytes()) {
        return uci.to_move(position).map_err(|_| "is not legal");
    }
    let san = SanPlus::from_ascii(text.as_bytes()).map_err(|_| "is neither UCI nor SAN")?;
    san.san.to_move(position).map_err(|_| "is not legal (or is ambiguous)")
}

/// A search of the game's position: its result and the last report of each line, best first.
struct Analysis {
    result: SearchResult,
    lines: Vec<Info>,
}

/// Searches `game`'s position; `None` when the game is over.
fn search(engine: &mut Engine, game: &Game, limits: &Limits, verbose: bool) -> Option<Analysis> {
    let mut lines: Vec<Info> = Vec::new();
    let result = engine.go(game, limits, Arc::new(AtomicBool::new(false)), &mut |report| {
        if verbose {
            println!("{}", report.uci());
        }
        if let Report::Info(info) = report
            && !info.pv.is_empty()
        {
            let index = info.multipv.max(1) as usize - 1;
            if lines.len() <= index {
                lines.resize(index + 1, info.clone());
            }
            lines[index] = info.clone();
        }
    })?;
    // The result is what the engine plays: it heads the list whatever the last reports said,
    // with the chances its report gave for the same score (computed on the value net's
    // scale otherwise).
    let reported = lines.iter().position(|line| line.pv[0] == result.best).map(|i| lines.remove(i));
    let chances = reported
        .filter(|line| line.score == result.score)
        .and_then(|line| line.wdl)
        .unwrap_or_else(|| wdl(result.score, engine.networks().value.centipawns_per_unit()));
    let best = Info {
        multipv: 1,
        wdl: Some(chances),
        ..Info::new(result.depth, result.depth, result.score, result.nodes, 0, result.pv.clone())
    };
    lines.insert(0, best);
    Some(Analysis { result, lines })
}

/// Prints the best move, score, win/draw/loss chances, lines and the policy's favourites.
fn analyse_position(engine: &mut Engine, game: &Game, limits: &Limits, verbose: bool) -> anyhow::Result<()> {
    let position = game.position();
    let Some(Analysis { result, lines }) = search(engine, game, limits, verbose) else {
        println!("no legal moves: {}", if position.is_checkmate() { "checkmate" } else { "stalemate" });
        return Ok(());
    };
    println!("best move: {}", san(position, &result.best));
    println!("score:     {} (side to move's view)", score_text(result.score));
    let [w, d, l] = lines[0].wdl.unwrap_or([0, 1000, 0]);
    println!("wdl:       win {}%  draw {}%  loss {}% (side to move)", permille(w), permille(d), permille(l));
    println!("pv:        {}", san_line(position, &result.pv));
    println!("depth:     {}   nodes: {}", result.depth, result.nodes);
    for (i, line) in lines.iter().enumerate() {
        println!(
            "line {}:    {} {}  {}",
            i + 1,
            san(position, &line.pv[0]),
            score_text(line.score),
            san_line(position, &line.pv)
        );
    }
    let favourites: Vec<String> =
        policy(engine, position).iter().map(|(m, p)| format!("{} {:.1}%", san(position, m), p * 100.0)).collect();
    println!("policy:    {}", favourites.join(", "));
    Ok(())
}

/// The move predictors' top moves with their probabilities, normalised over the legal moves.
fn policy(engine: &Engine, position: &Chess) -> Vec<(Move, f32)> {
    let moves: Vec<Move> = position.legal_moves().into_iter().collect();
    let probabilities = move_probabilities(&engine.networks().movepred, position, &moves, &mut Scratch::default());
    let total: f32 = probabilities.iter().sum();
    let mut ranked: Vec<(Move, f32)> =
        moves.into_iter().zip(probabilities).map(|(m, p)| (m, if total > 0.0 { p / total } else { 0.0 })).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked.truncate(POLICY_MOVES);
    ranked
}

/// Permille as a percentage with one decimal.
fn permille(n: u32) -> String {
    format!("{}.{}", n / 10, n % 10)
}

/// A score for a person: pawns or mate in N, side to move's view.
fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
        Score::Mate(n) if n > 0 => format!("mate in {n}"),
        Score::Mate(n) => format!("mated in {}", -n),
    }
}

/// Reads game `number` (from 1) of the PGN file at `path`, compressed or not (as `prepare`
/// reads them); errors name the file and the game.
fn read_pgn_game(path: &Path, number: u64) -> anyhow::Result<PgnGame> {
    let input = pgn_input::open(path).with_context(|| format!("--pgn {}", path.display()))?;
    read_game(input.reader, number).with_context(|| format!("--pgn {}", path.display()))
}

/// Refuses an `--out` that is the `--pgn` input (under any spelling or link), even with
/// `--force`, and an existing one without it.
fn check_output(out: &Path, input: Option<&Path>, force: bool) -> anyhow::Result<()> {
    if let Some(input) = input
        && guard::same_path(out, input)
    {
        bail!(
            "--out {} is the input --pgn {}: the annotated game would replace the game it is made from (even with --force); write it elsewhere",
            out.display(),
            input.display()
        );
    }
    check_overwrite(out, force).map_err(|e| anyhow::anyhow!("--out {e}"))
}
