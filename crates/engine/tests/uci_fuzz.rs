//! Random and mutated UCI command streams fed to the UCI server in-process: every session
//! ends, nothing panics, and every `go` is answered by exactly one `bestmove`, legal in the
//! position the server holds (which is the one the harness expects after a well-formed
//! `position`), or `0000` when that position was refused or has no legal move.
//!
//! The streams are seeded and bounded (40 sessions of 8 sequences, each session starting
//! with one of the four searches in turn, then 1,000 sessions of 2 sequences starting with
//! MCTS); searches get tiny limits or are stopped by the next command.

use std::io::{Cursor, Write};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deepchess_engine::engine::Engine;
use deepchess_engine::nn::Networks;
use deepchess_engine::uci_server;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

const SESSIONS: u64 = 40;
/// The four searches: session `seed` starts with `SEARCHES[seed % 4]`.
const SEARCHES: [&str; 4] = ["eval", "compare", "mcts", "policy"];
const SEQUENCES: usize = 8;
/// Sessions of the MCTS run, and random sequences in each.
const MCTS_SESSIONS: u64 = 1000;
const MCTS_SEQUENCES: usize = 2;

/// Standard positions: the start, castling both ways, en passant, promotions, a check
/// with two legal moves.
const FENS: [&str; 5] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/1P4k1/8/8/8/8/5p2/K7 w - - 0 1",
    "k7/8/2Q5/8/8/8/8/6K1 b - - 0 1",
];

/// Finished games: checkmate, stalemate.
const FINISHED: [&str; 2] = ["7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"];

/// Chess960 positions (refused unless `UCI_Chess960` is on).
const FENS_960: [&str; 2] = [
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "1r3kr1/pp4pp/8/8/8/8/PP4PP/1R3KR1 w GBgb - 0 1",
];

/// Tokens that mutations put into commands.
const TOKENS: [&str; 40] = [
    "0",
    "-1",
    "1",
    "7",
    "99999999999999999999",
    "-99999999999999999999",
    "1e9",
    "3.5",
    "abc",
    "e2e4",
    "e7e8q",
    "a1a1",
    "0000",
    "e1h1",
    "e1g1",
    "moves",
    "fen",
    "startpos",
    "go",
    "infinite",
    "ponder",
    "searchmoves",
    "depth",
    "nodes",
    "wtime",
    "btime",
    "movetime",
    "mate",
    "value",
    "name",
    "position",
    "setoption",
    "Hash",
    "MultiPV",
    "UCI_Chess960",
    "stop",
    "ponderhit",
    "\u{e9}\u{301}",
    "KQkq",
    "-",
];

/// What the harness knows about the position the server holds.
#[derive(Clone, Debug)]
enum Expected {
    /// Accepted: this position.
    Known(Chess),
    /// Refused: `go` answers `0000`.
    Refused,
    /// A mutated command may or may not have changed it.
    Unknown,
}

/// One `go` of the stream: what the harness expects and, for a well-formed one, its
/// `searchmoves`.
struct Go {
    expected: Expected,
    search_moves: Vec<Move>,
    /// Index of the `d` sent just before it, whose FEN is the server's position.
    d_index: usize,
    /// The search in effect (index into [`SEARCHES`]), if known.
    search: Option<usize>,
}

struct Stream {
    rng: Xoshiro256PlusPlus,
    lines: Vec<Vec<u8>>,
    expected: Expected,
    /// `UCI_Chess960` as far as known.
    chess960: Option<bool>,
    gos: Vec<Go>,
    ds: usize,
    quit: bool,
    /// The search in effect (index into [`SEARCHES`]), if known.
    search: Option<usize>,
}

