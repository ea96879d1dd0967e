//! Monte Carlo tree search.
//!
//! * `Puct` (the default, as Lc0 and Monty search): a node gets its moves the second
//!   time a playout reaches it, with cheap priors from SEE (winning captures first, then
//!   quiet checks and threatened pieces' escapes, moves that lose material last); from 2
//!   visits on the move predictors' probabilities, flattened by a softmax temperature,
//!   take half of each prior (the cheap ones keep the other half); the search's root
//!   gets the predictors' alone at every search (at the root's temperature), each
//!   weighted by the leaf evaluation of the move's position. Selection by
//!   `Q + c(N)·P·sqrt(N)/(1 + n)` with first-play urgency at the parent's value and an
//!   exploration constant that grows with the parent's visits, root and tree constants
//!   apart (`select`); a new leaf is judged by the evaluation net after a short capture
//!   search (`leaf::Resolver`), so that a piece left hanging or an exchange under way is
//!   seen.
//! * The thesis's UCB1 variants, `Q + c·sqrt(ln N / n)`, one untried move expanded per
//!   playout, the new leaf judged by `Value`: the evaluation net;
//!   `PredictorRollout`: moves sampled from the move predictors until a quiet position,
//!   then the net; `RandomRollout`: uniformly random moves to the end of the game.
//!
//! Values are expected scores in [0, 1] from the view of the side that moved into a node
//! and flip at every ply on the way up. Mates are proven up the tree (a node is lost when
//! one reply mates or wins, won when every move loses): a proven win is played at once
//! and a proven root ends the search. The final move is the child with the most visits,
//! the highest mean value, or ("both") the move that is best by both: when the two
//! disagree at the end of the budget the search goes on, up to the hard time limit or
//! twice the node budget, and then plays the most visited. Under a clock the soft limit is
//! scaled up to the hard one (`soft_time_scale`) and the search ends early once the
//! most visited root move leads the second by more playouts than the time left before it
//! would bring at the rate so far. The tree is kept between
//! moves: when the new root is a child or grandchild of the old one, its subtree is
//! reused.
//!
//! The tree's memory (nodes and edges) is bounded by the `Hash` option. When a search
//! reaches the bound it says so once and recycles the least visited nodes: nodes below a
//! visit threshold lose their subtrees (keeping their own value) until the tree takes at
//! most half its bound.

mod choice;
mod leaf;
mod params;
mod playout;
mod priors;
mod select;
mod shared;
#[cfg(test)]
mod tests;
mod tree;

use std::time::Duration;

use deepchess_core::arch::VALUE_CP_PER_LOGIT;
use shakmaty::{Chess, Move, Position};

pub use leaf::{ROLLOUT_MAX_PLIES, ROLLOUT_QUIET_PLIES};
pub use params::Params;
pub(crate) use params::mcts_params;

use super::{Control, Info, Report, Reporter, Score, SearchResult};
use crate::nn::Networks;
use crate::position_history::{Game, key};
use playout::{Setting, Worker};
use select::Puct;
use shared::Shared;
use tree::{Node, Tree};

/// Memory of a new player's tree in MB (the `Hash` option's default).
const DEFAULT_MEMORY_MB: usize = 16;
/// Playouts between two checks of whether the best root move is settled.
const SETTLED_CHECK: u64 = 256;
/// The main thread reads the clock once every this many of its playouts (three reads a
/// playout cost about 2% of a 100 ms search; 16 playouts take about 50 µs).
const CLOCK_CHECK: u64 = 16;

/// How a new leaf is evaluated (and, for `Puct`, how children are selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LeafEval {
    /// UCB1, evaluation net at the leaf.
    Value,
    /// UCB1, predictor-sampled rollout to a quiet position, then the evaluation net.
    PredictorRollout,
    /// UCB1, uniformly random rollout to the end of the game.
    RandomRollout,
    /// PUCT with predictor priors and the evaluation net after a capture search.
    #[default]
    Puct,
}

