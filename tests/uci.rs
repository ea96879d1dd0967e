//! UCI sessions driven through a spawned `deepchess uci` process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use deepchess_engine::engine::options::OPTIONS;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

mod common;

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

    /// The lines that arrive within `time`.
    fn lines_for(&mut self, time: Duration) -> Vec<String> {
        let deadline = Instant::now() + time;
        let mut seen = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            seen.push(line);
        }
        seen
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
fn spsa_inputs_name_the_spin_options_that_set_them() {
    // OpenBench's SPSA sets each number of its input by a UCI option of that name.
    for (search, least, prefix) in [("eval", 20, ""), ("mcts", 12, "mcts_")] {
        let (inputs, _) = common::texts(&common::deepchess(&["spsa-inputs", "--search", search]));
        assert!(inputs.lines().count() >= least, "{inputs}");
        for line in inputs.lines() {
            let fields: Vec<&str> = line.split(", ").collect();
            let [name, "int", value, min, max, step, "0.002"] = fields[..] else { panic!("malformed line `{line}`") };
            assert!(name.starts_with(prefix) && step.parse::<u32>().is_ok_and(|s| s > 0), "{line}");
            let expected = format!("option name {name} type spin default {value} min {min} max {max}");
            assert!(OPTIONS.iter().any(|o| o.uci_line() == expected), "`{expected}` not announced");
        }
    }
    let (_, error) = common::texts(&common::deepchess(&["spsa-inputs", "--search", "compare"]));
    assert!(error.contains("--search"), "{error}");
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
fn a_huge_unknown_command_is_echoed_cut_short() {
    let mut engine = Engine::start();
    let huge = "x".repeat(1 << 20);
    engine.send(&huge);
    let lines = engine.until("info string error", Duration::from_secs(10));
    let error = lines.last().unwrap();
    assert_eq!(error, &format!("info string error: unknown command `{}… (1048576 bytes)`", "x".repeat(80)));
    engine.send("isready");
    engine.until("readyok", Duration::from_secs(10));
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

/// The value of `key` in an `info` line (`multipv 2`, `hashfull 17`): the next word.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == key)?;
    words.next()
}

#[test]
fn multipv_wdl_hashfull_and_clear_hash() {
    let mut engine = Engine::start();
    engine.send("setoption name MultiPV value 3");
    engine.send("setoption name UCI_ShowWDL value true");
    engine.send("setoption name Hash value 1");
    engine.send("position startpos moves e2e4");
    let (best, lines) = engine.go("depth 5", Duration::from_secs(60));
    let last: Vec<&String> = lines.iter().filter(|l| l.starts_with("info depth 5 ")).collect();
    assert_eq!(last.len(), 3, "{lines:#?}");
    let mut firsts = Vec::new();
    for (i, line) in last.iter().enumerate() {
        assert_eq!(field(line, "multipv"), Some((i + 1).to_string().as_str()), "{line}");
        assert!(field(line, "seldepth").unwrap().parse::<u32>().unwrap() >= 5, "{line}");
        let wdl: Vec<u32> =
            line.split(" wdl ").nth(1).unwrap().split(' ').take(3).map(|w| w.parse().unwrap()).collect();
        assert_eq!(wdl.iter().sum::<u32>(), 1000, "{line}");
        firsts.push(field(line, "pv").unwrap());
    }
    assert_eq!(best, firsts[0]);
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{last:#?}");
    let hashfull = |lines: &[String]| -> u32 {
        let line = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
        field(line, "hashfull").unwrap().parse().unwrap()
    };
    let full = hashfull(&lines);
    assert!(full > 0, "the search stored entries: {full}");
    // The table keeps what it learnt, until `Clear Hash`: the same search again takes
    // fewer nodes, and as many as a fresh engine's after it. `hashfull` counts the entries
    // of the current search only.
    engine.send("setoption name MultiPV value 1");
    engine.send("setoption name UCI_ShowWDL value false");
    let nodes = |lines: &[String]| -> u64 {
        let line = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
        field(line, "nodes").unwrap().parse().unwrap()
    };
    let (_, warm) = engine.go("depth 5", Duration::from_secs(60));
    assert!(!warm.iter().any(|l| l.contains(" wdl ")), "{warm:#?}");
    assert_eq!(warm.iter().filter(|l| l.starts_with("info depth 5 ")).count(), 1);
    assert!(hashfull(&warm) <= full, "{warm:#?}");
    engine.send("setoption name Clear Hash");
    let (_, cleared) = engine.go("depth 5", Duration::from_secs(60));
    assert!(nodes(&warm) < nodes(&cleared), "{warm:#?} {cleared:#?}");
    let mut fresh = Engine::start();
    fresh.send("setoption name Hash value 1");
    fresh.send("position startpos moves e2e4");
    let (_, first) = fresh.go("depth 5", Duration::from_secs(60));
    assert_eq!(nodes(&cleared), nodes(&first), "Clear Hash leaves nothing behind");
    fresh.quit();
    engine.quit();
}

#[test]
fn chess960_castling_rights_and_king_takes_rook_notation() {
    let mut engine = Engine::start();
    // King f1, rook h1 with the right to castle: `f1h1` castles (the king to g1, the rook
    // to f1); `f1g1` is a king move.
    let fen = "4k3/8/8/8/8/8/8/5K1R w H - 0 1";
    let shredder = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    for refused in [fen, shredder] {
        engine.send(&format!("position fen {refused}"));
        let lines = engine.until("info string error", Duration::from_secs(10));
        assert!(lines.last().unwrap().contains("bad FEN"), "{lines:#?}");
    }
    engine.send("setoption name UCI_Chess960 value true");
    engine.send(&format!("position fen {fen}"));
    let (best, _) = engine.go("depth 2 searchmoves f1h1", Duration::from_secs(30));
    assert_eq!(best, "f1h1");
    engine.send(&format!("position fen {fen} moves f1h1 e8d8"));
    engine.send("d");
    let lines = engine.until("info string fen", Duration::from_secs(10));
    assert_eq!(lines.last().unwrap(), "info string fen 3k4/8/8/8/8/8/8/5RK1 w - - 2 2");
    // The standard start position: castling is the king taking its rook too.
    engine.send("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    let (best, _) = engine.go("depth 1 searchmoves e1h1", Duration::from_secs(30));
    assert_eq!(best, "e1h1");
    engine.send(&format!("position fen {shredder} moves a2a3"));
    engine.until("info string error", Duration::from_secs(10));
    engine.send(&format!("position fen {shredder} moves f4f5"));
    let (best, lines) = engine.go("depth 3", Duration::from_secs(30));
    assert!(!lines.iter().any(|l| l.contains("error")), "{lines:#?}");
    let mut position: Chess = shredder.parse::<Fen>().unwrap().into_position(CastlingMode::Chess960).unwrap();
    position.play_unchecked("f4f5".parse::<UciMove>().unwrap().to_move(&position).unwrap());
    assert!(best.parse::<UciMove>().unwrap().to_move(&position).is_ok(), "{best}");
    // Off again: standard notation, and Chess960 rights are refused.
    engine.send("setoption name UCI_Chess960 value false");
    engine.send("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    let (best, _) = engine.go("depth 1 searchmoves e1h1", Duration::from_secs(30));
    assert_eq!(best, "e1g1");
    engine.send(&format!("position fen {fen}"));
    engine.until("info string error", Duration::from_secs(10));
    engine.quit();
}

#[test]
fn ponder_waits_for_ponderhit_then_keeps_the_clock() {
    let mut engine = Engine::start();
    engine.send("setoption name Ponder value true");
    engine.send("position startpos moves e2e4 e7e5");
    engine.ready();
    // 100 ms on the clock would answer within 25 ms; pondering waits for the opponent.
    engine.send("go ponder wtime 100 btime 100");
    let early = engine.lines_for(Duration::from_millis(400));
    assert!(!early.iter().any(|l| l.starts_with("bestmove")), "{early:#?}");
    let hit = Instant::now();
    engine.send("ponderhit");
    let lines = engine.until("bestmove", Duration::from_secs(5));
    let waited = hit.elapsed();
    assert!(waited < Duration::from_millis(200), "bestmove {waited:?} after ponderhit");
    assert_legal(&position(START, &["e2e4", "e7e5"]), lines.last().unwrap().split_whitespace().nth(1).unwrap());
    // A pondering search that finishes early still waits; `stop` answers it.
    engine.send("go ponder depth 3");
    let mut early = engine.until("info depth 3", Duration::from_secs(30));
    early.extend(engine.lines_for(Duration::from_millis(300)));
    assert!(!early.iter().any(|l| l.starts_with("bestmove")), "{early:#?}");
    engine.send("stop");
    let line = engine.until("bestmove", Duration::from_secs(5)).pop().unwrap();
    // The reply to ponder on is legal after the best move.
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((words.len(), words[2]), (4, "ponder"), "{line}");
    assert_legal(&position(START, &["e2e4", "e7e5", words[1]]), words[3]);
    engine.send("ponderhit");
    let line = engine.until("info string", Duration::from_secs(5)).pop().unwrap();
    assert!(line.contains("ponderhit ignored"), "{line}");
    engine.quit();
}

#[test]
fn syzygy_path_reports_its_tables_and_tbhits_and_survives_a_bad_path() {
    let mut engine = Engine::start();
    engine.send("setoption name SyzygyPath value /nonexistent/syzygy");
    let lines = engine.until("info string", Duration::from_secs(10));
    let error = lines.last().unwrap();
    assert!(
        error.starts_with("info string error: option SyzygyPath: cannot read the directory `/nonexistent/syzygy`"),
        "{error}"
    );
    engine.ready();
    let Some(tables) = deepchess_engine::tablebase::test_path() else { return engine.quit() };
    engine.send(&format!("setoption name SyzygyPath value {tables}"));
    let lines = engine.until("info string", Duration::from_secs(10));
    let found = lines.last().unwrap();
    assert!(found.starts_with("info string Syzygy: 35 WDL and 35 DTZ tables (up to 4 pieces) from "), "{found}");
    // KQvRK after Qxg1 is won: the tables rank the root, and the capture wins at once.
    let fen = "8/8/8/8/8/2k5/8/KQ4r1 w - - 0 1";
    engine.send(&format!("position fen {fen}"));
    let (best, lines) = engine.go("depth 3", Duration::from_secs(30));
    assert_legal(&position(fen, &[]), &best);
    assert_eq!(best, "b1g1", "the only move that keeps the win in one ply to zeroing");
    let info = lines.iter().rev().find(|l| l.contains(" score ")).unwrap();
    assert!(field(info, "tbhits").and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n > 0), "{info}");
    engine.quit();
}

#[test]
fn a_first_search_with_many_threads_answers_a_short_movetime_at_once() {
    // Helpers that were set up inside the first `go` took 9 s at 64 threads, over 60 s at 256.
    for threads in [64, 256] {
        let mut engine = Engine::start();
        engine.send(&format!("setoption name Threads value {threads}"));
        engine.ready();
        engine.send("position startpos");
        let started = Instant::now();
        let (best, _) = engine.go("movetime 100", Duration::from_secs(60));
        let elapsed = started.elapsed();
        assert_legal(&position(START, &[]), &best);
        assert!(elapsed < Duration::from_secs(5), "Threads {threads}: the first `go movetime 100` took {elapsed:?}");
        engine.quit();
    }
}
