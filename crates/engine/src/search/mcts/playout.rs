//! One playout in two halves around the leaf's evaluation: [`descend`] (selection and
//! expansion) counts the playout's visit on every node of its path on the way down (a
//! virtual loss for the other threads on the tree until the result comes back),
//! [`finish`] evaluates the leaf, [`backup`] adds the result along the path. Threads
//! share the tree through [`super::shared`]; one thread searches as with the visits
//! counted at the end.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use shakmaty::{Chess, Move, MoveList, Position};

use super::leaf::{self, Resolver};
use super::params::Params;
use super::priors::{self, PredictorBases};
use super::select::{Puct, Rule, select};
use super::tree::{EDGE_BYTES, Edge, GameEnd, NODE_BYTES, NONE, PriorSource, Tree};
use super::{LeafEval, MctsOptions};
use crate::nn::{Networks, Scratch};
use crate::position_history::{Game, KeyStack, is_rule_draw, key_after, played};

/// The playouts' state: the path, the keys on the way to its node (draw detection), the
/// leaf evaluation's and the priors' state and the random generator (rollouts).
#[derive(Clone, Debug)]
pub struct Worker {
    /// The current playout's path of nodes from the root.
    pub path: Vec<usize>,
    keys: KeyStack,
    resolver: Resolver,
    bases: PredictorBases,
    scratch: Scratch,
    rng: Xoshiro256PlusPlus,
    /// Deepest node a playout of the current search reached, in plies from the root.
    pub seldepth: usize,
}

impl Worker {
    /// A worker whose rollouts draw from `seed`.
    pub fn new(seed: u64) -> Worker {
        Worker {
            path: Vec::new(),
            keys: KeyStack::new(&Game::default()),
            resolver: Resolver::default(),
            bases: PredictorBases::default(),
            scratch: Scratch::default(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            seldepth: 0,
        }
    }

    /// Prepares a search of `game`: its history for draw detection, the predictors' first
    /// layer at its position (under PUCT), the capture search's depth, no depth reached yet.
    pub fn start(&mut self, game: &Game, setting: &Setting<'_>) {
        self.keys = KeyStack::new(game);
        self.seldepth = 0;
        self.resolver.set_plies(setting.options.params.resolve_plies as usize);
        if setting.options.leaf == LeafEval::Puct {
            self.bases.start(&setting.networks.movepred, game.position());
        }
    }

    /// The move predictors' priors of `moves` in `position` at softmax `temperature`.
    fn priors(&mut self, networks: &Networks, position: &Chess, moves: &[Move], temperature: f64) -> Vec<f32> {
        let accumulator = self.bases.accumulator(&networks.movepred, position);
        priors::priors(networks, position, moves, temperature as f32, accumulator, &mut self.scratch)
    }

    /// The search root's priors of `moves`: the move predictors' at the root's temperature,
    /// each weighted by `exp(value_prior_weight · v)` ([`Worker::move_values`]).
    fn root_priors(&mut self, networks: &Networks, position: &Chess, moves: &[Move], params: &Params) -> Vec<f32> {
        let predicted = self.priors(networks, position, moves, params.root_temperature);
        let values = self.move_values(networks, position, moves);
        priors::weighted_by_values(&predicted, &values, params.value_prior_weight as f32)
    }

    /// The leaf evaluation's logit of the position after each of `moves`, for the side
    /// that plays it (one capture search per move).
    fn move_values(&mut self, networks: &Networks, position: &Chess, moves: &[Move]) -> Vec<f32> {
        moves.iter().map(|&m| -self.resolver.logit(networks, &played(position, m), None)).collect()
    }
}

/// What the search settles for every playout.
#[derive(Clone, Copy)]
pub struct Setting<'a> {
    /// The networks.
    pub networks: &'a Networks,
    /// The search's options.
    pub options: MctsOptions,
    /// PUCT's constants, from `options.params`.
    pub puct: &'a Puct,
    /// Bytes the tree may take.
    pub capacity: usize,
    /// The root's moves under `searchmoves` (empty: all).
    pub search_moves: &'a [Move],
}

/// How a descent ends.
pub enum Leaf {
    /// The result for the side that moved into the path's last node, known without an
    /// evaluation (a finished game, a proven result).
    Known(f32),
    /// The path's last position needs the leaf evaluation.
    Evaluate,
    /// The path's last node is new: whether its game is over is found with the leaf
    /// evaluation (without the tree's lock), and marked in the tree by [`backup`].
    New,
}

/// How the game ends at a node: the result for the side that moved in, whether by mate,
/// whether by repetition (history dependent: undone when the tree is reused).
#[derive(Clone, Copy, Debug)]
pub struct Ending {
    result: f32,
    mate: bool,
    repetition: bool,
}