/// How the final move is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FinalMove {
    /// Highest mean value.
    Value,
    /// Most visits.
    #[default]
    Visits,
    /// Best by both (searching on while they disagree).
    Both,
}

/// MCTS settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MctsOptions {
    /// Leaf evaluation.
    pub leaf: LeafEval,
    /// Final move choice.
    pub select: FinalMove,
    /// UCB1's exploration constant `c` (PUCT has its own root and tree constants).
    pub c: f32,
    /// The tuned numbers (PUCT's constants, priors, leaf search, time).
    pub params: Params,
}

impl Default for MctsOptions {
    fn default() -> Self {
        MctsOptions { leaf: LeafEval::default(), select: FinalMove::default(), c: 1.41, params: Params::DEFAULT }
    }
}

/// An MCTS player: options, the tree kept between moves and the playouts' worker state.
#[derive(Clone, Debug)]
pub struct Mcts {
    /// Settings.
    pub options: MctsOptions,
    tree: Tree,
    /// Bytes the tree may take.
    capacity: usize,
    /// The main thread's playouts' path, keys, leaf evaluation and random generator.
    worker: Worker,
    /// The helper threads' (`Threads` − 1).
    helpers: Vec<Worker>,
    /// The main worker's seed.
    seed: u64,
    /// Deepest node a playout of the current search reached, in plies from the root.
    seldepth: usize,
    /// Whether the tree's root was searched under `searchmoves` (its moves restricted).
    restricted: bool,
    /// PUCT's constants, made again when `options.params` change.
    puct: Puct,
}

impl Mcts {
    /// A player with a seeded random generator and a tree of at most 16 MB.
    pub fn new(options: MctsOptions, seed: u64) -> Mcts {
        Mcts {
            options,
            tree: Tree::default(),
            capacity: DEFAULT_MEMORY_MB << 20,
            worker: Worker::new(seed),
            helpers: Vec::new(),
            seed,
            seldepth: 0,
            restricted: false,
            puct: Puct::new(&options.params),
        }
    }

    /// Bounds the tree to about `megabytes` MB.
    pub fn set_memory(&mut self, megabytes: usize) {
        self.capacity = megabytes.saturating_mul(1 << 20);
    }

