//! The engine: networks, options, the searches' tables and trees, and the dispatch of a
//! `go` to the selected search.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use shakmaty::Position;

use crate::position_history::Game;
use crate::nn::Networks;
use crate::search::compare::{self, CompareOptions, CompareTable};
use crate::search::eval::{self, DEFAULT_PREDICTOR_DEPTH, EvalOptions};
use crate::search::mcts::{FinalMove, LeafEval, Mcts, MctsOptions};
use crate::search::policy::{self, PolicyMode};
use crate::search::tt::Table;
use crate::search::{Control, Info, Limits, Reporter, SearchResult};

/// Which search plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SearchKind {
    /// Comparison alpha-beta (DeepChess).
    Compare,
    /// Evaluation alpha-beta.
    #[default]
    Eval,
    /// Monte Carlo tree search.
    Mcts,
    /// Policy player (no search).
    Policy,
}

/// Every engine setting (the UCI options).
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// The search.
    pub search: SearchKind,
    /// Switches of the alpha-beta searches: all of them drive the evaluation search;
    /// `tt` and `ordering` drive the comparison search too.
    pub eval: EvalOptions,
    /// MCTS settings.
    pub mcts: MctsOptions,
    /// Policy player.
    pub policy: PolicyMode,
    /// Transposition table size in MB.
    pub hash_mb: usize,
    /// Threads of the evaluation search.
    pub threads: usize,
    /// Model directory (`None`: the embedded models).
    pub models: Option<PathBuf>,
    /// Time kept in hand per move for communication delays.
    pub move_overhead: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            search: SearchKind::default(),
            // Futility pruning cost STS points in measurements (docs/engine.md): off by default.
            eval: EvalOptions { futility: false, ..EvalOptions::FULL },
            mcts: MctsOptions::default(),
            policy: PolicyMode::default(),
            hash_mb: 16,
            threads: 1,
            models: None,
            move_overhead: Duration::from_millis(10),
        }
    }
}

impl EngineOptions {
    /// The evaluation search's switches.
    pub fn eval_options(&self) -> EvalOptions {
        self.eval
    }

    /// The comparison search's switches.
    pub fn compare_options(&self) -> CompareOptions {
        CompareOptions { tt: self.eval.tt, ordering: self.eval.ordering }
    }
}

