//! Monte Carlo tree search.
//!
//! Selection by UCB1, `Q + c·sqrt(ln N / n)`, expanding one untried move per playout;
//! the new leaf is evaluated by
//! * `Value`: the evaluation net;
//! * `PredictorRollout`: moves sampled from the move predictors' joint distribution until
//!   a quiet position (side to move not in check, last move neither capture nor
//!   promotion; at most [`ROLLOUT_QUIET_PLIES`] plies), then the evaluation net;
//! * `RandomRollout`: uniformly random moves to the end of the game (mate, stalemate,
//!   fifty moves or insufficient material; a draw after [`ROLLOUT_MAX_PLIES`] plies);
//! * `Puct` (beyond the thesis, AlphaZero-style): a node is expanded with all its moves
//!   at once, the predictors' probabilities as priors, selection by
//!   `Q + c·P·sqrt(N)/(1 + n)` and the evaluation net as value.
//!
//! Values are expected scores in [0, 1] from the view of the side that moved into a node
//! and flip at every ply on the way up. The final move is the child with the most
//! visits, the highest mean value, or ("both") the move that is best by both: when the
//! two disagree at the end of the budget the search goes on, up to the hard time limit
//! or twice the node budget, and then plays the most visited. The tree is kept between
//! moves: when the new root is a grandchild or child of the old one, its subtree is
//! reused.
//!
//! The tree's memory (its nodes and their lists of children and untried moves) is bounded
//! (the `Hash` option). When a search reaches the bound it says so once with a message
//! and goes on without growing the tree: playouts end at the first node that would need
//! memory and the evaluation net (or the rollout) judges it there.

use deepchess_core::SparseFeatures;
use deepchess_core::arch::VALUE_CP_PER_LOGIT;
use rand::distr::Distribution;
use rand::distr::weighted::WeightedIndex;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::{Chess, Color, Move, Position};

use super::ordering::move_probabilities;
use super::{Control, Info, Report, Reporter, Score, SearchResult};
use crate::nn::{Networks, Scratch};
use crate::position_history::{Game, KeyStack, is_rule_draw, key, played};

/// Longest predictor rollout before the evaluation net judges the position.
pub const ROLLOUT_QUIET_PLIES: usize = 16;
/// Longest random rollout; a draw beyond.
pub const ROLLOUT_MAX_PLIES: usize = 400;
/// Memory of a new player's tree in MB (the `Hash` option's default).
const DEFAULT_MEMORY_MB: usize = 16;
/// Bytes of a node (its lists counted apart).
const NODE_BYTES: usize = std::mem::size_of::<Node>();
/// Bytes of a child's index in its parent's list of children.
const CHILD_BYTES: usize = std::mem::size_of::<u32>();
/// Bytes of a move in a list of untried moves (UCB1).
const MOVE_BYTES: usize = std::mem::size_of::<Move>();

/// How a new leaf is evaluated (and, for `Puct`, how children are selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LeafEval {
    /// UCB1, evaluation net at the leaf.
    Value,
    /// UCB1, predictor-sampled rollout to a quiet position, then the evaluation net.
    PredictorRollout,
    /// UCB1, uniformly random rollout to the end of the game.
    RandomRollout,
    /// PUCT with predictor priors and the evaluation net.
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
    /// Exploration constant `c`.
    pub c: f32,
}

impl Default for MctsOptions {
    fn default() -> Self {
        MctsOptions { leaf: LeafEval::default(), select: FinalMove::default(), c: 1.41 }
    }
}

#[derive(Clone, Debug)]
struct Node {
    key: u64,
    /// The move into this node (none at the root).
    mv: Option<Move>,
    children: Vec<u32>,
    /// UCB1: legal moves not expanded yet.
    untried: Vec<Move>,
    expanded: bool,
    prior: f32,
    visits: u32,
    /// Sum of results, from the view of the side that moved into this node.
    value: f64,
    /// The result if the game is over here, same view.
    terminal: Option<f32>,
    /// Whether `terminal` is a repetition draw (history dependent: undone on reuse).
    repetition: bool,
}

impl Node {
    fn new(key: u64, mv: Option<Move>, prior: f32) -> Node {
        Node {
            key,
            mv,
            children: Vec::new(),
            untried: Vec::new(),
            expanded: false,
            prior,
            visits: 0,
            value: 0.0,
            terminal: None,
            repetition: false,
        }
    }

