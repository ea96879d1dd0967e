//! `deepchess analyse`: one position, searched and explained for a person at a terminal.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_engine::engine::Engine;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::{Limits, Score};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Move, Position};

/// Arguments of `deepchess analyse`.
#[derive(clap::Args)]
pub struct AnalyseArgs {
    /// The position (FEN).
    #[arg(long)]
    fen: String,
    /// Moves to play from the FEN first (UCI notation, e.g. e2e4).
    #[arg(long, num_args = 1..)]
    moves: Vec<String>,
    /// Thinking time in milliseconds (default 1000 unless --depth or --nodes is given).
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
    /// Print the engine's progress lines.
    #[arg(long, short)]
    verbose: bool,
}

/// Runs `deepchess analyse`.
pub fn run(args: AnalyseArgs) -> anyhow::Result<()> {
    let moves: Vec<&str> = args.moves.iter().map(String::as_str).collect();
    let game = Game::from_uci(Some(&args.fen), &moves).context("--fen/--moves")?;
    let mut engine = Engine::load(args.models.as_deref()).context("loading the networks")?;
    // Nothing stands between the search and the terminal: no time is kept in hand.
    engine.set_option("Move Overhead", "0").map_err(|e| anyhow::anyhow!(e))?;
    engine.set_option("Search", &args.search).map_err(|e| anyhow::anyhow!("--search: {e}"))?;
    for option in &args.options {
        let Some((name, value)) = option.split_once('=') else { bail!("--option `{option}`: expected NAME=VALUE") };
        engine.set_option(name, value).map_err(|e| anyhow::anyhow!("--option {option}: {e}"))?;
    }
    let limits = Limits {
        move_time: args
            .movetime
            .or((args.depth.is_none() && args.nodes.is_none()).then_some(1000))
            .map(Duration::from_millis),
        depth: args.depth,
        nodes: args.nodes,
        ..Limits::default()
    };
    let verbose = args.verbose;
    let result = engine.go(&game, &limits, Arc::new(AtomicBool::new(false)), &mut |info| {
        if verbose {
            println!("{}", info.uci());
        }
    });
    let position = game.position();
    let Some(result) = result else {
        println!("no legal moves: {}", if position.is_checkmate() { "checkmate" } else { "stalemate" });
        return Ok(());
    };
    let score = match result.score {
        Score::Cp(cp) => format!("{:+.2} (pawns, side to move's view)", f64::from(cp) / 100.0),
        Score::Mate(n) if n > 0 => format!("mate in {n}"),
        Score::Mate(n) => format!("mated in {}", -n),
    };
    println!("best move: {}", san(position, &result.best));
    println!("score:     {score}");
    println!("pv:        {}", san_line(position, &result.pv));
    println!("depth:     {}   nodes: {}", result.depth, result.nodes);
    Ok(())
}

fn san(position: &Chess, m: &Move) -> String {
    SanPlus::from_move(position.clone(), *m).to_string()
}

/// A line in SAN with move numbers.
fn san_line(position: &Chess, line: &[Move]) -> String {
    let mut position = position.clone();
    let mut text = Vec::new();
    for (i, m) in line.iter().enumerate() {
        let number = position.fullmoves();
        if position.turn() == shakmaty::Color::White {
            text.push(format!("{number}."));
        } else if i == 0 {
            text.push(format!("{number}..."));
        }
        text.push(SanPlus::from_move_and_play_unchecked(&mut position, *m).to_string());
    }
    text.join(" ")
}