impl Stream {
    fn new(seed: u64) -> Stream {
        Stream {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            lines: Vec::new(),
            expected: Expected::Known(Chess::default()),
            chess960: Some(false),
            gos: Vec::new(),
            ds: 0,
            quit: false,
            search: Some(0),
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.rng.random_range(0..100) < percent
    }

    /// Adds a line as the server will read it, keeping count of `d` and `go` and
    /// forgetting what a `position` or a `setoption` of `UCI_Chess960` may have changed (the
    /// caller of a well-formed one says what it changed). A `go` gets a `d` before it, so
    /// that its position can be checked.
    fn push(&mut self, line: Vec<u8>, well_formed_go: Option<Vec<Move>>) {
        if self.quit {
            return;
        }
        let text = String::from_utf8_lossy(&line).into_owned();
        match text.split_whitespace().next().unwrap_or("") {
            "position" => self.expected = Expected::Unknown,
            "setoption" if text.to_ascii_lowercase().contains("chess960") => self.chess960 = None,
            "setoption" if text.to_ascii_lowercase().contains("search") => {
                let tokens: Vec<&str> = text.split(' ').collect();
                match tokens[..] {
                    ["setoption", "name", "Search", "value", value] => {
                        if let Some(i) = SEARCHES.iter().position(|s| *s == value) {
                            self.search = Some(i);
                        }
                    }
                    _ => self.search = None,
                }
            }
            "go" => {
                self.lines.push(b"d".to_vec());
                self.ds += 1;
                let search_moves = well_formed_go.unwrap_or_default();
                let search = self.search;
                self.gos.push(Go { expected: self.expected.clone(), search_moves, d_index: self.ds - 1, search });
            }
            "d" => self.ds += 1,
            "quit" => self.quit = true,
            "ucinewgame" => self.expected = Expected::Known(Chess::default()),
            _ => {}
        }
        self.lines.push(line);
    }

    /// A well-formed `position` command, and what the server should make of it.
    fn position(&mut self) -> (String, Expected) {
        let use_960 = self.chess960 != Some(false) && self.chance(40);
        let (setup, mut position, expected_ok) = if use_960 {
            let fen = *self.pick(&FENS_960);
            let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Chess960).unwrap();
            (format!("fen {fen}"), position, self.chess960)
        } else if self.chance(30) {
            ("startpos".to_string(), Chess::default(), Some(true))
        } else {
            let fen = if self.chance(10) { *self.pick(&FINISHED) } else { *self.pick(&FENS) };
            let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            (format!("fen {fen}"), position, Some(true))
        };
        let mut moves = Vec::new();
        for _ in 0..self.rng.random_range(0..7) {
            let legal = position.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[self.rng.random_range(0..legal.len())];
            // Castling as the king taking its rook is read in both modes; standard
            // positions also get the king's two-square move.
            let text = if use_960 || self.chance(50) {
                UciMove::from_chess960(m).to_string()
            } else {
                UciMove::from_standard(m).to_string()
            };
            moves.push(text);
            position.play_unchecked(m);
        }
        let mut expected = match expected_ok {
            Some(true) => Expected::Known(position),
            Some(false) => Expected::Refused,
            None => Expected::Unknown,
        };
        if self.chance(10) {
            // An illegal move: the whole command is refused.
            moves.push("e2e5".to_string());
            expected = if expected_ok.is_some() { Expected::Refused } else { Expected::Unknown };
        }
        let moves =
            if moves.is_empty() && self.chance(50) { String::new() } else { format!(" moves {}", moves.join(" ")) };
        (format!("position {setup}{moves}"), expected)
    }

    /// A well-formed `go` with a small limit (or none: stopped by the next command), and
    /// its `searchmoves`.
    fn go(&mut self) -> (String, Vec<Move>) {
        let mut search_moves = Vec::new();
        let limit = match self.rng.random_range(0..12) {
            0 => format!("nodes {}", self.rng.random_range(1..200)),
            1 => format!("depth {}", self.rng.random_range(1..4)),
            2 => format!("movetime {}", self.rng.random_range(1..20)),
            3 => {
                format!("wtime {} btime {} winc 5 binc 5", self.rng.random_range(1..300), self.rng.random_range(1..300))
            }
            4 => "movestogo 1 wtime 30 btime 30".to_string(),
            5 => "infinite".to_string(),
            6 => "ponder nodes 50".to_string(),
            7 => "ponder wtime 100 btime 100".to_string(),
            8 => String::new(),
            9 => "mate 1".to_string(),
            _ => {
                if let Expected::Known(position) = &self.expected {
                    let legal = position.legal_moves();
                    let count = self.rng.random_range(1..4).min(legal.len());
                    for _ in 0..count {
                        search_moves.push(legal[self.rng.random_range(0..legal.len())]);
                    }
                }
                let texts: Vec<String> = search_moves.iter().map(|m| UciMove::from_chess960(*m).to_string()).collect();
                format!("nodes 60 searchmoves {}", texts.join(" "))
            }
        };
        (format!("go {limit}").trim_end().to_string(), search_moves)
    }

