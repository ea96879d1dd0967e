//! The UCI protocol, engine side (what a GUI or the arena's UCI client talks to): reads
//! commands, runs searches on a thread (so that `stop`, `isready` and `quit` are answered
//! at once) and writes `info` and `bestmove` lines.
//!
//! Malformed input never ends the session: it is answered with `info string error: …`
//! and the engine keeps its previous, valid state.
//!
//! `go ponder` searches without time limits until `ponderhit` (from which the clock
//! counts) or `stop`; its `bestmove` waits for one of them. Under `UCI_Chess960`
//! positions take Chess960 castling rights and castling is written as the king taking
//! its rook.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move, Position};

use crate::engine::Engine;
use crate::engine::options::OPTIONS;
use crate::position_history::Game;
use crate::search::{Limits, Ponder, Score, SearchResult, uci_move_in};

/// Shared output: lines are written whole and flushed.
#[derive(Clone)]
struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    fn line(&self, text: &str) {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A closed output (the GUI went away) is not worth a panic.
        let _ = writeln!(out, "{text}").and_then(|_| out.flush());
    }

    fn error(&self, text: &str) {
        self.line(&format!("info string error: {text}"));
    }
}

/// A search running on its thread.
struct Running {
    handle: JoinHandle<Engine>,
    stop: Arc<AtomicBool>,
    /// The `ponderhit` of a `go ponder`.
    ponder: Option<Ponder>,
}

/// The protocol state.
struct Session {
    out: Output,
    game: Game,
    /// Why the last `position` was refused: the GUI's position is then unknown and `go`
    /// answers `bestmove 0000` until a `position` is accepted.
    rejected: Option<String>,
    engine: Option<Engine>,
    running: Option<Running>,
    /// How positions and moves are read and written (`UCI_Chess960`).
    mode: CastlingMode,
}

/// Runs a UCI session on `input` and `output` until `quit` or the end of the input.
pub fn run(engine: Engine, input: impl BufRead, output: impl Write + Send + 'static) -> std::io::Result<()> {
    let mut session = Session {
        out: Output(Arc::new(Mutex::new(Box::new(output)))),
        game: Game::default(),
        rejected: None,
        mode: engine.castling_mode(),
        engine: Some(engine),
        running: None,
    };
    let read = session.read(input);
    // A search still running (`go infinite`, `go ponder`) ends with the session, answered.
    session.finish_search(true);
    read
}