    fn mean(&self) -> f64 {
        if self.visits == 0 { 0.0 } else { self.value / f64::from(self.visits) }
    }
}

/// An MCTS player: options, random generator and the tree kept between moves.
#[derive(Clone, Debug)]
pub struct Mcts {
    /// Settings.
    pub options: MctsOptions,
    rng: Xoshiro256PlusPlus,
    tree: Vec<Node>,
    /// Bytes the tree may take.
    capacity: usize,
    /// Bytes the tree takes: nodes, lists of children and of untried moves.
    memory: usize,
    /// Whether a playout of the current search found no room to grow the tree.
    full: bool,
    /// Deepest node a playout of the current search reached, in plies from the root.
    seldepth: usize,
}

impl Mcts {
    /// A player with a seeded random generator and a tree of at most 16 MB.
    pub fn new(options: MctsOptions, seed: u64) -> Mcts {
        Mcts {
            options,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            tree: Vec::new(),
            capacity: DEFAULT_MEMORY_MB << 20,
            memory: 0,
            full: false,
            seldepth: 0,
        }
    }

    /// Bounds the tree to about `megabytes` MB (a larger tree kept from an earlier move
    /// stays but does not grow).
    pub fn set_memory(&mut self, megabytes: usize) {
        self.capacity = megabytes.saturating_mul(1 << 20);
    }

    /// Drops the tree.
    pub fn clear(&mut self) {
        self.tree.clear();
        self.memory = 0;
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.tree.len()
    }

    /// Bytes the tree takes, as counted against its bound.
    pub fn tree_memory(&self) -> usize {
        self.memory
    }

    /// How full the tree is, in permille of its bound (UCI's `hashfull`).
    fn hashfull(&self) -> u32 {
        (self.memory.saturating_mul(1000) / self.capacity.max(1)).min(1000) as u32
    }

    /// Whether `bytes` more fit within the bound.
    fn room_for(&self, bytes: usize) -> bool {
        self.memory.saturating_add(bytes) <= self.capacity
    }

    /// The bytes a node takes with its lists.
    fn node_memory(node: &Node) -> usize {
        NODE_BYTES + node.children.capacity() * CHILD_BYTES + node.untried.capacity() * MOVE_BYTES
    }

