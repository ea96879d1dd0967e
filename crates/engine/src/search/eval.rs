//! Evaluation alpha-beta: negamax with the evaluation net, quiescence search (captures
//! and queen promotions; all evasions when in check), iterative deepening with `MultiPV`
//! and aspiration windows, a shared transposition table (Lazy SMP over threads) and move
//! ordering by the move predictors (transposition-table move first). The techniques are
//! switches ([`EvalOptions`], declared once in [`switches`]) and their numbers one table
//! ([`Params`]); mate distance pruning is always on (it never changes a value). The
//! defaults are chosen by SPRT (docs/engine.md).
//!
//! One job a file: this one drives the threads; `deepening` runs iterative deepening,
//! `negamax` the main search, `quiescence` the quiescence search and `picker` orders the
//! moves, on the per-thread state of `searcher`.

mod deepening;
mod negamax;
pub mod params;
mod picker;
mod quiescence;
mod searcher;
pub mod switches;

use std::sync::atomic::{AtomicU64, Ordering};

pub use params::Params;
pub(crate) use params::eval_params;
pub(crate) use switches::eval_switches;
pub use switches::{DEFAULT_PREDICTOR_DEPTH, EvalOptions};

use super::history::Histories;
use super::tt::Table;
use super::{Control, Info, Report, Reporter, SearchResult};
use crate::nn::Networks;
use crate::position_history::Game;
use crate::tablebase::SearchProbe;
use searcher::Searcher;

/// The histories of a search's threads, the main thread's first: one [`Histories`] (a
/// search on one thread, or helpers that start from empty tables) or a slice of them.
pub trait ThreadHistories {
    /// Every thread's histories, the main thread's first.
    fn all(&mut self) -> &mut [Histories];
}

impl ThreadHistories for Histories {
    fn all(&mut self) -> &mut [Histories] {
        std::slice::from_mut(self)
    }
}

impl ThreadHistories for [Histories] {
    fn all(&mut self) -> &mut [Histories] {
        self
    }
}

/// Searches `game` with `threads` threads sharing `tt` (Lazy SMP: helpers run their own
/// iterative deepening, skipping depths by `helper_skips` so that they run ahead of the
/// main thread, and fill the table for it).
///
/// Thread `i` learns into the `i`-th of `histories` (a helper beyond them into empty
/// tables of its own), halved first under `options.keep_histories` (what earlier searches
/// learnt still counts, but less), cleared otherwise; a search also starts a new
/// generation of `tt` (the entries of earlier searches give way first). The main thread
/// searches at once: a launcher thread starts the helpers beside it (no more once the
/// search is over), and each helper prepares its state in its own thread, so that many
/// threads cost the main thread nothing before its first node.
///
/// The main thread's result counts unless a helper completed a deeper iteration with a
/// score at least as good. The node count and the node budget are those of all threads:
/// every thread stops once their shared count reaches it. With `tablebases`, nodes right
/// after a capture or pawn move that the tables cover score their outcome. The game's
/// position must have a legal move.
#[allow(clippy::too_many_arguments)]
pub fn search(
    networks: &Networks,
    game: &Game,
    options: EvalOptions,
    tt: &Table,
    histories: &mut (impl ThreadHistories + ?Sized),
    control: &Control,
    threads: usize,
    tablebases: Option<SearchProbe<'_>>,
    reporter: Reporter<'_>,
) -> SearchResult {
    let search_moves = &control.search_moves;
    let total = AtomicU64::new(0);
    let helpers = control.for_helpers();
    tt.new_search();
    let (main_histories, helper_histories) = histories.all().split_first_mut().expect("the main thread's histories");
    let prepare = |histories: &mut Histories| {
        if options.keep_histories {
            histories.decay();
        } else {
            histories.clear();
        }
    };
    prepare(main_histories);
    let (main, helper_results) = std::thread::scope(|scope| {
        let (total, helpers) = (&total, &helpers);
        let launcher = (threads > 1).then(|| {
            scope.spawn(move || {
                let mut kept = helper_histories.iter_mut();
                let mut handles = Vec::with_capacity(threads - 1);
                for index in 1..threads {
                    if helpers.stopped() {
                        break;
                    }
                    let own = kept.next();
                    handles.push(scope.spawn(move || {
                        let mut fresh: Option<Box<Histories>> = None;
                        let own = match own {
                            Some(own) => {
                                prepare(own);
                                own
                            }
                            None => &mut **fresh.insert(Box::default()),
                        };
                        let mut searcher =
                            Searcher::new(networks, game, options, tt, own, helpers, total, search_moves);
                        searcher.tablebases = tablebases;
                        searcher.iterate(index, &mut |_| {})
                    }));
                }
                handles.into_iter().map(joined).collect::<Vec<_>>()
            })
        });
        let mut main = Searcher::new(networks, game, options, tt, main_histories, control, total, search_moves);
        main.tablebases = tablebases;
        let result = main.iterate(0, &mut *reporter);
        helpers.stop();
        let helper_results = launcher.map(joined).unwrap_or_default();
        (result, helper_results)
    });
    let nodes = total.load(Ordering::Relaxed);
    let best_helper = helper_results
        .into_iter()
        .filter(|h| control.multipv <= 1 && outplays(h, &main))
        .max_by(|a, b| a.depth.cmp(&b.depth).then(a.score.cmp(&b.score)));
    match best_helper {
        Some(helper) => {
            let info =
                Info::new(helper.depth, helper.depth, helper.score, nodes, control.elapsed_ms(), helper.pv.clone());
            reporter(&Report::Info(info));
            SearchResult { nodes, ..helper }
        }
        None => SearchResult { nodes, ..main },
    }
}

/// The result of a finished thread (its panic, if it panicked, goes on in this one).
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Whether helper thread `helper` (1, 2, ...; the main thread is 0) leaves out iteration
/// `depth` at the game's ply `game_ply`: helpers search every other depth, or every
/// other pair or triple of depths, in phases that differ between helpers and from one move to
/// the next, so that they run one or more plies ahead of the main thread and fill the table
/// with deeper results (the pattern of Stockfish 8's Lazy SMP).
fn helper_skips(helper: usize, depth: i32, game_ply: u32) -> bool {
    const SIZE: [u32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
    const PHASE: [u32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
    if helper == 0 {
        return false;
    }
    let i = (helper - 1) % SIZE.len();
    (depth as u32 + game_ply + PHASE[i]) / SIZE[i] % 2 == 1
}

/// Whether a helper thread's result replaces the main thread's: it completed a deeper
/// iteration and scores at least as well.
fn outplays(helper: &SearchResult, main: &SearchResult) -> bool {
    helper.depth > main.depth && helper.score >= main.score
}

#[cfg(test)]
mod tests;
