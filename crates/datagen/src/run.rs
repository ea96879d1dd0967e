//! A datagen run: worker threads play one game each at a time, the calling thread appends
//! the finished games to the output in the order of their numbers and rewrites the summary,
//! until the target is reached or the stop flag is raised (games in progress, and finished
//! games waiting for an earlier one, are then dropped).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deepchess_engine::nn::Networks;

use crate::error::DatagenError;
use crate::game::{PlayedGame, play};
use crate::opening::Openings;
use crate::options::{RunOptions, Target};
use crate::output::Output;
use crate::player::Player;
use crate::summary::Summary;

/// What this run did (the summary holds the totals over all runs).
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The output directory's summary at the end.
    pub summary: Summary,
    /// Games written by this run.
    pub games: u64,
    /// Positions written by this run.
    pub positions: u64,
    /// Wall-clock seconds of this run.
    pub seconds: f64,
    /// Seconds the workers spent on this run's games, summed over threads.
    pub worker_seconds: f64,
    /// Of those, seconds inside the search.
    pub search_seconds: f64,
    /// Nodes searched for this run's games.
    pub nodes: u64,
    /// Whether the stop flag ended the run.
    pub interrupted: bool,
}

impl RunReport {
    /// Positions per hour and worker thread.
    pub fn positions_per_hour_per_thread(&self) -> f64 {
        self.positions as f64 * 3600.0 / self.worker_seconds.max(1e-9)
    }

    /// Share of the workers' time spent outside the search (openings' random moves, game
    /// bookkeeping, records; the opening searches count as search).
    pub fn overhead(&self) -> f64 {
        1.0 - self.search_seconds / self.worker_seconds.max(1e-9)
    }

    /// Nodes per second inside the search, per thread.
    pub fn search_nps(&self) -> f64 {
        self.nodes as f64 / self.search_seconds.max(1e-9)
    }
}

/// Hands out game numbers: with `--games` exactly the numbers the target needs; with
/// `--positions` until the games written in order reach it. Games are written in the order
/// of their numbers, so the output is the same whatever the threads and their timing.
struct Schedule {
    next: u32,
    /// The number after the last one `--games` needs.
    end: Option<u32>,
    /// Set once the games written reach the target.
    done: bool,
}

impl Schedule {
    fn new(summary: &Summary, target: Target) -> Schedule {
        let (next, end) = match target {
            Target::Games(n) => {
                let more = n.saturating_sub(summary.games).min(u64::from(u32::MAX));
                (summary.next_game, Some(summary.next_game.saturating_add(more as u32)))
            }
            Target::Positions(_) => (summary.next_game, None),
        };
        Schedule { next, end, done: reached(summary, target) }
    }

    fn claim(&mut self) -> Option<u32> {
        let more = !self.done && self.end.is_none_or(|end| self.next < end);
        more.then(|| {
            self.next += 1;
            self.next - 1
        })
    }
}

/// Whether the output holds what `target` asks for.
fn reached(summary: &Summary, target: Target) -> bool {
    match target {
        Target::Games(n) => summary.games >= n,
        Target::Positions(n) => summary.positions >= n,
    }
}

/// A worker's report of one game.
struct Finished {
    game: PlayedGame,
    seconds: Duration,
    search: Duration,
    nodes: u64,
}

/// Writes a finished game and counts it in the summary and the report.
fn write(
    output: &mut Output,
    summary: &mut Summary,
    finished: &Finished,
    report: &mut RunReport,
) -> Result<(), DatagenError> {
    output.append(&finished.game)?;
    let positions = finished.game.plies.len() as u64;
    report.games += 1;
    report.positions += positions;
    summary.add(&finished.game);
    summary.worker_seconds += finished.seconds.as_secs_f64();
    summary.search_seconds += finished.search.as_secs_f64();
    summary.nodes += finished.nodes;
    Ok(())
}

/// Runs datagen with `options`; `stop` ends it early, `progress` sees the summary and this
/// run's counts after every game.
pub fn run(
    options: &RunOptions,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Summary, &RunReport),
) -> Result<RunReport, DatagenError> {
    options.validate().map_err(DatagenError::Invalid)?;
    let models = options.game.models.as_deref();
    let networks = Networks::load_or_embedded(models).map_err(|e| {
        DatagenError::Invalid(format!(
            "--models {}: {e}",
            models.map_or("<embedded>".into(), |m| m.display().to_string())
        ))
    })?;
    let openings = Openings::load(options.game.book.as_deref())?;
    let (mut output, mut summary) = Output::open(options)?;
    let started = Instant::now();
    let previous_seconds = summary.seconds;
    let schedule = Mutex::new(Schedule::new(&summary, options.target));
    let mut report = RunReport {
        summary: summary.clone(),
        games: 0,
        positions: 0,
        seconds: 0.0,
        worker_seconds: 0.0,
        search_seconds: 0.0,
        nodes: 0,
        interrupted: false,
    };
    let mut failure = None;
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel::<Result<Finished, DatagenError>>();
        for _ in 0..options.threads {
            let (sender, stop, schedule) = (sender.clone(), stop.clone(), &schedule);
            let (networks, openings) = (&networks, &openings);
            scope.spawn(move || {
                let mut player = Player::new(networks, options.game.hash_mb, stop);
                loop {
                    // Not in a `while let`: the lock would be held for the whole game.
                    let claimed = schedule.lock().expect("schedule lock").claim();
                    let Some(number) = claimed else { break };
                    let (start, search, nodes) = (Instant::now(), player.search_time, player.nodes);
                    let finished = match play(number, &options.game, openings, &mut player) {
                        Ok(Some(game)) => Ok(Finished {
                            game,
                            seconds: start.elapsed(),
                            search: player.search_time - search,
                            nodes: player.nodes - nodes,
                        }),
                        Ok(None) => break,
                        Err(e) => Err(e),
                    };
                    let failed = finished.is_err();
                    if sender.send(finished).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // Finished games wait here until every game before them is written.
        let mut waiting = BTreeMap::new();
        let mut next_to_write = summary.next_game;
        for message in receiver {
            let finished = match message {
                Ok(finished) => finished,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    continue;
                }
            };
            report.worker_seconds += finished.seconds.as_secs_f64();
            report.search_seconds += finished.search.as_secs_f64();
            report.nodes += finished.nodes;
            waiting.insert(finished.game.number, finished);
            while failure.is_none()
                && !reached(&summary, options.target)
                && let Some(finished) = waiting.remove(&next_to_write)
            {
                next_to_write += 1;
                if let Err(e) = write(&mut output, &mut summary, &finished, &mut report) {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    break;
                }
                summary.seconds = previous_seconds + started.elapsed().as_secs_f64();
                if let Err(e) = summary.save(output.dir()) {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    break;
                }
                progress(&summary, &report);
            }
            if reached(&summary, options.target) {
                // the games still running are not needed: stop them
                schedule.lock().expect("schedule lock").done = true;
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    summary.seconds = previous_seconds + started.elapsed().as_secs_f64();
    summary.save(output.dir())?;
    report.interrupted = stop.load(Ordering::Relaxed) && !reached(&summary, options.target);
    report.seconds = started.elapsed().as_secs_f64();
    report.summary = summary;
    Ok(report)
}