    /// A well-formed `setoption`, and the `UCI_Chess960` it sets, if it does.
    fn setoption(&mut self) -> (String, Option<bool>) {
        let (name, values): (&str, &[&str]) = *self.pick(&[
            ("Search", &["eval", "compare", "mcts", "policy", "quantum"][..]),
            ("Comparator", &["student", "thesis", "oracle"]),
            ("CompareSelective", &["true", "false"]),
            ("MultiPV", &["1", "2", "3", "256", "0", "257", "x"]),
            ("Hash", &["1", "2", "0", "-5", "65537", "99999999999999999999"]),
            ("Threads", &["1", "2", "0", "257"]),
            ("UCI_ShowWDL", &["true", "false", "maybe"]),
            ("UCI_Chess960", &["true", "false", "TRUE", "on"]),
            ("Ponder", &["true", "false"]),
            ("Clear Hash", &[""]),
            ("Move Overhead", &["0", "30", "10001"]),
            ("MctsLeaf", &["value", "rollout", "random", "puct"]),
            ("MctsC", &["0", "2.5", "-1", "NaN"]),
            ("TT", &["true", "false"]),
            ("Aspiration", &["false", "true"]),
            ("NoSuchOption", &["1"]),
        ]);
        let value = *self.pick(values);
        let chess960 = match (name, value.to_ascii_lowercase().as_str()) {
            ("UCI_Chess960", "true") => Some(true),
            ("UCI_Chess960", "false") => Some(false),
            ("UCI_Chess960", _) => self.chess960,
            _ => None,
        };
        let line = if value.is_empty() {
            format!("setoption name {name}")
        } else {
            format!("setoption name {name} value {value}")
        };
        (line, chess960)
    }

    /// A copy of `line` with a random change: truncated, a token replaced, inserted or
    /// dropped, or a byte that is not UTF-8.
    fn mutate(&mut self, line: &str) -> Vec<u8> {
        let mut tokens: Vec<String> = line.split(' ').map(String::from).collect();
        match self.rng.random_range(0..5) {
            0 => {
                let cut = self.rng.random_range(0..=line.len());
                return line.as_bytes()[..cut].to_vec();
            }
            1 => {
                let i = self.rng.random_range(0..tokens.len());
                tokens[i] = self.pick(&TOKENS).to_string();
            }
            2 => {
                let i = self.rng.random_range(0..=tokens.len());
                let token = self.pick(&TOKENS).to_string();
                tokens.insert(i, token);
            }
            3 => {
                let i = self.rng.random_range(0..tokens.len());
                tokens.remove(i);
            }
            _ => {
                let mut bytes = line.as_bytes().to_vec();
                let i = self.rng.random_range(0..=bytes.len());
                bytes.insert(i, 0xff);
                return bytes;
            }
        }
        tokens.join(" ").into_bytes()
    }

    /// Pushes a mutated `line`.
    fn push_mutated(&mut self, line: &str) {
        let bytes = self.mutate(line);
        self.push(bytes, None);
    }

    fn random_line(&mut self) -> Vec<u8> {
        let count = self.rng.random_range(0..6);
        (0..count).map(|_| *self.pick(&TOKENS)).collect::<Vec<_>>().join(" ").into_bytes()
    }

    /// One sequence: a position, options and other commands, one or two searches, some
    /// of it mutated.
    fn sequence(&mut self) {
        for _ in 0..self.rng.random_range(0..3) {
            let (line, chess960) = match self.rng.random_range(0..10) {
                0..=4 => self.setoption(),
                5 => ("isready".to_string(), None),
                6 => ("ucinewgame".to_string(), None),
                7 => ("stop".to_string(), None),
                8 => ("ponderhit".to_string(), None),
                _ => ("debug on".to_string(), None),
            };
            if self.chance(15) {
                self.push_mutated(&line);
            } else {
                self.push(line.into_bytes(), None);
                if chess960.is_some() && !self.quit {
                    self.chess960 = chess960;
                }
            }
        }
        let (position, expected) = self.position();
        if self.chance(20) {
            self.push_mutated(&position);
        } else {
            self.push(position.into_bytes(), None);
            self.expected = expected;
        }
        for _ in 0..self.rng.random_range(1..3) {
            let (go, search_moves) = self.go();
            if self.chance(15) {
                self.push_mutated(&go);
            } else {
                self.push(go.into_bytes(), Some(search_moves));
            }
            if self.chance(30) {
                let line = *self.pick(&["stop", "ponderhit", "isready", "uci", "d", "", "flibbertigibbet"]);
                self.push(line.as_bytes().to_vec(), None);
            }
        }
        if self.chance(10) {
            let line = self.random_line();
            self.push(line, None);
        }
    }
}

/// Output shared with the server.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs a session on `input` and returns its output lines; fails if it does not end.
fn session(networks: &Networks, input: Vec<u8>) -> Vec<String> {
    let output = Shared::default();
    let (done, finished) = channel();
    let (engine, out) = (Engine::new(networks.clone()), output.clone());
    std::thread::spawn(move || {
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| uci_server::run(engine, Cursor::new(input), out)));
        let _ = done.send(result.map_err(|_| ()).and_then(|r| r.map_err(|_| ())));
    });
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => {}
        Ok(Err(())) => panic!("the session panicked or failed to read"),
        Err(_) => panic!("the session did not end within 60 s"),
    }
    let bytes = output.0.lock().unwrap().clone();
    String::from_utf8(bytes).expect("UTF-8 output").lines().map(String::from).collect()
}