    /// Keeps the subtree of the node for `root_key` within two plies of the old root, or
    /// starts afresh.
    fn reuse(&mut self, root_key: u64, search_moves: &[Move]) {
        let found = if self.tree.is_empty() || !search_moves.is_empty() {
            None
        } else if self.tree[0].key == root_key {
            Some(0)
        } else {
            self.tree[0]
                .children
                .iter()
                .flat_map(|&c| std::iter::once(c).chain(self.tree[c as usize].children.iter().copied()))
                .find(|&n| self.tree[n as usize].key == root_key)
        };
        let Some(root) = found else {
            self.tree = vec![Node::new(root_key, None, 1.0)];
            self.memory = NODE_BYTES;
            return;
        };
        let mut old = std::mem::take(&mut self.tree);
        let mut stack = vec![(root, u32::MAX)];
        while let Some((index, parent)) = stack.pop() {
            let mut node = std::mem::replace(&mut old[index as usize], Node::new(0, None, 0.0));
            if node.repetition {
                node.terminal = None;
                node.repetition = false;
                node.expanded = false;
            }
            let children = std::mem::take(&mut node.children);
            node.children.reserve_exact(children.len());
            let new_index = self.tree.len() as u32;
            self.tree.push(node);
            if parent != u32::MAX {
                self.tree[parent as usize].children.push(new_index);
            }
            stack.extend(children.into_iter().rev().map(|c| (c, new_index)));
        }
        self.tree[0].mv = None;
        self.memory = self.tree.iter().map(Mcts::node_memory).sum();
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
        let mut scratch = Scratch::default();
        let mut keys = KeyStack::new(game);
        let mut playouts = 0u64;
        let node_budget = control.nodes();
        let mut last_report = 0;
        let mut said_full = false;
        self.full = false;
        self.seldepth = 0;
        loop {
            if playouts > 0 {
                // A full tree's principal variation may never reach the depth.
                let budget_spent = control.soft_expired()
                    || node_budget.is_some_and(|n| playouts >= n)
                    || control.depth.is_some_and(|d| self.full || self.principal_variation().len() as u32 >= d);
                let hard =
                    control.stopped() || control.hard_expired() || node_budget.is_some_and(|n| playouts >= 2 * n);
                let extend = self.options.select == FinalMove::Both && self.disagree();
                if hard || (budget_spent && !extend) {
                    break;
                }
            }
            self.playout(networks, &root_position, &mut keys, search_moves, &mut scratch);
            playouts += 1;
            if self.full && !said_full {
                said_full = true;
                reporter(&Report::String(format!(
                    "MCTS tree full ({} nodes, {} MB, the Hash option): searching on without growing it",
                    self.tree.len(),
                    self.capacity >> 20
                )));
            }
            if control.elapsed_ms() >= last_report + 1000 {
                last_report = control.elapsed_ms();
                self.report(playouts, control, reporter);
            }
        }
        let best = self.final_child().and_then(|c| self.tree[c].mv).unwrap_or_else(|| root_position.legal_moves()[0]);
        let lines = self.report(playouts, control, reporter);
        let first = lines.into_iter().next();
        let score = first.as_ref().map_or(Score::Cp(0), |info| info.score);
        let pv = first.map(|info| info.pv).filter(|pv| pv.first() == Some(&best)).unwrap_or_else(|| vec![best]);
        SearchResult { best, score, depth: pv.len() as u32, pv, nodes: playouts }
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

    /// The best lines: one per root child with visits, up to `MultiPV`, the final move's
    /// first, then by visits.
    fn lines(&self, playouts: u64, control: &Control) -> Vec<Info> {
        let Some(root) = self.tree.first() else { return Vec::new() };
        let first = self.final_child();
        let mut children: Vec<usize> = root
            .children
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| self.tree[c].visits > 0 && Some(c) != first)
            .collect();
        children.sort_by(|&a, &b| {
            let (a, b) = (&self.tree[a], &self.tree[b]);
            b.visits.cmp(&a.visits).then(b.mean().total_cmp(&a.mean()))
        });
        let hashfull = Some(self.hashfull());
        first
            .into_iter()
            .chain(children)
            .take(control.multipv.max(1))
            .enumerate()
            .map(|(line, child)| {
                let pv: Vec<Move> = self.tree[child].mv.into_iter().chain(self.line_from(child)).collect();
                let score = score_of(&self.tree[child]);
                let depth = pv.len() as u32;
                let info = Info::new(depth, self.seldepth as u32, score, playouts, control.elapsed_ms(), pv);
                Info { multipv: line as u32 + 1, hashfull, ..info }
            })
            .collect()
    }

    /// The most visited line.
    fn principal_variation(&self) -> Vec<Move> {
        self.line_from(0)
    }

    /// The most visited line below `node`.
    fn line_from(&self, mut node: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        while let Some(&child) = self.tree[node].children.iter().max_by_key(|&&c| self.tree[c as usize].visits) {
            let child = child as usize;
            if self.tree[child].visits == 0 {
                break;
            }
            pv.extend(self.tree[child].mv);
            node = child;
        }
        pv
    }

    fn by_visits(&self) -> Option<usize> {
        let children = &self.tree.first()?.children;
        children.iter().map(|&c| c as usize).max_by(|&a, &b| {
            let (a, b) = (&self.tree[a], &self.tree[b]);
            a.visits.cmp(&b.visits).then(a.mean().total_cmp(&b.mean()))
        })
    }

    fn by_value(&self) -> Option<usize> {
        let children = &self.tree.first()?.children;
        children.iter().map(|&c| c as usize).filter(|&c| self.tree[c].visits > 0).max_by(|&a, &b| {
            let (a, b) = (&self.tree[a], &self.tree[b]);
            a.mean().total_cmp(&b.mean()).then(a.visits.cmp(&b.visits))
        })
    }

    fn disagree(&self) -> bool {
        self.by_visits() != self.by_value()
    }

    fn final_child(&self) -> Option<usize> {
        match self.options.select {
            FinalMove::Value => self.by_value(),
            FinalMove::Visits | FinalMove::Both => self.by_visits(),
        }
    }

