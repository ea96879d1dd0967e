//! A UCI client for engine processes: spawn, handshake with time limits, options,
//! `position` + `go`, `info` parsing and `bestmove`. Every wait has a deadline, so a hung
//! engine is detected; a crashed one is seen as the end of its output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How to start an engine and configure it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineCommand {
    /// Display name (PGN tags, tables, messages).
    pub name: String,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// `setoption` name/value pairs, sent in order after the handshake.
    pub options: Vec<(String, String)>,
}

impl EngineCommand {
    /// The program and arguments as a shell would read them back (for messages).
    pub fn command_line(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str)).unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// Why an engine could not be used.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The program could not be started.
    #[error("engine {engine}: cannot start `{program}`: {source}")]
    Spawn {
        /// Engine name.
        engine: String,
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The process ended or closed its output.
    #[error("engine {engine} crashed {during} ({status})")]
    Crashed {
        /// Engine name.
        engine: String,
        /// What it was doing.
        during: String,
        /// Exit status, when known.
        status: String,
    },
    /// No answer in time.
    #[error("engine {engine} did not answer {during} within {limit_ms} ms")]
    Timeout {
        /// Engine name.
        engine: String,
        /// What it was doing.
        during: String,
        /// The limit.
        limit_ms: u128,
    },
    /// An answer that breaks the protocol.
    #[error("engine {engine}: {message}")]
    Protocol {
        /// Engine name.
        engine: String,
        /// What was wrong.
        message: String,
    },
}

/// A score in the side to move's view: the engine's own type, read here from `info` lines.
pub use deepchess_engine::search::Score;

/// The score as centipawns, mates mapped to ±(100000 − distance).
pub fn score_as_cp(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => 100_000 - n,
        Score::Mate(n) => -100_000 - n,
    }
}

