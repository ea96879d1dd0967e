//! One worker's searcher: the evaluation search with a node budget, its own transposition
//! table, and the time and nodes it spends (for the overhead figure).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::eval::{self, EvalOptions};
use deepchess_engine::search::history::Histories;
use deepchess_engine::search::tt::Table;
use deepchess_engine::search::{Control, Limits, SearchResult};
use shakmaty::Position;

/// A searcher owned by one worker thread.
pub struct Player<'a> {
    networks: &'a Networks,
    options: EvalOptions,
    table: Table,
    histories: Box<Histories>,
    stop: Arc<AtomicBool>,
    /// Time spent inside searches.
    pub search_time: Duration,
    /// Nodes searched.
    pub nodes: u64,
}

impl<'a> Player<'a> {
    /// A player with the engine's default search switches and a `hash_mb` table; raising
    /// `stop` aborts its searches.
    pub fn new(networks: &'a Networks, hash_mb: usize, stop: Arc<AtomicBool>) -> Player<'a> {
        let options = EvalOptions::DEFAULT;
        Player {
            networks,
            options,
            table: Table::new(hash_mb),
            histories: Box::default(),
            stop,
            search_time: Duration::ZERO,
            nodes: 0,
        }
    }

    /// Forgets the previous game.
    pub fn new_game(&mut self) {
        self.table.clear();
        self.histories.clear();
    }

    /// Whether the run is being stopped.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Searches `game` (which must have a legal move): no iteration starts after `soft`
    /// nodes, the search aborts at `hard`. `None` when the run is being stopped.
    pub fn search(&mut self, game: &Game, soft: u64, hard: u64) -> Option<SearchResult> {
        let limits = Limits { nodes: Some(hard), ..Limits::default() };
        let turn = game.position().turn();
        let control = Control::new(&limits, turn, Duration::ZERO, self.stop.clone()).with_soft_nodes(soft);
        let start = Instant::now();
        let (table, histories) = (&self.table, &mut *self.histories);
        let result = eval::search(self.networks, game, self.options, table, histories, &control, 1, None, &mut |_| {});
        self.search_time += start.elapsed();
        self.nodes += result.nodes;
        (!self.stopped()).then_some(result)
    }
}