fn legal(position: &Chess, text: &str) -> Option<Move> {
    text.parse::<UciMove>().ok()?.to_move(position).ok()
}

/// What a run of sessions exercised.
#[derive(Debug, Default)]
struct Counts {
    /// `go` commands sent.
    gos: usize,
    /// Those answered `0000`.
    zeros: usize,
    /// Those sent in a position the harness knows.
    known: usize,
    /// Those of `known` answered with a move.
    searched: usize,
    /// Legal moves answered, by the search set when the `go` was sent ([`SEARCHES`]).
    by_search: [usize; SEARCHES.len()],
}

/// Runs the sessions of `seeds`, each starting with the search `first(seed)` and then
/// `sequences` random sequences, and checks every answer (see the module's comment).
fn fuzz(seeds: std::ops::Range<u64>, sequences: usize, first: impl Fn(u64) -> &'static str) -> Counts {
    let networks = Networks::random(11);
    let mut counts = Counts::default();
    for seed in seeds {
        let mut stream = Stream::new(seed);
        stream.push(format!("setoption name Search value {}", first(seed)).into_bytes(), None);
        for _ in 0..sequences {
            stream.sequence();
        }
        if stream.chance(20) {
            stream.push(b"quit".to_vec(), None);
        }
        let script: Vec<u8> = stream.lines.join(&b'\n');
        let shown = String::from_utf8_lossy(&script).into_owned();
        let lines = session(&networks, script);
        let context = || format!("seed {seed}\n--- input\n{shown}\n--- output\n{}", lines.join("\n"));
        assert!(!lines.iter().any(|l| l.contains("panicked")), "{}", context());
        let fens: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("info string fen ")).collect();
        assert_eq!(fens.len(), stream.ds, "one FEN per `d`\n{}", context());
        // The output between one bestmove and the next, with the bestmove.
        let mut answers: Vec<(String, Vec<&String>)> = Vec::new();
        let mut since = Vec::new();
        for line in &lines {
            if let Some(rest) = line.strip_prefix("bestmove") {
                let best = rest.split_whitespace().next().unwrap_or("").to_string();
                answers.push((best, std::mem::take(&mut since)));
            } else {
                since.push(line);
            }
        }
        assert_eq!(answers.len(), stream.gos.len(), "one bestmove per go\n{}", context());
        for (i, (go, (best, before))) in stream.gos.iter().zip(&answers).enumerate() {
            let fen = fens[go.d_index];
            let held: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Chess960).unwrap();
            let at = || format!("go #{i} in {fen}, bestmove {best}, expected {:?}\n{}", go.expected, context());
            let refused = before.iter().any(|l| l.starts_with("info string error: no search: the last position"));
            counts.gos += 1;
            if best == "0000" {
                counts.zeros += 1;
                assert!(held.legal_moves().is_empty() || refused, "{}", at());
            } else {
                let m = legal(&held, best).unwrap_or_else(|| panic!("illegal: {}", at()));
                if let Some(search) = go.search {
                    counts.by_search[search] += 1;
                }
                assert!(!refused, "{}", at());
                if !go.search_moves.is_empty() {
                    assert!(go.search_moves.contains(&m), "not among searchmoves: {}", at());
                }
            }
            match &go.expected {
                Expected::Known(position) => {
                    counts.known += 1;
                    let expected_fen = Fen::from_position(position, EnPassantMode::Legal).to_string();
                    assert_eq!(fen, expected_fen, "{}", at());
                    assert_eq!(best == "0000", position.legal_moves().is_empty(), "{}", at());
                    counts.searched += usize::from(best != "0000");
                }
                Expected::Refused => assert_eq!(best, "0000", "{}", at()),
                Expected::Unknown => {}
            }
        }
    }
    counts
}

#[test]
fn random_and_mutated_command_streams_end_and_answer_every_go_once_legally() {
    let counts = fuzz(0..SESSIONS, SEQUENCES, |seed| SEARCHES[seed as usize % SEARCHES.len()]);
    println!("{counts:?}");
    // The streams exercise what they should, with each of the four searches.
    assert!(counts.gos > 300 && counts.searched > counts.gos / 2 && counts.zeros > 20, "{counts:?}");
    assert!(counts.by_search.iter().all(|&n| n >= 20), "{counts:?}");
}

#[test]
fn a_thousand_sessions_that_start_with_mcts_answer_every_go_once_legally() {
    let counts = fuzz(SESSIONS..SESSIONS + MCTS_SESSIONS, MCTS_SEQUENCES, |_| "mcts");
    println!("{counts:?}");
    let mcts = SEARCHES.iter().position(|&s| s == "mcts").expect("MCTS is one of the searches");
    assert!(counts.gos > MCTS_SESSIONS as usize && counts.by_search[mcts] > counts.gos / 2, "{counts:?}");
}
