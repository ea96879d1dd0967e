//! Runs the positions of a suite through engine processes, several at once, restarting an
//! engine that crashed or hung; a failed position scores nothing and keeps its reason.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::time::Duration;

use shakmaty::san::San;

use crate::limits::TimeControl;
use crate::suite::{PositionResult, SuitePosition};
use crate::uci::{EngineCommand, EngineError, EngineProcess, Score};

/// Settings of a suite run.
#[derive(Clone, Debug)]
pub struct SuiteSettings {
    /// The engine.
    pub engine: EngineCommand,
    /// Search limit per position (not a clock).
    pub limit: TimeControl,
    /// Engine processes working at once.
    pub concurrency: usize,
    /// Extra time over the move time before an engine counts as hung.
    pub margin: Duration,
    /// Wait for fixed-node or fixed-depth searches before an engine counts as hung.
    pub hang_timeout: Duration,
    /// Wait for the handshake and `isready`.
    pub handshake_timeout: Duration,
}

/// Runs every position; `on_result` sees each result as it comes (any order), and the
/// results are returned in suite order. Fails only when the engine cannot be started at
/// all; warnings (options the engine lacks) go to `on_warning`.
pub fn run_suite(
    settings: &SuiteSettings,
    positions: &[SuitePosition],
    mut on_result: impl FnMut(&PositionResult),
    mut on_warning: impl FnMut(String),
) -> Result<Vec<PositionResult>, EngineError> {
    if matches!(settings.limit, TimeControl::Clock { .. }) {
        return Err(EngineError::Protocol {
            engine: settings.engine.name.clone(),
            message: "a suite needs a time, node or depth limit per position, not a clock".into(),
        });
    }
    let workers = settings.concurrency.clamp(1, positions.len().max(1));
    let mut engines = Vec::with_capacity(workers);
    for i in 0..workers {
        let (engine, warnings) = EngineProcess::start(&settings.engine, settings.handshake_timeout)?;
        if i == 0 {
            warnings.into_iter().for_each(&mut on_warning);
        }
        engines.push(engine);
    }
    let next = AtomicUsize::new(0);
    let (sender, receiver) = channel();
    let mut results: Vec<Option<PositionResult>> = vec![None; positions.len()];
    std::thread::scope(|scope| {
        for engine in engines {
            let sender = sender.clone();
            let next = &next;
            scope.spawn(move || {
                let mut engine = Some(engine);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(position) = positions.get(index) else { break };
                    let result = solve(settings, position, &mut engine);
                    if sender.send((index, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for (index, result) in receiver {
            on_result(&result);
            results[index] = Some(result);
        }
    });
    Ok(results.into_iter().map(|r| r.expect("every position has a result")).collect())
}

/// Runs one position on `engine`, starting a new process when the slot is empty and
/// emptying it when the engine failed.
fn solve(settings: &SuiteSettings, position: &SuitePosition, engine: &mut Option<EngineProcess>) -> PositionResult {
    let mut result = PositionResult {
        line: position.line,
        id: position.id.clone(),
        theme: position.theme.clone(),
        chosen: None,
        chosen_san: None,
        points: 0,
        max: position.score(None).max,
        best: false,
        time_ms: 0,
        nodes: None,
        depth: None,
        score: None,
        error: None,
    };
    if engine.is_none() {
        match EngineProcess::start(&settings.engine, settings.handshake_timeout) {
            Ok((e, _)) => *engine = Some(e),
            Err(e) => {
                result.error = Some(e.to_string());
                return result;
            }
        }
    }
    let running = engine.as_mut().expect("started above");
    let wait = settings.limit.wait_limit(Duration::ZERO, settings.margin, settings.hang_timeout);
    let searched = running
        .new_game(settings.handshake_timeout)
        .and_then(|()| running.search(&position.fen, &[], &settings.limit.go_args([Duration::ZERO; 2]), wait));
    let outcome = match searched {
        Ok(outcome) => outcome,
        Err(e) => {
            *engine = None;
            result.error = Some(e.to_string());
            return result;
        }
    };
    result.time_ms = outcome.elapsed.as_millis() as u64;
    result.nodes = outcome.nodes;
    result.depth = outcome.depth;
    result.score = outcome.score.map(Score::uci);
    result.chosen = Some(outcome.best_move.clone());
    match position.engine_move(&outcome.best_move) {
        Some(m) => {
            let score = position.score(Some(&m));
            result.chosen_san = Some(San::from_move(&position.position, m).to_string());
            result.points = score.points;
            result.best = score.best;
        }
        None => {
            result.error =
                Some(format!("engine {} played the illegal move \"{}\"", settings.engine.name, outcome.best_move))
        }
    }
    result
}