/// What a playout brings back: its result for the side that moved into the leaf and, for
/// a new leaf whose game is over, how it ended.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    result: f32,
    ending: Option<Ending>,
}

/// The result of a descent's leaf for the side that moved into it.
pub fn finish(setting: &Setting<'_>, worker: &mut Worker, position: &Chess, leaf: Leaf) -> Outcome {
    let result = match leaf {
        Leaf::Known(result) => result,
        Leaf::Evaluate => 1.0 - leaf_value(setting, worker, position, None),
        Leaf::New => match ending(position, &worker.keys) {
            Err(ending) => return Outcome { result: ending.result, ending: Some(ending) },
            Ok(moves) => 1.0 - leaf_value(setting, worker, position, Some(&moves)),
        },
    };
    Outcome { result, ending: None }
}

/// How a descent stops: at its leaf, or at a node that needs work done without the
/// tree's lock before the descent goes on ([`go_on`] with what [`prepare`] made).
pub enum Step {
    /// The leaf is reached.
    Leaf(Leaf),
    /// The path's last node needs work.
    Need(Need),
}

/// Work a node needs before the descent goes on through it.
pub enum Need {
    /// Its edges (it is to be expanded).
    Edges,
    /// The move predictors' priors of these moves (it has the visits for them).
    Priors(Vec<Move>),
    /// The values of these moves' positions (it has the visits for them).
    Values(Vec<Move>),
}

/// Work for the path's last node done without the tree's lock.
pub enum Prepared {
    /// Its edges: legal moves with cheap priors, or how its game ended.
    Edges(Result<Vec<Edge>, Ending>),
    /// The move predictors' priors of its edges.
    Priors(Vec<f32>),
    /// The leaf evaluation's logits of its edges' positions ([`Worker::move_values`]).
    Values(Vec<f32>),
}

/// Starts a descent from the root: the path holds the root alone.
pub fn descend(tree: &mut Tree, setting: &Setting<'_>, worker: &mut Worker, position: &mut Chess) -> Step {
    worker.path.clear();
    worker.path.push(0);
    worker.keys.push(tree.keys[0]);
    go_on(tree, setting, worker, position, None)
}

/// Does what the path's last node needs (`position`), without the tree's lock.
pub fn prepare(need: Need, setting: &Setting<'_>, worker: &mut Worker, position: &Chess) -> Prepared {
    match need {
        Need::Edges => Prepared::Edges(ending(position, &worker.keys).map(|moves| {
            let priors = match setting.options.leaf {
                LeafEval::Puct => priors::heuristic(position, &moves, &setting.options.params),
                _ => vec![0.0; moves.len()],
            };
            edges(&moves, &priors)
        })),
        Need::Priors(moves) => {
            Prepared::Priors(worker.priors(setting.networks, position, &moves, setting.options.params.tree_temperature))
        }
        Need::Values(moves) => Prepared::Values(worker.move_values(setting.networks, position, &moves)),
    }
}