/// The same score from the other side's view.
pub fn flipped(score: Score) -> Score {
    match score {
        Score::Cp(cp) => Score::Cp(-cp),
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// The result of one `go`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The `bestmove` token (unchecked).
    pub best_move: String,
    /// Last reported score.
    pub score: Option<Score>,
    /// Last reported depth.
    pub depth: Option<u32>,
    /// Last reported node count.
    pub nodes: Option<u64>,
    /// Last reported principal variation.
    pub pv: Vec<String>,
    /// Time from `go` to `bestmove`.
    pub elapsed: Duration,
}

impl SearchOutcome {
    /// Takes what an `info` line reports (scores with bounds are taken as they are; `info
    /// string` lines and, under `MultiPV`, the lines of other moves than the best are
    /// ignored).
    pub fn read_info(&mut self, line: &str) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let multipv = tokens.iter().position(|t| *t == "multipv").and_then(|i| tokens.get(i + 1));
        if tokens.get(1) != Some(&"string") && multipv.is_some_and(|n| *n != "1") {
            return;
        }
        let mut i = 1;
        while i < tokens.len() {
            let next = |k: usize| tokens.get(i + k).copied().unwrap_or("");
            match tokens[i] {
                "string" => return,
                "depth" => self.depth = next(1).parse().ok().or(self.depth),
                "nodes" => self.nodes = next(1).parse().ok().or(self.nodes),
                "score" => {
                    let value = next(2).parse().ok();
                    match (next(1), value) {
                        ("cp", Some(v)) => self.score = Some(Score::Cp(v)),
                        ("mate", Some(v)) => self.score = Some(Score::Mate(v)),
                        _ => {}
                    }
                    i += 2;
                }
                "pv" => {
                    self.pv = tokens[i + 1..].iter().map(|s| (*s).to_owned()).collect();
                    return;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// A running UCI engine process (the arena's side of the protocol; not the engine crate's
/// `Engine`, which is a search).
pub struct EngineProcess {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The engine's `id name`.
    pub id_name: String,
    declared_options: Vec<String>,
}

impl EngineProcess {
    /// Starts the engine, runs the `uci` handshake and sends its options. Options the engine
    /// does not declare are skipped and returned as warnings.
    pub fn start(
        command: &EngineCommand,
        handshake_timeout: Duration,
    ) -> Result<(EngineProcess, Vec<String>), EngineError> {
        let (program, args) = command
            .argv
            .split_first()
            .ok_or_else(|| EngineError::Protocol { engine: command.name.clone(), message: "empty command".into() })?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| EngineError::Spawn { engine: command.name.clone(), program: program.clone(), source })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut engine = EngineProcess {
            name: command.name.clone(),
            child,
            stdin,
            lines,
            id_name: String::new(),
            declared_options: Vec::new(),
        };
        engine.send("uci", "during the handshake")?;
        let deadline = Instant::now() + handshake_timeout;
        loop {
            let line = engine.receive(deadline, handshake_timeout, "`uci` (handshake)")?;
            if line.trim() == "uciok" {
                break;
            }
            if let Some(name) = line.strip_prefix("id name ") {
                engine.id_name = name.trim().to_owned();
            } else if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                engine.declared_options.push(name.to_owned());
            }
        }
        let mut warnings = Vec::new();
        for (name, value) in &command.options {
            match engine.declared_options.iter().find(|d| d.eq_ignore_ascii_case(name)) {
                Some(declared) => {
                    let line = format!("setoption name {declared} value {value}");
                    engine.send(&line, "while setting options")?;
                }
                None => warnings.push(format!("engine {} has no option \"{name}\"; not set", command.name)),
            }
        }
        // An engine that rejects an option says so before `readyok` (`info string error ...`,
        // as ours does); running on with its defaults would measure the wrong thing.
        engine.send("isready", "at isready")?;
        let deadline = Instant::now() + handshake_timeout;
        loop {
            let line = engine.receive(deadline, handshake_timeout, "`isready`")?;
            let line = line.trim();
            if line == "readyok" {
                break;
            }
            if let Some(message) = line.strip_prefix("info string")
                && message.to_ascii_lowercase().contains("error")
            {
                return Err(EngineError::Protocol {
                    engine: command.name.clone(),
                    message: format!("rejected an option:{message}"),
                });
            }
        }
        Ok((engine, warnings))
    }

    /// The display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `ucinewgame` and waits until the engine is ready.
    pub fn new_game(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("ucinewgame", "at ucinewgame")?;
        self.ready(timeout)
    }

    /// Sends `isready` and waits for `readyok`.
    pub fn ready(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("isready", "at isready")?;
        let deadline = Instant::now() + timeout;
        while self.receive(deadline, timeout, "`isready`")?.trim() != "readyok" {}
        Ok(())
    }

    /// Sets up `fen` plus `moves` (UCI), sends `go {go_args}` and waits for `bestmove` until
    /// `timeout` has passed.
    pub fn search(
        &mut self,
        fen: &str,
        moves: &[String],
        go_args: &str,
        timeout: Duration,
    ) -> Result<SearchOutcome, EngineError> {
        let mut position = format!("position fen {fen}");
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        self.send(&position, "at `position`")?;
        let started = Instant::now();
        self.send(&format!("go {go_args}"), "at `go`")?;
        let deadline = started + timeout;
        let mut outcome = SearchOutcome::default();
        loop {
            let line = self.receive(deadline, timeout, "`go` with a `bestmove`")?;
            let line = line.trim();
            if line.starts_with("info ") {
                outcome.read_info(line);
            } else if let Some(rest) = line.strip_prefix("bestmove") {
                outcome.elapsed = started.elapsed();
                outcome.best_move = rest.split_whitespace().next().unwrap_or("").to_owned();
                return Ok(outcome);
            }
        }
    }

    fn send(&mut self, line: &str, during: &str) -> Result<(), EngineError> {
        let written = writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush());
        written.map_err(|_| self.crashed(during))
    }

    /// The next line, waiting until `deadline` (`limit` after the request, for messages).
    fn receive(&mut self, deadline: Instant, limit: Duration, during: &str) -> Result<String, EngineError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Disconnected) => Err(self.crashed(&format!("waiting for {during}"))),
            Err(RecvTimeoutError::Timeout) => Err(EngineError::Timeout {
                engine: self.name.clone(),
                during: format!("to {during}"),
                limit_ms: limit.as_millis(),
            }),
        }
    }

    fn crashed(&mut self, during: &str) -> EngineError {
        // The output closes a moment before the process can be reaped.
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => break "output closed, process still running".to_owned(),
                Err(e) => break e.to_string(),
            }
        };
        EngineError::Crashed { engine: self.name.clone(), during: during.to_owned(), status }
    }
}

impl Drop for EngineProcess {
    /// Asks the engine to quit, and kills it if it is still running shortly after.
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines() {
        let mut o = SearchOutcome::default();
        o.read_info("info depth 12 seldepth 18 multipv 1 score cp -35 nodes 123456 nps 1000 pv e2e4 e7e5 g1f3");
        assert_eq!((o.depth, o.nodes, o.score), (Some(12), Some(123456), Some(Score::Cp(-35))));
        assert_eq!(o.pv, ["e2e4", "e7e5", "g1f3"]);
        o.read_info("info depth 13 score mate -3 lowerbound nodes 200000");
        assert_eq!((o.depth, o.score, o.nodes), (Some(13), Some(Score::Mate(-3)), Some(200000)));
        o.read_info("info string depth 99 nodes 1");
        assert_eq!(o.depth, Some(13));
        // MultiPV: the second line is another move's.
        o.read_info("info depth 14 multipv 1 score cp 20 pv d2d4");
        o.read_info("info depth 14 multipv 2 score cp 10 pv c2c4");
        assert_eq!(
            (o.depth, o.score, o.pv.as_slice()),
            (Some(14), Some(Score::Cp(20)), ["d2d4".to_string()].as_slice())
        );
        assert_eq!(score_as_cp(Score::Mate(-3)), -99_997);
        assert_eq!(flipped(Score::Mate(2)), Score::Mate(-2));
    }
}