/// A UCI option's type and default, as announced after `uci`.
#[derive(Clone, Debug)]
pub enum OptionKind {
    /// On/off.
    Check(bool),
    /// Integer in a range.
    Spin {
        /// Default.
        default: i64,
        /// Minimum.
        min: i64,
        /// Maximum.
        max: i64,
    },
    /// One of a list.
    Combo(&'static str, &'static [&'static str]),
    /// Free text.
    Text(&'static str),
}

/// The options the engine announces, with their defaults.
pub const UCI_OPTIONS: &[(&str, OptionKind)] = &[
    ("Search", OptionKind::Combo("eval", &["compare", "eval", "mcts", "policy"])),
    ("TT", OptionKind::Check(true)),
    ("Ordering", OptionKind::Check(true)),
    ("PVS", OptionKind::Check(true)),
    ("NullMove", OptionKind::Check(true)),
    ("Killers", OptionKind::Check(true)),
    ("CheckExtensions", OptionKind::Check(true)),
    ("Aspiration", OptionKind::Check(true)),
    ("LMR", OptionKind::Check(true)),
    ("LMP", OptionKind::Check(true)),
    ("SEE", OptionKind::Check(true)),
    ("Futility", OptionKind::Check(false)),
    ("OrderingDepth", OptionKind::Spin { default: DEFAULT_PREDICTOR_DEPTH as i64, min: 1, max: 64 }),
    ("MctsLeaf", OptionKind::Combo("puct", &["value", "rollout", "random", "puct"])),
    ("MctsSelect", OptionKind::Combo("visits", &["value", "visits", "both"])),
    ("MctsC", OptionKind::Text("1.41")),
    ("PolicyMode", OptionKind::Combo("joint", &["joint", "greedy"])),
    ("Hash", OptionKind::Spin { default: 16, min: 1, max: 65536 }),
    ("Threads", OptionKind::Spin { default: 1, min: 1, max: 256 }),
    ("Models", OptionKind::Text("<embedded>")),
    ("MoveOverhead", OptionKind::Spin { default: 10, min: 0, max: 10_000 }),
];

/// The `option name … type …` lines sent after `uci`.
pub fn uci_option_lines() -> Vec<String> {
    UCI_OPTIONS
        .iter()
        .map(|(name, kind)| match kind {
            OptionKind::Check(d) => format!("option name {name} type check default {d}"),
            OptionKind::Spin { default, min, max } => {
                format!("option name {name} type spin default {default} min {min} max {max}")
            }
            OptionKind::Combo(d, vars) => {
                let vars: String = vars.iter().map(|v| format!(" var {v}")).collect();
                format!("option name {name} type combo default {d}{vars}")
            }
            OptionKind::Text(d) => format!("option name {name} type string default {d}"),
        })
        .collect()
}

/// The engine.
pub struct Engine {
    /// Current settings.
    pub options: EngineOptions,
    networks: Networks,
    tt: Table,
    compare_table: CompareTable,
    mcts: Mcts,
}

impl Engine {
    /// An engine playing with `networks` and default options.
    pub fn new(networks: Networks) -> Engine {
        let options = EngineOptions::default();
        Engine {
            tt: Table::new(options.hash_mb),
            compare_table: CompareTable::new(options.hash_mb),
            mcts: Mcts::new(options.mcts, 0),
            networks,
            options,
        }
    }

    /// The networks.
    pub fn networks(&self) -> &Networks {
        &self.networks
    }

    /// Forgets everything learnt about the previous game (tables and tree).
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.compare_table.clear();
        self.mcts.clear();
    }

    /// Sets the UCI option `name` (case-insensitive) to `value`; an error says what is
    /// wrong and leaves the setting unchanged.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        let check = || match value.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("option {name}: expected true or false, got `{value}`")),
        };
        let spin = |min: i64, max: i64| {
            value
                .parse::<i64>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(|| format!("option {name}: expected an integer in {min}..={max}, got `{value}`"))
        };
        let combo = |vars: &[&str]| {
            vars.iter()
                .find(|v| v.eq_ignore_ascii_case(value))
                .map(|v| v.to_string())
                .ok_or_else(|| format!("option {name}: expected one of {}, got `{value}`", vars.join(", ")))
        };
        let o = &mut self.options;
        match name.to_ascii_lowercase().as_str() {
            "search" => {
                o.search = match combo(&["compare", "eval", "mcts", "policy"])?.as_str() {
                    "compare" => SearchKind::Compare,
                    "eval" => SearchKind::Eval,
                    "mcts" => SearchKind::Mcts,
                    _ => SearchKind::Policy,
                }
            }
            "tt" => o.eval.tt = check()?,
            "ordering" => o.eval.ordering = check()?,
            "pvs" => o.eval.pvs = check()?,
            "nullmove" => o.eval.null_move = check()?,
            "killers" => o.eval.killers = check()?,
            "checkextensions" => o.eval.check_extensions = check()?,
            "aspiration" => o.eval.aspiration = check()?,
            "lmr" => o.eval.lmr = check()?,
            "lmp" => o.eval.lmp = check()?,
            "see" => o.eval.see = check()?,
            "futility" => o.eval.futility = check()?,
            "orderingdepth" => o.eval.predictor_depth = spin(1, 64)? as i32,
            "mctsleaf" => {
                o.mcts.leaf = match combo(&["value", "rollout", "random", "puct"])?.as_str() {
                    "value" => LeafEval::Value,
                    "rollout" => LeafEval::PredictorRollout,
                    "random" => LeafEval::RandomRollout,
                    _ => LeafEval::Puct,
                };
                self.mcts.clear();
            }
            "mctsselect" => {
                o.mcts.select = match combo(&["value", "visits", "both"])?.as_str() {
                    "value" => FinalMove::Value,
                    "visits" => FinalMove::Visits,
                    _ => FinalMove::Both,
                }
            }
            "mctsc" => {
                o.mcts.c = value
                    .parse::<f32>()
                    .ok()
                    .filter(|c| c.is_finite() && *c >= 0.0)
                    .ok_or_else(|| format!("option {name}: expected a number >= 0, got `{value}`"))?
            }
            "policymode" => {
                o.policy = if combo(&["joint", "greedy"])? == "joint" { PolicyMode::Joint } else { PolicyMode::Greedy }
            }
            "hash" => {
                o.hash_mb = spin(1, 65536)? as usize;
                self.tt = Table::new(o.hash_mb);
                self.compare_table = CompareTable::new(o.hash_mb);
            }
            "threads" => o.threads = spin(1, 256)? as usize,
            "moveoverhead" => o.move_overhead = Duration::from_millis(spin(0, 10_000)? as u64),
            "models" => {
                let dir = (!value.is_empty() && value != "<embedded>").then(|| PathBuf::from(value));
                self.networks = Networks::load_or_embedded(dir.as_deref()).map_err(|e| format!("option Models: {e}"))?;
                self.options.models = dir;
                self.new_game();
            }
            _ => return Err(format!("unknown option `{name}`")),
        }
        self.mcts.options = self.options.mcts;
        Ok(())
    }

    /// Searches the game's position; `None` when it has no legal move.
    pub fn go(&mut self, game: &Game, limits: &Limits, stop: Arc<AtomicBool>, reporter: Reporter<'_>) -> Option<SearchResult> {
        let position = game.position();
        if position.legal_moves().is_empty() {
            return None;
        }
        let control = Control::new(limits, position.turn(), self.options.move_overhead, stop);
        Some(match self.options.search {
            SearchKind::Eval => eval::search(
                &self.networks,
                game,
                self.options.eval_options(),
                &self.tt,
                &control,
                self.options.threads,
                reporter,
            ),
            SearchKind::Compare => compare::search(
                &self.networks,
                game,
                self.options.compare_options(),
                &mut self.compare_table,
                &control,
                reporter,
            ),
            SearchKind::Mcts => self.mcts.search(&self.networks, game, &control, reporter),
            SearchKind::Policy => {
                let result = policy::choose(&self.networks, position, self.options.policy, &control.search_moves);
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