/// Selects and expands from the path's last node (`position`) down to a leaf, leaving
/// `position` at it and the path in the worker; every node of the path gets the playout's
/// visit. Stops early ([`Step::Need`]) where a node needs work that is
/// done without the tree's lock, then goes on with it (`prepared`), unless another thread
/// did it meanwhile.
pub fn go_on(
    tree: &mut Tree,
    setting: &Setting<'_>,
    worker: &mut Worker,
    position: &mut Chess,
    mut prepared: Option<Prepared>,
) -> Step {
    let path = &mut worker.path;
    let puct = setting.options.leaf == LeafEval::Puct;
    let params = &setting.options.params;
    let rule = if puct { Rule::Puct(setting.puct) } else { Rule::Ucb1(f64::from(setting.options.c)) };
    let mut node = *path.last().expect("a path holds the root");
    let leaf = loop {
        let n = &tree.nodes[node];
        if n.proof != 0 {
            break Leaf::Known(if n.proof > 0 { 1.0 } else { 0.0 });
        }
        if let Some(result) = n.terminal_result() {
            break Leaf::Known(result);
        }
        if !n.expanded {
            if n.visits == 0 {
                break Leaf::New;
            }
            match prepared.take() {
                Some(Prepared::Edges(Err(ending))) => {
                    mark(tree, node, ending);
                    break Leaf::Known(ending.result);
                }
                Some(Prepared::Edges(Ok(edges))) => {
                    if !install_edges(tree, setting, node, &edges, PriorSource::Cheap) {
                        break Leaf::Evaluate;
                    }
                }
                _ => return Step::Need(Need::Edges),
            }
        }
        let visits = f64::from(tree.nodes[node].visits);
        if puct && tree.nodes[node].priors == PriorSource::Cheap && visits >= params.prior_visits {
            match prepared.take() {
                Some(Prepared::Priors(priors)) => install_priors(tree, node, &priors, params.cheap_prior_share as f32),
                _ => return Step::Need(Need::Priors(tree.edges(node).iter().map(|e| e.mv).collect())),
            }
        }
        if puct && tree.nodes[node].priors == PriorSource::Predicted && visits >= params.value_prior_visits {
            match prepared.take() {
                Some(Prepared::Values(values)) => {
                    install_values(tree, node, &values, params.node_value_prior_weight as f32)
                }
                _ => return Step::Need(Need::Values(tree.edges(node).iter().map(|e| e.mv).collect())),
            }
        }
        prepared = None;
        let edge = select(tree, node, node == 0, rule);
        let Edge { mv, child, .. } = tree.edges[edge];
        let child = if child == NONE {
            if tree.memory() + NODE_BYTES > setting.capacity {
                break Leaf::Evaluate;
            }
            let parent = position.clone();
            position.play_unchecked(mv);
            let child_key = key_after(&parent, tree.keys[node], mv, position);
            tree.add_child(edge, child_key)
        } else {
            position.play_unchecked(mv);
            child as usize
        };
        tree.nodes[node].add_visit();
        worker.keys.push(tree.keys[child]);
        path.push(child);
        node = child;
    };
    tree.nodes[node].add_visit();
    worker.seldepth = worker.seldepth.max(path.len() - 1);
    Step::Leaf(leaf)
}

/// Adds the playout's result along its path (its visits were counted on the way down),
/// proves what the leaf's proof decides, and leaves the worker's keys at the game's.
pub fn backup(tree: &mut Tree, worker: &mut Worker, outcome: Outcome) {
    let path = &worker.path;
    let leaf = *path.last().expect("a path holds the root");
    if let Some(ending) = outcome.ending {
        mark(tree, leaf, ending);
    }
    let mut value = f64::from(outcome.result);
    for &node in path.iter().rev() {
        tree.nodes[node].add_result(value);
        value = 1.0 - value;
    }
    if tree.nodes[leaf].proof != 0 {
        for &node in path.iter().rev().skip(1) {
            if !tree.prove(node) {
                break;
            }
        }
    }
    for _ in path {
        worker.keys.pop();
    }
}

/// How the game ends in `position` (mate, stalemate, a draw by rule or repetition) as
/// the error; else its legal moves.
fn ending(position: &Chess, keys: &KeyStack) -> Result<MoveList, Ending> {
    let moves = position.legal_moves();
    let (result, mate, repetition) = if moves.is_empty() {
        if position.is_check() { (1.0, true, false) } else { (0.5, false, false) }
    } else if is_rule_draw(position) {
        (0.5, false, false)
    } else if keys.is_repetition(position.halfmoves()) {
        (0.5, false, true)
    } else {
        return Ok(moves);
    };
    Err(Ending { result, mate, repetition })
}

/// Marks `node` as a finished game.
fn mark(tree: &mut Tree, node: usize, ending: Ending) {
    let n = &mut tree.nodes[node];
    n.terminal = Some(if ending.mate { GameEnd::Mate } else { GameEnd::Draw });
    n.repetition = ending.repetition;
    if ending.mate {
        n.proof = 1;
    }
}

/// The leaf's value for the side to move (`moves`: its legal moves, when known).
fn leaf_value(setting: &Setting<'_>, worker: &mut Worker, position: &Chess, moves: Option<&[Move]>) -> f32 {
    let networks = setting.networks;
    match setting.options.leaf {
        LeafEval::Puct => worker.resolver.value(networks, position, moves),
        LeafEval::Value => leaf::net_value(networks, position),
        LeafEval::PredictorRollout => leaf::predictor_rollout(networks, position, &mut worker.rng, &mut worker.scratch),
        LeafEval::RandomRollout => leaf::random_rollout(position, &mut worker.rng),
    }
}