    /// One selection–expansion–evaluation–backpropagation cycle.
    fn playout(
        &mut self,
        networks: &Networks,
        root: &Chess,
        keys: &mut KeyStack,
        search_moves: &[Move],
        scratch: &mut Scratch,
    ) {
        let mut path = vec![0usize];
        let mut position = root.clone();
        keys.push(key(&position));
        let puct = self.options.leaf == LeafEval::Puct;
        let result = loop {
            let node = *path.last().expect("path starts at the root");
            self.seldepth = self.seldepth.max(path.len() - 1);
            if !self.tree[node].expanded {
                let only = if node == 0 { search_moves } else { &[] };
                if !self.expand(networks, node, &position, keys, only, scratch) {
                    // No room for its moves: the node is judged as a leaf.
                    break None;
                }
                if puct {
                    break self.tree[node].terminal;
                }
            }
            if let Some(result) = self.tree[node].terminal {
                break Some(result);
            }
            if !self.tree[node].untried.is_empty() {
                if self.room_for(NODE_BYTES) {
                    let m = self.tree[node].untried.pop().expect("an untried move");
                    position.play_unchecked(m);
                    let child = self.tree.len();
                    self.tree.push(Node::new(key(&position), Some(m), 0.0));
                    self.memory += NODE_BYTES;
                    self.tree[node].children.push(child as u32);
                    keys.push(key(&position));
                    path.push(child);
                    self.seldepth = self.seldepth.max(path.len() - 1);
                    // A child without room for its own moves is judged as a leaf all the same.
                    self.expand(networks, child, &position, keys, &[], scratch);
                    break self.tree[child].terminal;
                }
                self.full = true;
            }
            if self.tree[node].children.is_empty() {
                break None;
            }
            let child = self.select(node);
            position.play_unchecked(self.tree[child].mv.expect("children have moves"));
            keys.push(key(&position));
            path.push(child);
        };
        // Value for the side that moved into the leaf.
        let mut value = f64::from(result.unwrap_or_else(|| self.evaluate(networks, &position, scratch)));
        for &node in path.iter().rev() {
            let n = &mut self.tree[node];
            n.visits += 1;
            n.value += value;
            value = 1.0 - value;
            keys.pop();
        }
    }

    /// Generates a node's moves (children with priors for PUCT, untried moves for UCB1)
    /// or marks it terminal; false (the node left unexpanded) when its moves do not fit
    /// within the memory bound.
    fn expand(
        &mut self,
        networks: &Networks,
        node: usize,
        position: &Chess,
        keys: &KeyStack,
        only: &[Move],
        scratch: &mut Scratch,
    ) -> bool {
        let mut moves = position.legal_moves();
        if !only.is_empty() {
            moves.retain(|m| only.contains(m));
        }
        if moves.is_empty() {
            // The side that moved in mated (1) or stalemated (draw).
            self.tree[node].expanded = true;
            self.tree[node].terminal = Some(if position.is_check() { 1.0 } else { 0.5 });
            return true;
        }
        if node != 0 && (is_rule_draw(position) || keys.is_repetition(position.halfmoves())) {
            self.tree[node].expanded = true;
            self.tree[node].terminal = Some(0.5);
            self.tree[node].repetition = !is_rule_draw(position);
            return true;
        }
        let puct = self.options.leaf == LeafEval::Puct;
        // PUCT makes every child now; UCB1 keeps the moves and room for their indices.
        let bytes = moves.len() * if puct { NODE_BYTES + CHILD_BYTES } else { MOVE_BYTES + CHILD_BYTES };
        if !self.room_for(bytes) {
            self.full = true;
            return false;
        }
        self.memory += bytes;
        self.tree[node].expanded = true;
        self.tree[node].children.reserve_exact(moves.len());
        if puct {
            let priors = move_probabilities(&networks.movepred, position, &moves, scratch);
            let total: f32 = priors.iter().sum::<f32>().max(f32::MIN_POSITIVE);
            for (m, p) in moves.into_iter().zip(priors) {
                let child = played(position, m);
                let index = self.tree.len() as u32;
                self.tree.push(Node::new(key(&child), Some(m), p / total));
                self.tree[node].children.push(index);
            }
        } else {
            // Popped from the back: the generator's first move is tried first.
            self.tree[node].untried = moves.into_iter().rev().collect();
        }
        true
    }

