//! `deepchess analyse`: one position, searched and explained for a person at a terminal
//! (best lines, win/draw/loss chances, the move predictors' favourites), or a whole PGN
//! game annotated with the engine's scores and choices.

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use deepchess_engine::engine::Engine;
use deepchess_engine::nn::Scratch;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::ordering::move_probabilities;
use deepchess_engine::search::{Info, Limits, Report, Score, SearchResult, wdl};
use pgn_reader::{Outcome, RawTag, Reader, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position};

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
    if let Some(out) = &args.out
        && out.exists()
        && !args.force
    {
        bail!("--out {}: the file exists (--force overwrites it)", out.display());
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
            let path = args.pgn.as_deref().expect("--pgn");
            let text = annotate(&mut engine, &pgn, &limits, args.verbose)
                .with_context(|| format!("{} game {}", path.display(), args.game))?;
            match &args.out {
                None => {
                    print!("{text}");
                    Ok(())
                }
                Some(out) => write_new(out, &text, args.force),
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

fn san(position: &Chess, m: &Move) -> String {
    SanPlus::from_move(position.clone(), *m).to_string()
}

/// A line in SAN with move numbers.
fn san_line(position: &Chess, line: &[Move]) -> String {
    let mut position = position.clone();
    let mut text = Vec::new();
    for (i, m) in line.iter().enumerate() {
        let number = position.fullmoves();
        if position.turn() == Color::White {
            text.push(format!("{number}."));
        } else if i == 0 {
            text.push(format!("{number}..."));
        }
        text.push(SanPlus::from_move_and_play_unchecked(&mut position, *m).to_string());
    }
    text.join(" ")
}

/// A game read from a PGN file: its tags, start position and main line.
struct PgnGame {
    tags: Vec<(String, String)>,
    start: Chess,
    moves: Vec<Move>,
    outcome: Outcome,
}

/// Reads game `number` (from 1) of the PGN file at `path`; errors name the file and game.
fn read_pgn_game(path: &Path, number: u64) -> anyhow::Result<PgnGame> {
    let file = std::fs::File::open(path).with_context(|| format!("--pgn {}", path.display()))?;
    let mut reader = Reader::new(file);
    let mut count = 0;
    loop {
        let wanted = count + 1 == number;
        let parsed = reader
            .read_game(&mut GameVisitor { wanted })
            .with_context(|| format!("reading {} game {}", path.display(), count + 1))?;
        let Some(parsed) = parsed else {
            bail!("{}: no game {number} (the file has {count})", path.display());
        };
        count += 1;
        if wanted {
            return parsed.map_err(|e| anyhow::anyhow!("{} game {number}: {e}", path.display()));
        }
    }
}

/// Reads a game's tags and main line (`wanted`: otherwise the game is only counted).
struct GameVisitor {
    wanted: bool,
}

/// The main line read so far.
struct Movetext {
    game: PgnGame,
    position: Chess,
}

impl Visitor for GameVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let start = match tags.iter().find(|(name, _)| name == "FEN") {
            Some((_, fen)) if self.wanted => {
                let parsed = fen
                    .parse::<Fen>()
                    .map_err(|e| e.to_string())
                    .and_then(|f| f.into_position(CastlingMode::Standard).map_err(|e| e.to_string()));
                match parsed {
                    Ok(position) => position,
                    Err(e) => return ControlFlow::Break(Err(format!("FEN tag `{fen}`: {e}"))),
                }
            }
            _ => Chess::default(),
        };
        let game = PgnGame { tags, start: start.clone(), moves: Vec::new(), outcome: Outcome::Unknown };
        ControlFlow::Continue(Movetext { game, position: start })
    }

    fn san(&mut self, line: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if !self.wanted {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&line.position) {
            Ok(m) => {
                line.game.moves.push(m);
                line.position.play_unchecked(m);
                ControlFlow::Continue(())
            }
            Err(e) => {
                let ply = line.game.moves.len() + 1;
                ControlFlow::Break(Err(format!("move {ply} (`{san_plus}`) is not legal: {e}")))
            }
        }
    }

    fn begin_variation(&mut self, _line: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn outcome(&mut self, line: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        line.game.outcome = outcome;
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, line: Self::Movetext) -> Self::Output {
        Ok(line.game)
    }
}

/// `[%eval]` text of the position after a move (lichess's way): pawns from White's view,
/// `#N` / `#-N` for White / Black mating in N; a finished game is `#0`/`#-0` (White/Black
/// has mated) or `0.00` (a draw).
fn eval_text(analysis: Option<&Analysis>, position: &Chess) -> String {
    let Some(analysis) = analysis else {
        return match position.is_checkmate() {
            true if position.turn() == Color::Black => "#0".to_string(),
            true => "#-0".to_string(),
            false => "0.00".to_string(),
        };
    };
    let sign = if position.turn() == Color::White { 1 } else { -1 };
    match analysis.result.score {
        Score::Cp(cp) => format!("{:.2}", f64::from(sign * cp) / 100.0),
        Score::Mate(n) => format!("#{}", sign * n),
    }
}

/// The game annotated: every position searched, `{ [%eval] }` after each move, and the
/// engine's line as a variation where its choice differs from the move played.
fn annotate(engine: &mut Engine, pgn: &PgnGame, limits: &Limits, verbose: bool) -> anyhow::Result<String> {
    let mut game = Game::new(pgn.start.clone());
    let mut analyses = Vec::with_capacity(pgn.moves.len() + 1);
    let mut positions = Vec::with_capacity(pgn.moves.len() + 1);
    for &m in &pgn.moves {
        positions.push(game.position().clone());
        analyses.push(search(engine, &game, limits, verbose));
        game.play(m);
    }
    positions.push(game.position().clone());
    analyses.push(search(engine, &game, limits, verbose));

    let mut text = String::new();
    for (name, value) in &pgn.tags {
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        writeln!(text, "[{name} \"{value}\"]")?;
    }
    if !pgn.tags.iter().any(|(name, _)| name == "Annotator") {
        writeln!(text, "[Annotator \"deepchess\"]")?;
    }
    text.push('\n');
    let mut atoms: Vec<String> = Vec::new();
    for (i, m) in pgn.moves.iter().enumerate() {
        let before = &positions[i];
        let number = before.fullmoves();
        let dots = if before.turn() == Color::White { "." } else { "..." };
        atoms.push(format!("{number}{dots} {}", san(before, m)));
        atoms.push(format!("{{ [%eval {}] }}", eval_text(analyses[i + 1].as_ref(), &positions[i + 1])));
        if let Some(choice) = &analyses[i]
            && choice.result.best != *m
        {
            // The engine's line, its score after its first move as lichess places it.
            let pv = &choice.result.pv;
            let mut variation =
                format!("( {} {{ [%eval {}] }}", san_line(before, &pv[..1]), eval_text(Some(choice), before));
            if pv.len() > 1 {
                let mut after = before.clone();
                after.play_unchecked(pv[0]);
                write!(variation, " {}", san_line(&after, &pv[1..]))?;
            }
            atoms.push(variation + " )");
        }
    }
    atoms.push(pgn.outcome.to_string());
    let mut line = String::new();
    for atom in atoms {
        if !line.is_empty() && line.len() + 1 + atom.len() > 79 {
            writeln!(text, "{line}")?;
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&atom);
    }
    writeln!(text, "{line}\n")?;
    Ok(text)
}

/// Writes `text` to `path` through a temporary file renamed into place, refusing to replace
/// an existing file unless `force`.
fn write_new(path: &Path, text: &str, force: bool) -> anyhow::Result<()> {
    if path.exists() && !force {
        bail!("--out {}: the file exists (--force overwrites it)", path.display());
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp-{}", std::process::id()));
    let temp = PathBuf::from(temp);
    std::fs::write(&temp, text).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("renaming {} to {}", temp.display(), path.display()))
}