/// Gives the root its edges (its legal moves, those of `searchmoves` when given) with the
/// root's priors under PUCT ([`Worker::root_priors`]); a root kept from the last search
/// keeps its edges and gets the root's priors in place of those it had as a node below.
pub fn prepare_root(tree: &mut Tree, setting: &Setting<'_>, position: &Chess, worker: &mut Worker) {
    let puct = setting.options.leaf == LeafEval::Puct;
    if tree.nodes[0].expanded {
        if puct {
            let moves: Vec<Move> = tree.edges(0).iter().map(|e| e.mv).collect();
            let priors = worker.root_priors(setting.networks, position, &moves, &setting.options.params);
            tree.set_priors(0, &priors);
            tree.nodes[0].priors = PriorSource::Weighted;
        }
        return;
    }
    let mut moves = position.legal_moves();
    if !setting.search_moves.is_empty() {
        moves.retain(|m| setting.search_moves.contains(m));
    }
    let priors = if puct {
        worker.root_priors(setting.networks, position, &moves, &setting.options.params)
    } else {
        vec![0.0; moves.len()]
    };
    let source = if puct { PriorSource::Weighted } else { PriorSource::Cheap };
    install_edges(tree, setting, 0, &edges(&moves, &priors), source);
}

/// Unplayed edges for `moves` with their priors.
fn edges(moves: &[Move], priors: &[f32]) -> Vec<Edge> {
    moves.iter().zip(priors).map(|(&mv, &prior)| Edge { mv, prior, child: NONE }).collect()
}

/// Gives `node` its edges, their priors from `source`; false (the node left unexpanded)
/// when they do not fit within the memory bound (the root's always do).
fn install_edges(tree: &mut Tree, setting: &Setting<'_>, node: usize, edges: &[Edge], source: PriorSource) -> bool {
    if tree.memory() + edges.len() * EDGE_BYTES > setting.capacity && node != 0 {
        return false;
    }
    tree.expand(node, edges);
    tree.nodes[node].priors = source;
    true
}

/// Gives `node` the move predictors' priors [`prepare`] made for its edges, mixed with
/// the cheap capture priors the edges have until then (a share `cheap_share`), unless
/// another thread already did.
fn install_priors(tree: &mut Tree, node: usize, priors: &[f32], cheap_share: f32) {
    if tree.nodes[node].priors != PriorSource::Cheap {
        return;
    }
    let mixed: Vec<f32> = tree
        .edges(node)
        .iter()
        .zip(priors)
        .map(|(edge, &p)| (1.0 - cheap_share) * p + cheap_share * edge.prior)
        .collect();
    tree.set_priors(node, &mixed);
    tree.nodes[node].priors = PriorSource::Predicted;
}

/// Weights the priors of `node` by `exp(weight · v)` for the logits `values` [`prepare`]
/// made for its edges, unless another thread already did.
fn install_values(tree: &mut Tree, node: usize, values: &[f32], weight: f32) {
    if tree.nodes[node].priors != PriorSource::Predicted {
        return;
    }
    let current: Vec<f32> = tree.edges(node).iter().map(|e| e.prior).collect();
    tree.set_priors(node, &priors::weighted_by_values(&current, values, weight));
    tree.nodes[node].priors = PriorSource::Weighted;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_predictors_priors_keep_a_share_of_the_cheap_ones_once() {
        let position = Chess::default();
        let moves: Vec<Move> = position.legal_moves().into_iter().take(3).collect();
        let mut tree = Tree::default();
        tree.reset(0);
        tree.expand(0, &edges(&moves, &[0.6, 0.3, 0.1]));
        let (s, weight) = (0.5, 1.0);
        install_priors(&mut tree, 0, &[0.1, 0.2, 0.7], s);
        let expected = [(1.0 - s) * 0.1 + s * 0.6, (1.0 - s) * 0.2 + s * 0.3, (1.0 - s) * 0.7 + s * 0.1];
        let priors: Vec<f32> = tree.edges(0).iter().map(|e| e.prior).collect();
        for (edge, (&m, &p)) in tree.edges(0).iter().zip(moves.iter().zip(&expected)) {
            assert_eq!(edge.mv, m, "the generator's order");
            assert!((edge.prior - p).abs() < 1e-6, "{priors:?}");
        }
        assert_eq!(tree.nodes[0].priors, PriorSource::Predicted);
        install_priors(&mut tree, 0, &[1.0, 0.0, 0.0], s);
        assert_eq!(tree.edges(0).iter().map(|e| e.prior).collect::<Vec<_>>(), priors, "only once");
        // Then weighted by the values of the moves' positions, once.
        let values = [0.0, 2.0, -1.0];
        install_values(&mut tree, 0, &values, weight);
        let weighted: Vec<f32> = tree.edges(0).iter().map(|e| e.prior).collect();
        assert_eq!(weighted, priors::weighted_by_values(&priors, &values, weight));
        assert_eq!(tree.nodes[0].priors, PriorSource::Weighted);
        install_values(&mut tree, 0, &[5.0, 0.0, 0.0], weight);
        assert_eq!(tree.edges(0).iter().map(|e| e.prior).collect::<Vec<_>>(), weighted, "only once");
    }
}
