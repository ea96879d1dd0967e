//! Monte Carlo tree search.
//!
//! * `Puct` (the default, as Lc0 and Monty search): a node gets its moves the second
//!   time a playout reaches it, with cheap priors from the captures (SEE and the victim's
//!   value); from 8 visits on (and at the root always) the move predictors' probabilities,
//!   flattened by a softmax temperature (more at the root), replace them. Selection by
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
//! twice the node budget, and then plays the most visited. Under a clock the search ends
//! early once the most visited root move leads the second by more playouts than the time
//! left before the soft limit would bring at the rate so far. The tree is kept between
//! moves: when the new root is a child or grandchild of the old one, its subtree is
//! reused.
//!
//! The tree's memory (nodes and edges) is bounded by the `Hash` option. When a search
//! reaches the bound it says so once and recycles the least visited nodes: nodes below a
//! visit threshold lose their subtrees (keeping their own value) until the tree takes at
//! most half its bound.

mod leaf;
mod params;
mod playout;
mod priors;
mod select;
#[cfg(test)]
mod tests;
mod tree;

use std::time::Duration;

use deepchess_core::arch::VALUE_CP_PER_LOGIT;
use shakmaty::{Move, Position};

pub use leaf::{ROLLOUT_MAX_PLIES, ROLLOUT_QUIET_PLIES};

use super::{Control, Info, Report, Reporter, Score, SearchResult};
use crate::nn::Networks;
use crate::position_history::{Game, key};
use playout::{Setting, Worker};
use tree::{Node, Tree};

/// Memory of a new player's tree in MB (the `Hash` option's default).
const DEFAULT_MEMORY_MB: usize = 16;
/// Playouts between two checks of whether the best root move is settled.
const SETTLED_CHECK: u64 = 256;

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
}

impl Default for MctsOptions {
    fn default() -> Self {
        MctsOptions { leaf: LeafEval::default(), select: FinalMove::default(), c: 1.41 }
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
    /// The playouts' path, keys, leaf evaluation and random generator.
    worker: Worker,
    /// Deepest node a playout of the current search reached, in plies from the root.
    seldepth: usize,
    /// Whether the tree's root was searched under `searchmoves` (its moves restricted).
    restricted: bool,
}

impl Mcts {
    /// A player with a seeded random generator and a tree of at most 16 MB.
    pub fn new(options: MctsOptions, seed: u64) -> Mcts {
        Mcts {
            options,
            tree: Tree::default(),
            capacity: DEFAULT_MEMORY_MB << 20,
            worker: Worker::new(seed),
            seldepth: 0,
            restricted: false,
        }
    }

    /// Bounds the tree to about `megabytes` MB.
    pub fn set_memory(&mut self, megabytes: usize) {
        self.capacity = megabytes.saturating_mul(1 << 20);
    }