impl Session {
    /// Handles the commands of `input` until `quit`, its end or a read error. A line that
    /// is not UTF-8 is read with replacement characters (and answered as unknown).
    fn read(&mut self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 || !self.command(String::from_utf8_lossy(&line).trim()) {
                return Ok(());
            }
        }
    }

    /// Handles one command; false for `quit`.
    fn command(&mut self, line: &str) -> bool {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "" => {}
            "uci" => {
                self.out.line(concat!("id name deepchess ", env!("CARGO_PKG_VERSION")));
                self.out.line("id author the deepchess authors");
                for option in OPTIONS {
                    self.out.line(&option.uci_line());
                }
                self.out.line("uciok");
            }
            "isready" => self.out.line("readyok"),
            "ucinewgame" => {
                self.finish_search(true);
                self.engine().new_game();
                self.game = Game::default();
                self.rejected = None;
            }
            "setoption" => self.set_option(rest),
            "position" => self.position(rest),
            "go" => self.go(rest),
            "stop" => self.finish_search(true),
            "ponderhit" => self.ponderhit(),
            "quit" => return false,
            "debug" | "register" => {}
            "d" => self.out.line(&format!(
                "info string fen {}",
                shakmaty::fen::Fen::from_position(self.game.position(), shakmaty::EnPassantMode::Legal)
            )),
            _ => self.out.error(&format!("unknown command `{}`", echo(line))),
        }
        true
    }

    /// The engine, after any running search has finished.
    fn engine(&mut self) -> &mut Engine {
        self.finish_search(true);
        self.engine.as_mut().expect("the engine is back after the search")
    }

    /// Waits for the running search (stopping it first when `stop`); it prints its
    /// `bestmove` itself.
    fn finish_search(&mut self, stop: bool) {
        if let Some(running) = self.running.take() {
            if stop {
                running.stop.store(true, Ordering::Relaxed);
            }
            match running.handle.join() {
                Ok(engine) => self.engine = Some(engine),
                Err(_) => {
                    self.out.error("the search thread panicked; restarting with the embedded networks");
                    self.engine = Some(Engine::load(None).expect("embedded networks load"));
                }
            }
        }
    }

    fn set_option(&mut self, rest: &str) {
        let Some(spec) = rest.strip_prefix("name") else {
            return self.out.error(&format!("setoption needs `name`: `setoption {rest}`"));
        };
        let (name, value) = match spec.split_once(" value") {
            Some((name, value)) => (name.trim(), value.trim()),
            None => (spec.trim(), ""),
        };
        if let Err(e) = self.engine().set_option(name, value) {
            self.out.error(&e);
        }
        for note in self.engine().take_notes() {
            self.out.line(&format!("info string {note}"));
        }
        self.mode = self.engine().castling_mode();
    }

    /// The opponent played the move pondered on: the running `go ponder` search now
    /// counts its time.
    fn ponderhit(&mut self) {
        match self.running.as_ref().and_then(|running| running.ponder.as_ref()) {
            Some(ponder) => ponder.hit(),
            None => self.out.line("info string ponderhit ignored: no `go ponder` search is running"),
        }
    }

    fn position(&mut self, rest: &str) {
        let (setup, moves) = match rest.split_once(" moves") {
            Some((setup, moves)) => (setup.trim(), moves.split_whitespace().collect::<Vec<_>>()),
            None => (rest.trim(), Vec::new()),
        };
        let fen = if setup == "startpos" {
            None
        } else if let Some(fen) = setup.strip_prefix("fen") {
            Some(fen.trim())
        } else {
            return self.reject(format!("position needs `startpos` or `fen`: `position {rest}`"));
        };
        match Game::from_uci_in(fen, &moves, self.mode) {
            Ok(game) => {
                self.finish_search(true);
                self.game = game;
                self.rejected = None;
            }
            Err(e) => self.reject(e.to_string()),
        }
    }

    /// Reports a refused `position`; no search runs until one is accepted.
    fn reject(&mut self, why: String) {
        self.out.error(&format!("{why}; `go` answers bestmove 0000 until a position is accepted"));
        self.rejected = Some(why);
    }

    fn go(&mut self, rest: &str) {
        self.finish_search(true);
        if let Some(why) = &self.rejected {
            self.out.error(&format!("no search: the last position was refused ({why})"));
            return self.out.line("bestmove 0000");
        }
        let limits = parse_go(rest, self.game.position(), &self.out);
        let mut engine = self.engine.take().expect("no search is running");
        let game = self.game.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let out = self.out.clone();
        let flag = stop.clone();
        let mode = self.mode;
        let ponder = limits.ponder.clone();
        let handle = std::thread::spawn(move || {
            let searched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                engine.go(&game, &limits, flag.clone(), &mut |report| out.line(&report.to_uci(mode)))
            }));
            // A search that panics still answers (a GUI waits for the best move): the first
            // legal move, and the engine, settings kept, starts a new game.
            let result = searched.unwrap_or_else(|_| {
                out.error("the search panicked; playing the first legal move, the engine's tables cleared");
                engine.new_game();
                let best = game.position().legal_moves().first().copied()?;
                Some(SearchResult { best, score: Score::Cp(0), depth: 0, pv: vec![best], nodes: 0 })
            });
            // UCI: after `go infinite` the best move waits for `stop`, after `go ponder` for
            // `ponderhit` or `stop`.
            let pondering = || limits.ponder.as_ref().is_some_and(|p| p.hit_at().is_none());
            while (limits.infinite || pondering()) && !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            match result {
                Some(result) => {
                    let ponder =
                        result.pv.get(1).map(|m| format!(" ponder {}", uci_move_in(m, mode))).unwrap_or_default();
                    out.line(&format!("bestmove {}{ponder}", uci_move_in(&result.best, mode)));
                }
                None => {
                    out.line("info string no legal moves: the game is over");
                    out.line("bestmove 0000");
                }
            }
            engine
        });
        self.running = Some(Running { handle, stop, ponder });
    }
}

