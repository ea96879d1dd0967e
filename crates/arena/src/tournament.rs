//! Matches and round robins: the schedule (each opening twice, colours swapped, for every
//! pair of players), several games at once, engine processes kept between games and
//! restarted after a failure, and a match stopped early on request (a decided SPRT).

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};

use crate::game::{GameEnd, GameRecord, GameResult, GameSettings, Termination, play_game};
use crate::openings::Opening;
use crate::uci::{EngineCommand, EngineError, EngineProcess};

/// One game of the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Game number, from 1.
    pub round: usize,
    /// Index of White in the player list.
    pub white: usize,
    /// Index of Black.
    pub black: usize,
    /// Index of the opening.
    pub opening: usize,
}

/// The games of a round robin with `games_per_pair` games per pair: game `2k` and `2k + 1`
/// of a pair share opening `k` (cycling through the book) with colours swapped. Pairs are
/// interleaved so that a stopped match is still balanced.
pub fn schedule(players: usize, games_per_pair: usize, openings: usize) -> Vec<Pairing> {
    let pairs: Vec<(usize, usize)> = (0..players).flat_map(|i| (i + 1..players).map(move |j| (i, j))).collect();
    let mut games = Vec::with_capacity(pairs.len() * games_per_pair);
    for g in 0..games_per_pair {
        for &(i, j) in &pairs {
            let (white, black) = if g % 2 == 0 { (i, j) } else { (j, i) };
            games.push(Pairing { round: games.len() + 1, white, black, opening: (g / 2) % openings.max(1) });
        }
    }
    games
}

/// A played game with its place in the schedule.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    /// Where it was scheduled.
    pub pairing: Pairing,
    /// What happened.
    pub record: GameRecord,
}

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// Two or more players.
    pub players: Vec<EngineCommand>,
    /// Openings, used in order.
    pub openings: Vec<Opening>,
    /// Games per pair of players.
    pub games_per_pair: usize,
    /// Games played at once.
    pub concurrency: usize,
    /// Per-game settings.
    pub game: GameSettings,
}

/// A player whose engine could not be started before the first game: the match does not
/// begin.
#[derive(Debug, thiserror::Error)]
#[error("{source} (command: {command})")]
pub struct StartError {
    /// The command line that was run.
    pub command: String,
    /// Why it failed.
    #[source]
    pub source: EngineError,
}

enum Event {
    Warning(String),
    /// A finished game, and where to say it has been counted.
    Game(Box<FinishedGame>, Sender<()>),
}

