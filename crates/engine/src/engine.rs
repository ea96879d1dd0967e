//! The engine: networks, settings, the searches' tables and tree, and the dispatch of a
//! `go` to the selected search. The UCI options that change it are one table,
//! [`options::OPTIONS`].

pub mod options;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use shakmaty::Position;

use crate::nn::{NetworkError, Networks};
use crate::position_history::Game;
use crate::search::compare::{self, CompareOptions, CompareTable};
use crate::search::eval::{self, EvalOptions};
use crate::search::history::Histories;
use crate::search::mcts::{Mcts, MctsOptions};
use crate::search::policy::{self, PolicyMode};
use crate::search::tt::Table;
use crate::search::{Control, Info, Limits, Reporter, SearchResult};

/// Which search plays (the UCI option `Search`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SearchKind {
    /// Comparison alpha-beta (DeepChess), `Search compare`.
    CompareAlphaBeta,
    /// Alpha-beta on the evaluation net's scores, `Search eval`.
    EvalAlphaBeta,
    /// Monte Carlo tree search, `Search mcts`.
    Mcts,
    /// Policy player (no search), `Search policy`.
    Policy,
}

/// The settings the searches read; the options that change them are in [`options::OPTIONS`],
/// whose defaults are these (checked by a test).
#[derive(Clone, Debug, PartialEq)]
struct Settings {
    search: SearchKind,
    /// Switches of the alpha-beta searches: all of them drive the evaluation search;
    /// `tt` and `ordering` drive the comparison search too.
    eval: EvalOptions,
    policy: PolicyMode,
    /// Threads of the evaluation search.
    threads: usize,
    /// Time kept in hand per move for communication delays.
    move_overhead: Duration,
}

/// Transposition table size in MB of a new engine.
const DEFAULT_HASH_MB: usize = 16;

/// The engine: networks, settings, the searches' tables and tree. Settings change only
/// through [`Engine::set_option`], which validates against the option table and keeps
/// tables and networks in step with it.
pub struct Engine {
    settings: Settings,
    networks: Networks,
    /// The evaluation search's table (`Hash` MB).
    tt: Table,
    /// The evaluation search's histories, kept between the moves of a game when the
    /// `KeepHistories` option says so.
    histories: Box<Histories>,
    /// The comparison search's table (`Hash` MB).
    compare_table: CompareTable,
    /// The MCTS player, with its settings and the tree kept between moves.
    mcts: Mcts,
}

impl Engine {
    /// An engine playing with `networks` and default options.
    pub fn new(networks: Networks) -> Engine {
        Engine {
            settings: Settings {
                search: SearchKind::EvalAlphaBeta,
                eval: EvalOptions::DEFAULT,
                policy: PolicyMode::default(),
                threads: 1,
                move_overhead: Duration::from_millis(10),
            },
            networks,
            tt: Table::new(DEFAULT_HASH_MB),
            histories: Box::default(),
            compare_table: CompareTable::new(DEFAULT_HASH_MB),
            mcts: Mcts::new(MctsOptions::default(), 0),
        }
    }

    /// An engine playing with the networks in `models` (`None`: the embedded ones) and
    /// default options.
    pub fn load(models: Option<&Path>) -> Result<Engine, NetworkError> {
        Networks::load_or_embedded(models).map(Engine::new)
    }

    /// The networks.
    pub fn networks(&self) -> &Networks {
        &self.networks
    }

    /// The evaluation search's switches as the options set them.
    pub fn eval_search_options(&self) -> EvalOptions {
        self.settings.eval
    }

    /// Forgets everything learnt about the previous game (tables and tree).
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.histories.clear();
        self.compare_table.clear();
        self.mcts.clear();
    }

    /// Sets the UCI option `name` (case-insensitive, or one of its aliases) to `value`; an
    /// error names the option and the allowed values and leaves the engine unchanged.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        let option = options::find(name).ok_or_else(|| format!("unknown option `{}`", name.trim()))?;
        option.apply(self, value)
    }

    /// New, empty tables of `megabytes` MB each (the `Hash` option); when the memory cannot
    /// be had, an error says so and the previous tables stay.
    fn resize_tables(&mut self, megabytes: usize) -> Result<(), String> {
        let refused = |_| format!("cannot allocate two tables of {megabytes} MB; the previous tables are kept");
        let tt = Table::try_new(megabytes).map_err(refused)?;
        let compare_table = CompareTable::try_new(megabytes).map_err(refused)?;
        (self.tt, self.compare_table) = (tt, compare_table);
        Ok(())
    }

    /// Searches the game's position; `None` when it has no legal move.
    pub fn go(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: Arc<AtomicBool>,
        reporter: Reporter<'_>,
    ) -> Option<SearchResult> {
        let position = game.position();
        if position.legal_moves().is_empty() {
            return None;
        }
        let settings = &self.settings;
        let control = Control::new(limits, position.turn(), settings.move_overhead, stop);
        Some(match settings.search {
            SearchKind::EvalAlphaBeta => {
                let tables = (&self.tt, &mut *self.histories);
                eval::search(
                    &self.networks,
                    game,
                    settings.eval,
                    tables.0,
                    tables.1,
                    &control,
                    settings.threads,
                    reporter,
                )
            }
            SearchKind::CompareAlphaBeta => {
                let options = CompareOptions { tt: settings.eval.tt, ordering: settings.eval.ordering };
                compare::search(&self.networks, game, options, &mut self.compare_table, &control, reporter)
            }
            SearchKind::Mcts => self.mcts.search(&self.networks, game, &control, reporter),
            SearchKind::Policy => {
                let result = policy::choose(&self.networks, position, settings.policy, &control.search_moves);
                reporter(&Info {
                    depth: 0,
                    seldepth: 0,
                    score: result.score,
                    nodes: result.nodes,
                    time_ms: control.elapsed_ms(),
                    pv: result.pv.clone(),
                });
                result
            }
        })
    }
}
