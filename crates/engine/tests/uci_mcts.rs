//! `Search mcts` through the UCI server with a GUI that keeps the session open: every
//! `go` (depth, nodes, movetime, clock, infinite) is answered once, in time, with a legal
//! move of the position just set, also where the principal variation ends in a finished
//! game (bare kings, a forced capture into a draw, a mate in one) and where the root has
//! one legal move; no `bestmove` of an earlier search is left over for the next `go`.

use std::io::{BufReader, Read, Write};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use deepchess_engine::engine::Engine;
use deepchess_engine::nn::Networks;
use deepchess_engine::uci_server;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess};

/// Input fed line by line from the test; ends when the sender is dropped.
struct Input {
    lines: Receiver<Vec<u8>>,
    pending: Vec<u8>,
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            match self.lines.recv() {
                Ok(line) => self.pending = line,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

/// Output sent to the test as it is written.
struct Output(Sender<Vec<u8>>);

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.send(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A running session.
struct Session {
    input: Sender<Vec<u8>>,
    output: Receiver<Vec<u8>>,
    text: String,
}

impl Session {
    fn start() -> Session {
        let (input, lines) = channel();
        let (sink, output) = channel();
        let engine = Engine::new(Networks::random(3));
        std::thread::spawn(move || {
            let reader = BufReader::new(Input { lines, pending: Vec::new() });
            uci_server::run(engine, reader, Output(sink)).unwrap();
        });
        Session { input, output, text: String::new() }
    }

    fn send(&self, commands: &str) {
        self.input.send(format!("{commands}\n").into_bytes()).unwrap();
    }

    /// The next `bestmove` line's move, within 20 s.
    fn bestmove(&mut self, what: &str) -> String {
        loop {
            if let Some(at) = self.text.find("bestmove ") {
                let rest = &self.text[at + 9..];
                if let Some(end) = rest.find('\n') {
                    let best = rest[..end].split_whitespace().next().unwrap_or("").to_string();
                    self.text = rest[end..].to_string();
                    return best;
                }
            }
            match self.output.recv_timeout(Duration::from_secs(20)) {
                Ok(bytes) => self.text.push_str(&String::from_utf8(bytes).unwrap()),
                Err(_) => panic!("{what}: no bestmove within 20 s"),
            }
        }
    }

    /// Sets `fen`, sends `go`, and checks the answer is a legal move there.
    fn go(&mut self, fen: &str, go: &str) -> String {
        self.send(&format!("position fen {fen}\n{go}"));
        let what = format!("{fen}, {go}");
        let best = self.bestmove(&what);
        let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let legal = best.parse::<UciMove>().ok().and_then(|m| m.to_move(&position).ok());
        assert!(legal.is_some(), "{what}: bestmove {best} is not legal");
        best
    }

    /// No further `bestmove` arrives within `wait`.
    fn quiet_for(&mut self, wait: Duration) {
        while let Ok(bytes) = self.output.recv_timeout(wait) {
            self.text.push_str(&String::from_utf8(bytes).unwrap());
        }
        assert!(!self.text.contains("bestmove"), "an extra bestmove: {}", self.text);
    }
}

const BARE_KINGS: &str = "8/8/8/4k3/8/8/8/4K3 w - - 0 1";
const ONE_MOVE: &str = "k7/8/8/8/8/8/1q6/K7 w - - 0 1";
const MATE_IN_ONE: &str = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";

#[test]
fn mcts_go_depth_ends_in_finished_games_and_no_bestmove_is_stale() {
    for leaf in ["puct", "value", "rollout", "random"] {
        let mut session = Session::start();
        session.send(&format!("uci\nsetoption name Search value mcts\nsetoption name MctsLeaf value {leaf}"));
        session.go(BARE_KINGS, "go depth 5");
        // A stale answer would be the bare kings' king move, illegal here.
        assert_eq!(session.go(ONE_MOVE, "go depth 5"), "a1b2", "{leaf}");
        assert_eq!(session.go(MATE_IN_ONE, "go depth 5"), "a1a8", "{leaf}");
        session.go(BARE_KINGS, "go depth 30");
        session.quiet_for(Duration::from_millis(200));
        session.send("quit");
    }
}

#[test]
fn mcts_answers_every_kind_of_go_once() {
    let mut session = Session::start();
    session.send("uci\nsetoption name Search value mcts");
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    for fen in [start, ONE_MOVE, BARE_KINGS, MATE_IN_ONE] {
        for go in ["go depth 3", "go nodes 200", "go movetime 50", "go wtime 500 btime 500 winc 10 binc 10"] {
            session.go(fen, go);
        }
        // `go infinite` answers after `stop`, once.
        session.send(&format!("position fen {fen}\ngo infinite"));
        std::thread::sleep(Duration::from_millis(50));
        session.quiet_for(Duration::from_millis(50));
        session.send("stop");
        session.bestmove(&format!("{fen}, go infinite"));
    }
    session.quiet_for(Duration::from_millis(200));
    session.send("quit");
}
