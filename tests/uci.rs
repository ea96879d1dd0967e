//! UCI sessions driven through a spawned `deepchess uci` process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use deepchess_engine::engine::options::OPTIONS;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

/// A running engine with its output lines arriving on a channel.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_deepchess"))
            .arg("uci")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("deepchess starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no `{prefix}` within {timeout:?}; got {seen:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("engine exited before `{prefix}`; got {seen:#?}"),
            }
        }
    }

    /// Sends `go …` and returns the best move's text and all lines.
    fn go(&mut self, args: &str, timeout: Duration) -> (String, Vec<String>) {
        self.send(&format!("go {args}"));
        let lines = self.until("bestmove", timeout);
        let best = lines.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
        (best, lines)
    }

    fn ready(&mut self) {
        self.send("isready");
        self.until("readyok", Duration::from_secs(10));
    }

    fn quit(mut self) {
        self.send("quit");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.child.kill().unwrap();
        panic!("engine did not quit");
    }
}

fn position(fen: &str, moves: &[&str]) -> Chess {
    let mut pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    for m in moves {
        let m = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    pos
}

fn assert_legal(pos: &Chess, best: &str) {
    let m = best.parse::<UciMove>().unwrap_or_else(|_| panic!("`{best}` is not UCI"));
    assert!(
        m.to_move(pos).is_ok(),
        "`{best}` is illegal in {}",
        Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
    );
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn handshake_options_and_a_search() {
    let mut engine = Engine::start();
    engine.send("uci");
    let lines = engine.until("uciok", Duration::from_secs(10));
    assert!(lines.iter().any(|l| l.starts_with("id name deepchess")));
    // The options are announced as the engine's one table describes them, in its order.
    let announced: Vec<&String> = lines.iter().filter(|l| l.starts_with("option ")).collect();
    let table: Vec<String> = OPTIONS.iter().map(|o| o.uci_line()).collect();
    assert_eq!(announced, table.iter().collect::<Vec<_>>());
    for option in ["Search", "TT", "MctsLeaf", "Hash", "Threads", "Models", "Move Overhead", "LMR", "OrderingDepth"] {
        assert!(lines.iter().any(|l| l.starts_with(&format!("option name {option} type"))), "option {option} missing");
    }
    engine.ready();
    engine.send("ucinewgame");
    engine.send("position startpos moves e2e4 e7e5");
    let (best, lines) = engine.go("depth 4", Duration::from_secs(60));
    assert_legal(&position(START, &["e2e4", "e7e5"]), &best);
    let info = lines.iter().find(|l| l.starts_with("info depth 4")).expect("an info line at depth 4");
    for field in [" score cp ", " nodes ", " nps ", " time ", " pv "] {
        assert!(info.contains(field) || info.contains(" score mate "), "{field} missing in {info}");
    }
    engine.quit();
}

#[test]
fn every_search_answers_with_a_legal_move() {
    let mut engine = Engine::start();
    let fen = "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7";
    engine.send(&format!("position fen {fen}"));
    for (search, go) in [("eval", "depth 3"), ("compare", "depth 2"), ("mcts", "nodes 200"), ("policy", "depth 1")] {
        engine.send(&format!("setoption name Search value {search}"));
        let (best, _) = engine.go(go, Duration::from_secs(60));
        assert_legal(&position(fen, &[]), &best);
    }
    engine.quit();
}

#[test]
fn stop_answers_at_once_and_infinite_waits_for_it() {
    let mut engine = Engine::start();
    engine.send("position startpos");
    for search in ["eval", "compare", "mcts"] {
        engine.send(&format!("setoption name Search value {search}"));
        engine.ready();
        engine.send("go infinite");
        // The best move must not come before `stop`.
        assert!(engine.lines.recv_timeout(Duration::from_millis(300)).map_or(true, |l| !l.starts_with("bestmove")));
        let sent = Instant::now();
        engine.send("stop");
        engine.until("bestmove", Duration::from_secs(5));
        let waited = sent.elapsed();
        assert!(waited < Duration::from_millis(200), "{search}: bestmove {waited:?} after stop");
    }
    engine.quit();
}

#[test]
fn clock_moves_stay_within_the_time() {
    let mut engine = Engine::start();
    let moves = ["d2d4", "d7d5", "c2c4"];
    engine.send(&format!("position startpos moves {}", moves.join(" ")));
    for search in ["eval", "compare", "mcts", "policy"] {
        engine.send(&format!("setoption name Search value {search}"));
        engine.ready();
        for (wtime, btime) in [(10_000, 10_000), (300, 250)] {
            let started = Instant::now();
            let (best, _) =
                engine.go(&format!("wtime {wtime} btime {btime} winc 100 binc 100"), Duration::from_secs(20));
            let used = started.elapsed();
            assert_legal(&position(START, &moves), &best);
            assert!(used < Duration::from_millis(btime), "{search}: {used:?} with {btime} ms left");
        }
    }
    engine.quit();
}

#[test]
fn every_option_takes_its_default_and_the_old_move_overhead_name_still_works() {
    let mut engine = Engine::start();
    let mut commands: Vec<String> = OPTIONS
        .iter()
        .filter_map(|o| o.default_value().map(|d| format!("setoption name {} value {d}", o.name)))
        .collect();
    commands
        .extend(["setoption name MoveOverhead value 20", "setoption name move overhead value 30"].map(String::from));
    for command in &commands {
        engine.send(command);
    }
    engine.send("isready");
    let lines = engine.until("readyok", Duration::from_secs(30));
    assert_eq!(lines, ["readyok"], "after {commands:#?}");
    engine.send("setoption name Move Overhead value 10001");
    let error = engine.until("info string error", Duration::from_secs(10)).pop().unwrap();
    assert_eq!(error, "info string error: option Move Overhead: expected an integer in 0..=10000, got `10001`");
    engine.quit();
}

#[test]
fn malformed_input_keeps_the_engine_alive_and_correct() {
    let mut engine = Engine::start();
    let bad = [
        "position fen this is not a fen",
        "position startpos moves e2e5",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position",
        "setoption name Search value quantum",
        "setoption name Hash value -3",
        "setoption name NoSuchOption value 1",
        "setoption name Models value /nonexistent/models",
        "flibbertigibbet",
    ];
    engine.send("position startpos moves e2e4");
    for command in bad {
        engine.send(command);
        let lines = engine.until("info string error", Duration::from_secs(10));
        assert!(lines.last().unwrap().len() > "info string error: ".len(), "{command}");
    }
    // A refused position is never searched: the GUI's position is unknown.
    let (best, _) = engine.go("depth 2", Duration::from_secs(10));
    assert_eq!(best, "0000");
    engine.send("position startpos moves e2e4");
    for command in ["setoption name Hash value -3", "flibbertigibbet"] {
        engine.send(command);
        engine.until("info string error", Duration::from_secs(10));
    }
    // Other errors leave the position in force: Black to move after 1. e4.
    let (best, _) = engine.go("depth 2 nodes abc searchmoves e7e5 e2e4", Duration::from_secs(30));
    assert_eq!(best, "e7e5");
    engine.ready();
    // No usable limit for the side to move: a default time and a message, not a search until `stop`.
    for go in ["go depth abc", "go wtime 100"] {
        engine.send(go);
        let lines = engine.until("bestmove", Duration::from_secs(10));
        assert!(lines.iter().any(|l| l.contains("no limit for black to move; searching 1000 ms")), "{go}: {lines:#?}");
    }
    // A finished game: no legal move.
    engine.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let (best, _) = engine.go("depth 3", Duration::from_secs(10));
    assert_eq!(best, "0000");
    engine.quit();
}

#[test]
fn models_option_loads_a_directory_and_names_bad_tensors() {
    let dir = tempfile::tempdir().unwrap();
    for kind in deepchess_engine::nn::ENGINE_MODELS {
        deepchess_engine::nn::random_model(kind, 99).save(dir.path()).unwrap();
    }
    let mut engine = Engine::start();
    engine.send(&format!("setoption name Models value {}", dir.path().display()));
    engine.send("position startpos");
    let (best, lines) = engine.go("depth 2", Duration::from_secs(30));
    assert!(!lines.iter().any(|l| l.starts_with("info string error")), "{lines:#?}");
    assert_legal(&position(START, &[]), &best);
    // A comparator whose head weights have the wrong shape.
    let card = dir.path().join("comparator.json");
    let text = std::fs::read_to_string(&card).unwrap().replacen("400", "300", 1);
    std::fs::write(&card, text).unwrap();
    engine.send(&format!("setoption name Models value {}", dir.path().display()));
    let lines = engine.until("info string error", Duration::from_secs(10));
    let error = lines.last().unwrap();
    assert!(error.contains("comparator") && error.contains("weight") && error.contains("expected"), "{error}");
    // Still playing with the previous networks.
    let (best, _) = engine.go("depth 2", Duration::from_secs(30));
    assert_legal(&position(START, &[]), &best);
    engine.quit();
}