/// The keywords of `go`.
const GO_KEYWORDS: [&str; 12] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
    "infinite",
    "ponder",
    "searchmoves",
];

/// Parses the arguments of `go`; a bad value is reported and ignored.
fn parse_go(rest: &str, position: &shakmaty::Chess, out: &Output) -> Limits {
    let mut limits = Limits::default();
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let mut i = 0;
    while i < tokens.len() {
        let word = tokens[i];
        i += 1;
        let mut number = || -> Option<i64> {
            let value = tokens.get(i).and_then(|t| t.parse::<i64>().ok());
            match value {
                Some(v) => {
                    i += 1;
                    Some(v)
                }
                None => {
                    out.error(&format!("go {word}: expected a number, got `{}`", tokens.get(i).unwrap_or(&"")));
                    if tokens.get(i).is_some_and(|t| !GO_KEYWORDS.contains(t)) {
                        i += 1;
                    }
                    None
                }
            }
        };
        let millis = |v: i64| Duration::from_millis(v.max(0) as u64);
        match word {
            "wtime" => limits.time[0] = number().map(millis),
            "btime" => limits.time[1] = number().map(millis),
            "winc" => limits.increment[0] = number().map_or(Duration::ZERO, millis),
            "binc" => limits.increment[1] = number().map_or(Duration::ZERO, millis),
            "movestogo" => limits.moves_to_go = number().map(|v| v.clamp(1, 1000) as u32),
            "movetime" => limits.move_time = number().map(millis),
            "depth" => limits.depth = number().map(|v| v.clamp(1, 100) as u32),
            "nodes" => limits.nodes = number().map(|v| v.max(1) as u64),
            "mate" => limits.depth = number().map(|v| (2 * v - 1).clamp(1, 100) as u32),
            "infinite" => limits.infinite = true,
            "ponder" => limits.ponder = Some(Ponder::default()),
            "searchmoves" => {
                while let Some(text) = tokens.get(i).filter(|t| !GO_KEYWORDS.contains(t)) {
                    i += 1;
                    match text.parse::<UciMove>().ok().and_then(|m| m.to_move(position).ok()) {
                        Some(m) => limits.search_moves.push(m),
                        None => out.error(&format!("go searchmoves: `{text}` is not a legal move here; ignored")),
                    }
                }
            }
            _ => out.error(&format!("go: unknown parameter `{}` ignored", echo(word))),
        }
    }
    dedup(&mut limits.search_moves);
    let turn = shakmaty::Position::turn(position);
    let side = usize::from(turn == shakmaty::Color::Black);
    let bounded = limits.infinite
        || limits.depth.is_some()
        || limits.nodes.is_some()
        || limits.move_time.is_some()
        || limits.time[side].is_some();
    // A bare `go` (or `go ponder`) searches until `stop`, as in Stockfish; `go` with
    // arguments of which none bounds this side's search (a bad number, only the
    // opponent's clock) gets a default.
    if !bounded && tokens.iter().any(|t| *t != "ponder") {
        out.error(&format!(
            "go {rest}: no limit for {} to move; searching {} ms",
            turn.fold_wb("white", "black"),
            DEFAULT_MOVE_TIME.as_millis()
        ));
        limits.move_time = Some(DEFAULT_MOVE_TIME);
    }
    limits
}

/// Characters of an unknown command echoed back before it is cut short.
const ECHO_CHARS: usize = 80;

/// `text` as it is echoed in an error: whole when short, else its first [`ECHO_CHARS`]
/// characters, `…` and its length, so that a huge line does not come back whole.
fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHO_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
    }
}

/// The search time of a `go` whose arguments give no usable limit for the side to move.
const DEFAULT_MOVE_TIME: Duration = Duration::from_millis(1000);

fn dedup(moves: &mut Vec<Move>) {
    let mut seen = Vec::with_capacity(moves.len());
    moves.retain(|m| {
        let new = !seen.contains(m);
        seen.push(*m);
        new
    });
}