/// Plays the schedule. Every player's engine is started once first, and any that cannot start
/// (no such program, no handshake, a rejected option) aborts the match before a game is
/// played. `on_game` sees each game as it finishes (with the number finished so far) and
/// stops the match by returning `Break`: no new game starts (the worker that played it waits
/// for the answer), and games in flight are finished and returned. `on_warning` sees each
/// distinct warning. Returns the games in schedule order.
pub fn run_match(
    settings: &MatchSettings,
    mut on_game: impl FnMut(&FinishedGame, usize) -> ControlFlow<()>,
    mut on_warning: impl FnMut(&str),
) -> Result<Vec<FinishedGame>, StartError> {
    let mut warned = BTreeSet::new();
    let mut warn_once = |w: String| {
        if warned.insert(w.clone()) {
            on_warning(&w);
        }
    };
    let mut first_engines = Vec::with_capacity(settings.players.len());
    for command in &settings.players {
        let (engine, warnings) = EngineProcess::start(command, settings.game.handshake_timeout)
            .map_err(|source| StartError { command: command.command_line(), source })?;
        warnings.into_iter().for_each(&mut warn_once);
        first_engines.push(Some(engine));
    }
    let openings = if settings.openings.is_empty() { vec![Opening::startpos()] } else { settings.openings.clone() };
    let games = schedule(settings.players.len(), settings.games_per_pair, openings.len());
    let workers = settings.concurrency.clamp(1, games.len().max(1));
    let mut engine_sets: Vec<Vec<Option<EngineProcess>>> = vec![first_engines];
    engine_sets.extend((1..workers).map(|_| settings.players.iter().map(|_| None).collect()));
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    let (sender, receiver) = channel();
    let mut finished: Vec<FinishedGame> = Vec::with_capacity(games.len());
    std::thread::scope(|scope| {
        for mut engines in engine_sets {
            let sender = sender.clone();
            let (next, stop, games, openings) = (&next, &stop, &games, &openings);
            scope.spawn(move || {
                let (counted, wait_counted) = channel();
                while !stop.load(Ordering::Relaxed) {
                    let Some(pairing) = games.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                    let record = play_pairing(settings, *pairing, &openings[pairing.opening], &mut engines, &mut |w| {
                        let _ = sender.send(Event::Warning(w));
                    });
                    let game = FinishedGame { pairing: *pairing, record };
                    if sender.send(Event::Game(Box::new(game), counted.clone())).is_err()
                        || wait_counted.recv().is_err()
                    {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for event in receiver {
            match event {
                Event::Warning(w) => warn_once(w),
                Event::Game(game, counted) => {
                    finished.push(*game);
                    if on_game(finished.last().expect("just pushed"), finished.len()).is_break() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    let _ = counted.send(());
                }
            }
        }
    });
    finished.sort_by_key(|g| g.pairing.round);
    Ok(finished)
}

/// Plays one scheduled game on this worker's engines, starting the ones it lacks and
/// dropping the one that failed.
fn play_pairing(
    settings: &MatchSettings,
    pairing: Pairing,
    opening: &Opening,
    engines: &mut [Option<EngineProcess>],
    warn: &mut dyn FnMut(String),
) -> GameRecord {
    for (side, index) in [pairing.white, pairing.black].into_iter().enumerate() {
        if engines[index].is_some() {
            continue;
        }
        match EngineProcess::start(&settings.players[index], settings.game.handshake_timeout) {
            Ok((engine, warnings)) => {
                warnings.into_iter().for_each(&mut *warn);
                engines[index] = Some(engine);
            }
            Err(e) => {
                let loser = if side == 0 { shakmaty::Color::White } else { shakmaty::Color::Black };
                let end = GameEnd::new(GameResult::loss_of(loser), Termination::Abandoned, e.to_string(), Some(loser));
                let (white, black) = (&settings.players[pairing.white].name, &settings.players[pairing.black].name);
                return GameRecord::new(white, black, opening, Vec::new(), end);
            }
        }
    }
    let (low, high) = (pairing.white.min(pairing.black), pairing.white.max(pairing.black));
    let (left, right) = engines.split_at_mut(high);
    let (a, b) = (left[low].as_mut().expect("started above"), right[0].as_mut().expect("started above"));
    let pair = if pairing.white < pairing.black { [a, b] } else { [b, a] };
    let record = play_game(pair, opening, &settings.game);
    if let Some(side) = record.end.failed {
        let index = if side == shakmaty::Color::White { pairing.white } else { pairing.black };
        engines[index] = None;
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_swaps_colours_and_shares_openings() {
        let games = schedule(3, 4, 10);
        assert_eq!(games.len(), 12);
        let ab: Vec<_> = games.iter().filter(|g| g.white.min(g.black) == 0 && g.white.max(g.black) == 1).collect();
        assert_eq!(ab.len(), 4);
        assert_eq!((ab[0].white, ab[0].opening, ab[1].white, ab[1].opening), (0, 0, 1, 0));
        assert_eq!((ab[2].opening, ab[3].opening), (1, 1));
        for p in 0..3 {
            assert_eq!(games.iter().filter(|g| g.white == p).count(), 4, "equal number of games as White");
        }
        assert_eq!(schedule(2, 5, 2).iter().map(|g| g.opening).collect::<Vec<_>>(), [0, 0, 1, 1, 0]);
        assert!(games.iter().enumerate().all(|(i, g)| g.round == i + 1));
    }
}