    fn select(&self, node: usize) -> usize {
        let parent = &self.tree[node];
        let c = f64::from(self.options.c);
        let n = f64::from(parent.visits.max(1));
        let score = |child: &Node| -> f64 {
            match self.options.leaf {
                LeafEval::Puct => {
                    // Unvisited children start a little below the parent's value.
                    let q = if child.visits == 0 { (1.0 - parent.mean() - 0.1).max(0.0) } else { child.mean() };
                    q + c * f64::from(child.prior) * n.sqrt() / (1.0 + f64::from(child.visits))
                }
                _ => child.mean() + c * (n.ln() / f64::from(child.visits.max(1))).sqrt(),
            }
        };
        parent
            .children
            .iter()
            .map(|&i| i as usize)
            .max_by(|&a, &b| score(&self.tree[a]).total_cmp(&score(&self.tree[b])))
            .expect("an expanded, non-terminal node has children")
    }

    /// The leaf's value for the side that moved into it.
    fn evaluate(&mut self, networks: &Networks, position: &Chess, scratch: &mut Scratch) -> f32 {
        let mover = !position.turn();
        match self.options.leaf {
            LeafEval::Value | LeafEval::Puct => white_score(networks, position, mover),
            LeafEval::PredictorRollout => {
                let mut position = position.clone();
                let mut quiet = false;
                for _ in 0..ROLLOUT_QUIET_PLIES {
                    if quiet {
                        break;
                    }
                    let moves = position.legal_moves();
                    if let Some(result) = game_over(&position, moves.is_empty()) {
                        return for_side(result, position.turn(), mover);
                    }
                    let weights = move_probabilities(&networks.movepred, &position, &moves, scratch);
                    let m = match WeightedIndex::new(&weights) {
                        Ok(dist) => moves[dist.sample(&mut self.rng)],
                        Err(_) => moves[self.rng.random_range(0..moves.len())],
                    };
                    quiet = !m.is_capture() && m.promotion().is_none();
                    position.play_unchecked(m);
                    quiet &= !position.is_check();
                }
                let moves = position.legal_moves();
                match game_over(&position, moves.is_empty()) {
                    Some(result) => for_side(result, position.turn(), mover),
                    None => white_score(networks, &position, mover),
                }
            }
            LeafEval::RandomRollout => {
                let mut position = position.clone();
                for _ in 0..ROLLOUT_MAX_PLIES {
                    let moves = position.legal_moves();
                    if let Some(result) = game_over(&position, moves.is_empty()) {
                        return for_side(result, position.turn(), mover);
                    }
                    position.play_unchecked(moves[self.rng.random_range(0..moves.len())]);
                }
                0.5
            }
        }
    }
}

/// The result for the side to move if the game is over: 0 when mated, 0.5 for a draw.
fn game_over(position: &Chess, no_moves: bool) -> Option<f32> {
    if no_moves {
        Some(if position.is_check() { 0.0 } else { 0.5 })
    } else if is_rule_draw(position) {
        Some(0.5)
    } else {
        None
    }
}

/// Converts a result for `to_move` into one for `side`.
fn for_side(result: f32, to_move: Color, side: Color) -> f32 {
    if to_move == side { result } else { 1.0 - result }
}

/// The evaluation net's expected score for `side`.
fn white_score(networks: &Networks, position: &Chess, side: Color) -> f32 {
    let logit = networks.value.evaluate(&SparseFeatures::from_position(position));
    let white = 1.0 / (1.0 + (-logit).exp());
    if side == Color::White { white } else { 1.0 - white }
}

