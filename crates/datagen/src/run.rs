//! A datagen run: worker threads play one game each at a time, the calling thread appends
//! every finished game to the output and rewrites the summary, until the target is reached
//! or the stop flag is raised (games in progress are then dropped).

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

/// Hands out game numbers until the target is reached.
struct Schedule {
    next: u32,
    games: u64,
    positions: u64,
    running: u64,
    target: Target,
}

impl Schedule {
    fn claim(&mut self) -> Option<u32> {
        let more = match self.target {
            Target::Games(n) => self.games + self.running < n,
            Target::Positions(n) => self.positions < n,
        };
        more.then(|| {
            self.running += 1;
            self.next += 1;
            self.next - 1
        })
    }
}

/// A worker's report of one game.
struct Finished {
    game: PlayedGame,
    seconds: Duration,
    search: Duration,
    nodes: u64,
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
    let schedule = Mutex::new(Schedule {
        next: summary.next_game,
        games: summary.games,
        positions: summary.positions,
        running: 0,
        target: options.target,
    });
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
        for message in receiver {
            let written = message.and_then(|f| output.append(&f.game).map(|()| f));
            let finished = match written {
                Ok(finished) => finished,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    continue;
                }
            };
            let positions = finished.game.plies.len() as u64;
            {
                let mut s = schedule.lock().expect("schedule lock");
                s.running -= 1;
                s.games += 1;
                s.positions += positions;
            }
            report.games += 1;
            report.positions += positions;
            report.worker_seconds += finished.seconds.as_secs_f64();
            report.search_seconds += finished.search.as_secs_f64();
            report.nodes += finished.nodes;
            summary.add(&finished.game);
            summary.seconds = previous_seconds + started.elapsed().as_secs_f64();
            summary.worker_seconds += finished.seconds.as_secs_f64();
            summary.search_seconds += finished.search.as_secs_f64();
            summary.nodes += finished.nodes;
            if let Err(e) = summary.save(output.dir()) {
                stop.store(true, Ordering::Relaxed);
                failure.get_or_insert(e);
                continue;
            }
            progress(&summary, &report);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    summary.seconds = previous_seconds + started.elapsed().as_secs_f64();
    summary.save(output.dir())?;
    report.interrupted = stop.load(Ordering::Relaxed);
    report.seconds = started.elapsed().as_secs_f64();
    report.summary = summary;
    Ok(report)
}