    /// Forgets the tree (keeping its memory for the next search).
    pub fn clear(&mut self) {
        self.tree.clear();
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Bytes the tree takes, as counted against its bound.
    pub fn tree_memory(&self) -> usize {
        self.tree.memory()
    }

    /// Sets the number of threads searching the tree (`Threads`); the helpers' workers
    /// draw from seeds after the main one's.
    pub fn set_threads(&mut self, threads: usize) {
        let seed = self.seed;
        let count = threads.max(1) - 1;
        self.helpers.truncate(count);
        while self.helpers.len() < count {
            self.helpers.push(Worker::new(seed + 1 + self.helpers.len() as u64));
        }
    }

    /// How full `tree` is, in permille of the bound (UCI's `hashfull`).
    fn hashfull(&self, tree: &Tree) -> u32 {
        (tree.memory().saturating_mul(1000) / self.capacity.max(1)).min(1000) as u32
    }

    /// Keeps the subtree of the node for `root_key` within two plies of the old root, or
    /// starts afresh.
    fn reuse(&mut self, root_key: u64, search_moves: &[Move]) {
        let restricted = std::mem::replace(&mut self.restricted, !search_moves.is_empty());
        let found = if self.tree.nodes.is_empty() || restricted || !search_moves.is_empty() {
            None
        } else if self.tree.keys[0] == root_key {
            Some(0)
        } else {
            let tree = &self.tree;
            tree.children(0)
                .flat_map(|c| std::iter::once(c).chain(tree.children(c)))
                .find(|&n| tree.keys[n] == root_key)
        };
        match found {
            Some(root) => self.tree = self.tree.compact(root, |_| true),
            None => {
                self.tree.reset(root_key);
            }
        }
        // The root's own game state is the game's, not the tree's.
        let root = &mut self.tree.nodes[0];
        (root.terminal, root.proof) = (None, 0);
    }

    /// Searches `game` (which must have a legal move) until the control says stop, with
    /// the helper threads (`Threads` − 1) on the same tree.
    pub fn search(
        &mut self,
        networks: &Networks,
        game: &Game,
        control: &Control,
        reporter: Reporter<'_>,
    ) -> SearchResult {
        let control = &control.clone().with_soft_scale(self.options.params.soft_time_scale);
        if !self.puct.is_of(&self.options.params) {
            self.puct = Puct::new(&self.options.params);
        }
        let search_moves = &control.search_moves;
        let root_position = game.position().clone();
        self.reuse(key(&root_position), search_moves);
        // A copy (32 KB) that the playouts read while the player itself is busy.
        let puct = &self.puct.clone();
        let setting = Setting { networks, options: self.options, puct, capacity: self.capacity, search_moves };
        self.worker.start(game, &setting);
        playout::prepare_root(&mut self.tree, &setting, &root_position, &mut self.worker);
        let shared = Shared::new(std::mem::take(&mut self.tree), control.nodes());
        let mut helpers = std::mem::take(&mut self.helpers);
        std::thread::scope(|scope| {
            for helper in &mut helpers {
                helper.start(game, &setting);
                let (shared, setting, root) = (&shared, &setting, &root_position);
                scope.spawn(move || shared.help(setting, helper, root));
            }
            self.run(&shared, &setting, &root_position, control, reporter);
            shared.stop();
        });
        self.helpers = helpers;
        let playouts;
        (self.tree, playouts, self.seldepth) = shared.into_parts();
        let best =
            self.tree.final_child(self.options.select).map_or_else(|| root_position.legal_moves()[0], |(m, _)| m);
        let lines = self.report(&self.tree, playouts, control, reporter);
        let first = lines.into_iter().next();
        let score = first.as_ref().map_or(Score::Cp(0), |info| info.score);
        let pv = first.map(|info| info.pv).filter(|pv| pv.first() == Some(&best)).unwrap_or_else(|| vec![best]);
        SearchResult { best, score, depth: pv.len() as u32, pv, nodes: playouts }
    }

    /// The main thread's playouts until the budget is spent: it decides when the search
    /// ends, reports once a second and recycles the tree when it nears its bound.
    fn run(&mut self, shared: &Shared, setting: &Setting<'_>, root: &Chess, control: &Control, reporter: Reporter<'_>) {
        let node_budget = control.nodes();
        let (mut last_report, mut next_settled_check) = (0, SETTLED_CHECK);
        let (mut said_full, mut frozen) = (false, false);
        let mut pending = None;
        for iteration in 0u64.. {
            let clock = iteration % CLOCK_CHECK == 0;
            let mut state = shared.lock();
            if let Some(result) = pending.take() {
                state.backup(&mut self.worker, result);
            }
            let (playouts, started) = (state.playouts, state.started());
            if playouts > 0 {
                let tree = &state.tree;
                let settled = playouts >= next_settled_check && {
                    next_settled_check = playouts + SETTLED_CHECK;
                    settled(tree, playouts, control)
                };
                let budget_spent = (clock && control.soft_expired())
                    || control.stopped()
                    || settled
                    || node_budget.is_some_and(|n| started >= n)
                    || tree.nodes[0].proof != 0
                    || control.depth.is_some_and(|d| frozen || tree.depth_reached(d));
                let hard = control.stopped()
                    || (clock && control.hard_expired())
                    || node_budget.is_some_and(|n| started >= 2 * n);
                let extend = self.options.select == FinalMove::Both && tree.disagree();
                if hard || (budget_spent && !extend) {
                    break;
                }
            }
            if !frozen && state.tree.memory() + self.capacity / 64 > self.capacity {
                state = shared.quiesce(state);
                frozen = !recycle(&mut state.tree, self.capacity);
                state.resume();
                if !said_full {
                    said_full = true;
                    let what =
                        if frozen { "searching on without growing it" } else { "recycling its least visited nodes" };
                    reporter(&Report::String(format!(
                        "MCTS tree full ({} nodes, {} MB, the Hash option): {what}",
                        state.tree.nodes.len(),
                        self.capacity >> 20
                    )));
                }
            }
            if clock && control.elapsed_ms() >= last_report + 1000 {
                last_report = control.elapsed_ms();
                self.seldepth = state.seldepth;
                self.report(&state.tree, playouts, control, reporter);
            }
            pending = Some(shared.descend_and_evaluate(state, setting, &mut self.worker, root));
        }
    }

    /// Reports the best lines of `tree` (`MultiPV`, the final move's first, then by
    /// visits) and returns them.
    fn report(&self, tree: &Tree, playouts: u64, control: &Control, reporter: Reporter<'_>) -> Vec<Info> {
        let lines = self.lines(tree, playouts, control);
        for info in &lines {
            reporter(&Report::Info(info.clone()));
        }
        lines
    }

    /// The best lines: one per visited root child, up to `MultiPV`, the final move's
    /// first, then by visits.
    fn lines(&self, tree: &Tree, playouts: u64, control: &Control) -> Vec<Info> {
        if tree.nodes.is_empty() {
            return Vec::new();
        }
        let first = tree.final_child(self.options.select);
        let mut others: Vec<(Move, usize)> =
            tree.child_moves(0).filter(|&(m, c)| tree.nodes[c].visits > 0 && Some(m) != first.map(|f| f.0)).collect();
        others.sort_by(|a, b| tree.rank(b.1).total_cmp(&tree.rank(a.1)));
        let hashfull = Some(self.hashfull(tree));
        first
            .into_iter()
            .chain(others)
            .take(control.multipv.max(1))
            .enumerate()
            .map(|(line, (m, child))| {
                let pv: Vec<Move> = std::iter::once(m).chain(tree.line_from(child)).collect();
                let score = score_of(&tree.nodes[child]);
                let depth = pv.len() as u32;
                let info = Info::new(depth, self.seldepth as u32, score, playouts, control.elapsed_ms(), pv);
                Info { multipv: line as u32 + 1, hashfull, ..info }
            })
            .collect()
    }
}

/// Cuts back the subtrees of the least visited nodes until the tree takes at most half
/// its bound; false when even that cannot free enough.
fn recycle(tree: &mut Tree, capacity: usize) -> bool {
    let mut threshold = 2;
    while threshold <= tree.nodes[0].visits / 2 {
        let kept = tree.compact(0, |n| n.visits >= threshold);
        if kept.memory() <= capacity / 2 {
            *tree = kept;
            return true;
        }
        threshold *= 2;
    }
    false
}

/// Whether, under a clock, the most visited root move can no longer be overtaken: its
/// lead in visits over the second exceeds the playouts still to come before the soft
/// limit at the rate so far, so the time left is kept for later moves.
fn settled(tree: &Tree, playouts: u64, control: &Control) -> bool {
    let Some((spent, left)) = control.soft_clock() else { return false };
    lead_holds(tree.root_lead(), playouts, spent, left)
}

/// A root child's score for the side to move at the root (who moved into it).
fn score_of(child: &Node) -> Score {
    match child.proof {
        p if p > 0 => Score::Mate((i32::from(p) + 1) / 2),
        p if p < 0 => Score::Mate(-(-i32::from(p) / 2).max(1)),
        _ => {
            let q = child.mean().clamp(0.001, 0.999) as f32;
            Score::Cp(((q / (1.0 - q)).ln() * VALUE_CP_PER_LOGIT) as i32)
        }
    }
}

/// Whether a lead of `lead` visits outlasts the playouts still to come in `left` at the
/// rate of `playouts` in `spent` (never before any time was spent).
fn lead_holds(lead: u32, playouts: u64, spent: Duration, left: Duration) -> bool {
    !spent.is_zero() && f64::from(lead) > playouts as f64 * left.as_secs_f64() / spent.as_secs_f64()
}