/// A root child's score for the side to move at the root (who moved into it).
fn score_of(child: &Node) -> Score {
    if child.terminal == Some(1.0) && !child.repetition && child.children.is_empty() && child.untried.is_empty() {
        return Score::Mate(1);
    }
    let q = child.mean().clamp(0.001, 0.999) as f32;
    Score::Cp(((q / (1.0 - q)).ln() * VALUE_CP_PER_LOGIT) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Limits;
    use crate::search::uci_move;

    fn run(mcts: &mut Mcts, networks: &Networks, game: &Game, playouts: u64) -> SearchResult {
        let limits = Limits { nodes: Some(playouts), ..Limits::default() };
        let control = Control::new(&limits, game.position().turn(), std::time::Duration::ZERO, Default::default());
        mcts.search(networks, game, &control, &mut |_| {})
    }

    #[test]
    fn every_leaf_evaluation_finds_mate_in_one() {
        let networks = Networks::random(8);
        let game = Game::from_uci(Some("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), &[]).unwrap();
        for leaf in [LeafEval::Value, LeafEval::PredictorRollout, LeafEval::RandomRollout, LeafEval::Puct] {
            for select in [FinalMove::Visits, FinalMove::Value, FinalMove::Both] {
                let mut mcts = Mcts::new(MctsOptions { leaf, select, c: 1.41 }, 1);
                let result = run(&mut mcts, &networks, &game, 400);
                assert_eq!(uci_move(&result.best), "d1d8", "{leaf:?} {select:?}");
            }
        }
    }

    #[test]
    fn tree_is_reused_after_two_plies_and_counts_are_deterministic() {
        let networks = Networks::random(8);
        let mut mcts = Mcts::new(MctsOptions::default(), 7);
        let game = Game::default();
        let first = run(&mut mcts, &networks, &game, 300);
        assert_eq!(first.nodes, 300);
        let reply = first.pv.get(1).copied();
        let mut next = game.clone();
        next.play(first.best);
        let Some(reply) = reply else { return };
        next.play(reply);
        let before = mcts.tree_size();
        mcts.reuse(key(next.position()), &[]);
        let kept = mcts.tree_size();
        assert!(kept > 1 && kept < before, "kept {kept} of {before}");
        assert!(mcts.tree[0].visits > 0);
        // Same seed, same search.
        let again = run(&mut Mcts::new(MctsOptions::default(), 7), &networks, &game, 300);
        assert_eq!(again.best, first.best);
    }

    #[test]
    fn the_tree_stays_within_its_memory_says_so_once_and_the_search_goes_on() {
        let networks = Networks::random(8);
        let game = Game::default();
        // About 380 PUCT expansions or 2,900 UCB1 nodes fill 1 MB.
        for (leaf, playouts) in [(LeafEval::Puct, 1000), (LeafEval::Value, 4000)] {
            let mut mcts = Mcts::new(MctsOptions { leaf, ..MctsOptions::default() }, 3);
            mcts.set_memory(1);
            let limits = Limits { nodes: Some(playouts), ..Limits::default() };
            let control =
                Control::new(&limits, Color::White, std::time::Duration::ZERO, Default::default()).with_multipv(3);
            let (mut messages, mut last) = (Vec::new(), None);
            let result = mcts.search(&networks, &game, &control, &mut |report| match report {
                Report::String(text) => messages.push(text.clone()),
                Report::Info(info) => last = Some(info.clone()),
            });
            assert_eq!(result.nodes, playouts, "{leaf:?}: the search went on to its budget");
            assert!(mcts.tree_memory() <= 1 << 20, "{leaf:?}: {} bytes", mcts.tree_memory());
            let counted: usize = mcts.tree.iter().map(Mcts::node_memory).sum();
            assert!(mcts.tree_memory() >= counted, "{leaf:?}: {} counted, {counted} held", mcts.tree_memory());
            assert_eq!(messages.len(), 1, "{leaf:?}: {messages:?}");
            assert!(messages[0].starts_with("MCTS tree full"), "{}", messages[0]);
            let last = last.expect("a report");
            assert!(last.hashfull.is_some_and(|h| h > 900), "{leaf:?}: {:?}", last.hashfull);
            // With a larger bound the same search never fills the tree.
            let mut roomy = Mcts::new(MctsOptions { leaf, ..MctsOptions::default() }, 3);
            roomy.set_memory(64);
            let mut said = false;
            roomy.search(&networks, &game, &control, &mut |report| said |= matches!(report, Report::String(_)));
            assert!(!said && roomy.tree_memory() > mcts.tree_memory(), "{leaf:?}");
        }
    }

    #[test]
    fn multipv_reports_distinct_root_moves_the_played_one_first() {
        let networks = Networks::random(8);
        let game = Game::default();
        let mut mcts = Mcts::new(MctsOptions::default(), 5);
        let limits = Limits { nodes: Some(300), ..Limits::default() };
        let control =
            Control::new(&limits, Color::White, std::time::Duration::ZERO, Default::default()).with_multipv(3);
        let mut lines = Vec::new();
        let result = mcts.search(&networks, &game, &control, &mut |report| {
            if let Report::Info(info) = report {
                lines.push(info.clone());
            }
        });
        let last: Vec<&Info> = lines.iter().rev().take(3).rev().collect();
        assert_eq!(last.iter().map(|i| i.multipv).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(last[0].pv[0], result.best);
        let firsts: Vec<Move> = last.iter().map(|i| i.pv[0]).collect();
        assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{last:?}");
        assert!(last[0].seldepth >= last[0].depth && last[0].seldepth > 1);
    }
}