    /// Drops the tree.
    pub fn clear(&mut self) {
        self.tree = Tree::default();
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Bytes the tree takes, as counted against its bound.
    pub fn tree_memory(&self) -> usize {
        self.tree.memory()
    }

    /// How full the tree is, in permille of its bound (UCI's `hashfull`).
    fn hashfull(&self) -> u32 {
        (self.tree.memory().saturating_mul(1000) / self.capacity.max(1)).min(1000) as u32
    }

    /// Keeps the subtree of the node for `root_key` within two plies of the old root, or
    /// starts afresh.
    fn reuse(&mut self, root_key: u64, search_moves: &[Move]) {
        let restricted = std::mem::replace(&mut self.restricted, !search_moves.is_empty());
        let found = if self.tree.nodes.is_empty() || restricted || !search_moves.is_empty() {
            None
        } else if self.tree.nodes[0].key == root_key {
            Some(0)
        } else {
            let tree = &self.tree;
            tree.children(0)
                .flat_map(|c| std::iter::once(c).chain(tree.children(c)))
                .find(|&n| tree.nodes[n].key == root_key)
        };
        self.tree = match found {
            Some(root) => self.tree.compact(root, |_| true),
            None => Tree { nodes: vec![Node::new(root_key)], edges: Vec::new() },
        };
        // The root's own game state is the game's, not the tree's.
        let root = &mut self.tree.nodes[0];
        (root.terminal, root.proof) = (None, 0);
    }

    /// Cuts back the subtrees of the least visited nodes until the tree takes at most
    /// half its bound; false when even that cannot free enough.
    fn recycle(&mut self) -> bool {
        let mut threshold = 2;
        while threshold <= self.tree.nodes[0].visits / 2 {
            let tree = self.tree.compact(0, |n| n.visits >= threshold);
            if tree.memory() <= self.capacity / 2 {
                self.tree = tree;
                return true;
            }
            threshold *= 2;
        }
        false
    }

    /// Searches `game` (which must have a legal move) until the control says stop.
    pub fn search(
        &mut self,
        networks: &Networks,
        game: &Game,
        control: &Control,
        reporter: Reporter<'_>,
    ) -> SearchResult {
        let search_moves = &control.search_moves;
        let root_position = game.position().clone();
        self.reuse(key(&root_position), search_moves);
        self.worker.start(game);
        let setting = Setting { networks, options: self.options, capacity: self.capacity, search_moves };
        if !self.tree.nodes[0].expanded {
            let moves = root_position.legal_moves();
            playout::expand(&mut self.tree, &setting, 0, &root_position, search_moves, moves, self.worker.scratch());
        }
        let mut playouts = 0u64;
        let node_budget = control.nodes();
        let (mut last_report, mut next_settled_check) = (0, SETTLED_CHECK);
        let (mut said_full, mut frozen) = (false, false);
        loop {
            if playouts > 0 {
                let settled = playouts >= next_settled_check && {
                    next_settled_check = playouts + SETTLED_CHECK;
                    self.settled(playouts, control)
                };
                let budget_spent = control.soft_expired()
                    || settled
                    || node_budget.is_some_and(|n| playouts >= n)
                    || self.tree.nodes[0].proof != 0
                    || control.depth.is_some_and(|d| frozen || self.depth_reached(d));
                let hard =
                    control.stopped() || control.hard_expired() || node_budget.is_some_and(|n| playouts >= 2 * n);
                let extend = self.options.select == FinalMove::Both && self.disagree();
                if hard || (budget_spent && !extend) {
                    break;
                }
            }
            if !frozen && self.tree.memory() + self.capacity / 64 > self.capacity {
                frozen = !self.recycle();
                if !said_full {
                    said_full = true;
                    let what =
                        if frozen { "searching on without growing it" } else { "recycling its least visited nodes" };
                    reporter(&Report::String(format!(
                        "MCTS tree full ({} nodes, {} MB, the Hash option): {what}",
                        self.tree.nodes.len(),
                        self.capacity >> 20
                    )));
                }
            }
            playout::playout(&mut self.tree, &setting, &mut self.worker, &root_position);
            playouts += 1;
            if control.elapsed_ms() >= last_report + 1000 {
                last_report = control.elapsed_ms();
                self.report(playouts, control, reporter);
            }
        }
        self.seldepth = self.worker.seldepth;
        let best = self.final_child().map_or_else(|| root_position.legal_moves()[0], |(m, _)| m);
        let lines = self.report(playouts, control, reporter);
        let first = lines.into_iter().next();
        let score = first.as_ref().map_or(Score::Cp(0), |info| info.score);
        let pv = first.map(|info| info.pv).filter(|pv| pv.first() == Some(&best)).unwrap_or_else(|| vec![best]);
        SearchResult { best, score, depth: pv.len() as u32, pv, nodes: playouts }
    }

    /// Whether, under a clock, the most visited root move can no longer be overtaken: its
    /// lead in visits over the second exceeds the playouts still to come before the soft
    /// limit at the rate so far, so the time left is kept for later moves.
    fn settled(&self, playouts: u64, control: &Control) -> bool {
        let Some((spent, left)) = control.soft_clock() else { return false };
        let (mut first, mut second) = (0, 0);
        for (_, child) in self.tree.child_moves(0) {
            let visits = self.tree.nodes[child].visits;
            if visits > first {
                (first, second) = (visits, first);
            } else if visits > second {
                second = visits;
            }
        }
        lead_holds(first - second, playouts, spent, left)
    }

    /// Whether the principal variation is `depth` plies long or ends where the game is
    /// decided (a finished game or a proven result), where no playout can lengthen it.
    fn depth_reached(&self, depth: u32) -> bool {
        let (mut node, mut plies) = (0, 0);
        while plies < depth {
            let n = &self.tree.nodes[node];
            if n.terminal.is_some() || (n.proof != 0 && node != 0) {
                return true;
            }
            match self.best_child(node) {
                Some((_, child)) => node = child,
                None => return false,
            }
            plies += 1;
        }
        true
    }

    /// Reports the best lines (`MultiPV`, the final move's first, then by visits) and
    /// returns them.
    fn report(&self, playouts: u64, control: &Control, reporter: Reporter<'_>) -> Vec<Info> {
        let lines = self.lines(playouts, control);
        for info in &lines {
            reporter(&Report::Info(info.clone()));
        }
        lines
    }

    /// The best lines: one per visited root child, up to `MultiPV`, the final move's
    /// first, then by visits.
    fn lines(&self, playouts: u64, control: &Control) -> Vec<Info> {
        if self.tree.nodes.is_empty() {
            return Vec::new();
        }
        let first = self.final_child();
        let mut others: Vec<(Move, usize)> = self
            .tree
            .child_moves(0)
            .filter(|&(m, c)| self.tree.nodes[c].visits > 0 && Some(m) != first.map(|f| f.0))
            .collect();
        others.sort_by(|a, b| self.rank(b.1).total_cmp(&self.rank(a.1)));
        let hashfull = Some(self.hashfull());
        first
            .into_iter()
            .chain(others)
            .take(control.multipv.max(1))
            .enumerate()
            .map(|(line, (m, child))| {
                let pv: Vec<Move> = std::iter::once(m).chain(self.line_from(child)).collect();
                let score = score_of(&self.tree.nodes[child]);
                let depth = pv.len() as u32;
                let info = Info::new(depth, self.seldepth as u32, score, playouts, control.elapsed_ms(), pv);
                Info { multipv: line as u32 + 1, hashfull, ..info }
            })
            .collect()
    }

    /// The best line below `node`.
    fn line_from(&self, mut node: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        while let Some((m, child)) = self.best_child(node) {
            pv.push(m);
            node = child;
        }
        pv
    }

    /// How good a child is to play: a proven win first (the shortest), then by visits and
    /// mean, a proven loss last (the longest).
    fn rank(&self, child: usize) -> f64 {
        let n = &self.tree.nodes[child];
        match n.proof {
            p if p > 0 => 1e12 - f64::from(p),
            p if p < 0 => -1e12 - f64::from(p),
            _ => f64::from(n.visits) + n.mean() * 0.5,
        }
    }

    /// The best visited child of `node` by [`Mcts::rank`], with its move.
    fn best_child(&self, node: usize) -> Option<(Move, usize)> {
        self.tree
            .child_moves(node)
            .filter(|&(_, c)| self.tree.nodes[c].visits > 0)
            .max_by(|a, b| self.rank(a.1).total_cmp(&self.rank(b.1)))
    }

    /// The child of highest mean value (a proven result first).
    fn by_value(&self) -> Option<(Move, usize)> {
        let key = |c: usize| {
            let n = &self.tree.nodes[c];
            if n.proof != 0 { self.rank(c) } else { n.mean() }
        };
        self.tree.child_moves(0).filter(|&(_, c)| self.tree.nodes[c].visits > 0).max_by(|a, b| {
            key(a.1).total_cmp(&key(b.1)).then(self.tree.nodes[a.1].visits.cmp(&self.tree.nodes[b.1].visits))
        })
    }

    fn disagree(&self) -> bool {
        self.best_child(0).map(|c| c.0) != self.by_value().map(|c| c.0)
    }

    fn final_child(&self) -> Option<(Move, usize)> {
        match self.options.select {
            FinalMove::Value => self.by_value(),
            FinalMove::Visits | FinalMove::Both => self.best_child(0),
        }
    }
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
