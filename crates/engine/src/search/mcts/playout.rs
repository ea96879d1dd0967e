//! One playout in two halves around the leaf's evaluation: [`descend`] (selection and
//! expansion) counts the playout's visit on every node of its path on the way down,
//! [`finish`] evaluates the leaf, [`backup`] adds the result along the path. (Counting the
//! visits on the way down was made for a shared tree searched by several threads with a
//! virtual loss; two threads played worse than one, docs/engine.md, and were removed. The
//! search is the same as with the visits counted at the end.)

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use shakmaty::{Chess, Move, MoveList, Position};

use super::leaf::{self, Resolver};
use super::params::PRIOR_VISITS;
use super::priors;
use super::select::select;
use super::tree::{EDGE_BYTES, Edge, NODE_BYTES, NONE, Tree};
use super::{LeafEval, MctsOptions};
use crate::nn::{Networks, Scratch};
use crate::position_history::{Game, KeyStack, is_rule_draw, key_after};

/// The playouts' state: the path, the keys on the way to its node (draw detection), the
/// leaf evaluation's state and the random generator (rollouts).
#[derive(Clone, Debug)]
pub struct Worker {
    /// The current playout's path of nodes from the root.
    pub path: Vec<usize>,
    keys: KeyStack,
    resolver: Resolver,
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
            scratch: Scratch::default(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            seldepth: 0,
        }
    }

    /// Prepares a search of `game`: its history for draw detection, no depth reached yet.
    pub fn start(&mut self, game: &Game) {
        self.keys = KeyStack::new(game);
        self.seldepth = 0;
    }

    /// The scratch space of the move predictors (the root's priors).
    pub fn scratch(&mut self) -> &mut Scratch {
        &mut self.scratch
    }
}

/// What the search settles for every playout.
#[derive(Clone, Copy)]
pub struct Setting<'a> {
    /// The networks.
    pub networks: &'a Networks,
    /// The search's options.
    pub options: MctsOptions,
    /// Bytes the tree may take.
    pub capacity: usize,
    /// The root's moves under `searchmoves` (empty: all).
    pub search_moves: &'a [Move],
}

/// How a descent ends. (Returned once per playout and consumed at once: the move list
/// stays inline rather than costing an allocation per leaf.)
#[allow(clippy::large_enum_variant)]
pub enum Leaf {
    /// The result for the side that moved into the path's last node, known without an
    /// evaluation (a finished game, a proven result).
    Known(f32),
    /// The path's last position needs the leaf evaluation (its legal moves when known).
    Evaluate(Option<MoveList>),
}

/// Runs a whole playout from `root`.
pub fn playout(tree: &mut Tree, setting: &Setting<'_>, worker: &mut Worker, root: &Chess) {
    let mut position = root.clone();
    let leaf = descend(tree, setting, worker, &mut position);
    let result = finish(setting, worker, &position, leaf);
    backup(tree, worker, result);
}

/// The result of a descent's leaf for the side that moved into it.
pub fn finish(setting: &Setting<'_>, worker: &mut Worker, position: &Chess, leaf: Leaf) -> f32 {
    match leaf {
        Leaf::Known(result) => result,
        Leaf::Evaluate(moves) => 1.0 - leaf_value(setting, worker, position, moves),
    }
}

/// Selects and expands from the root down to a leaf, leaving `position` at it and the
/// path in the worker; every node of the path gets the playout's visit.
pub fn descend(tree: &mut Tree, setting: &Setting<'_>, worker: &mut Worker, position: &mut Chess) -> Leaf {
    let path = &mut worker.path;
    path.clear();
    path.push(0);
    worker.keys.push(tree.nodes[0].key);
    let puct = setting.options.leaf == LeafEval::Puct;
    let mut node = 0;
    let leaf = loop {
        let n = &tree.nodes[node];
        if n.proof != 0 {
            break Leaf::Known(if n.proof > 0 { 1.0 } else { 0.0 });
        }
        if let Some(result) = n.terminal {
            break Leaf::Known(result);
        }
        if !n.expanded {
            let first_visit = n.visits == 0;
            let moves = if node == 0 {
                position.legal_moves()
            } else {
                match game_over(tree, node, position, &worker.keys) {
                    Err(result) => break Leaf::Known(result),
                    Ok(moves) if first_visit => break Leaf::Evaluate(Some(moves)),
                    Ok(moves) => moves,
                }
            };
            let only = if node == 0 { setting.search_moves } else { &[] };
            if !expand(tree, setting, node, position, only, moves.clone(), &mut worker.scratch) {
                break Leaf::Evaluate(Some(moves));
            }
        }
        if puct && !tree.nodes[node].predicted && tree.nodes[node].visits >= PRIOR_VISITS {
            predict(tree, setting.networks, node, position, &mut worker.scratch);
        }
        let edge = select(tree, node, node == 0, puct, f64::from(setting.options.c));
        let Edge { mv, child, .. } = tree.edges[edge];
        let child = if child == NONE {
            if tree.memory() + NODE_BYTES > setting.capacity {
                break Leaf::Evaluate(None);
            }
            let parent = position.clone();
            position.play_unchecked(mv);
            let child_key = key_after(&parent, tree.nodes[node].key, mv, position);
            tree.add_child(edge, child_key)
        } else {
            position.play_unchecked(mv);
            child as usize
        };
        tree.nodes[node].visits += 1;
        worker.keys.push(tree.nodes[child].key);
        path.push(child);
        node = child;
    };
    tree.nodes[node].visits += 1;
    worker.seldepth = worker.seldepth.max(path.len() - 1);
    leaf
}

/// Adds the playout's result along its path (its visits were counted on the way down),
/// proves what the leaf's proof decides, and leaves the worker's keys at the game's.
pub fn backup(tree: &mut Tree, worker: &mut Worker, result: f32) {
    let path = &worker.path;
    let mut value = f64::from(result);
    for &node in path.iter().rev() {
        tree.nodes[node].value += value;
        value = 1.0 - value;
    }
    let leaf = *path.last().expect("a path holds the root");
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

/// Marks a node whose game is over (mate, stalemate, a draw by rule or repetition) and
/// returns its result for the side that moved in as the error; else its legal moves.
fn game_over(tree: &mut Tree, node: usize, position: &Chess, keys: &KeyStack) -> Result<MoveList, f32> {
    let n = &mut tree.nodes[node];
    let moves = position.legal_moves();
    let result = if moves.is_empty() {
        if position.is_check() {
            n.proof = 1;
            1.0
        } else {
            0.5
        }
    } else if is_rule_draw(position) {
        0.5
    } else if keys.is_repetition(position.halfmoves()) {
        n.repetition = true;
        0.5
    } else {
        return Ok(moves);
    };
    n.terminal = Some(result);
    Err(result)
}

/// The leaf's value for the side to move (`moves`: its legal moves, when known).
fn leaf_value(setting: &Setting<'_>, worker: &mut Worker, position: &Chess, moves: Option<MoveList>) -> f32 {
    let networks = setting.networks;
    match setting.options.leaf {
        LeafEval::Puct => worker.resolver.value(networks, position, moves),
        LeafEval::Value => leaf::net_value(networks, position),
        LeafEval::PredictorRollout => leaf::predictor_rollout(networks, position, &mut worker.rng, &mut worker.scratch),
        LeafEval::RandomRollout => leaf::random_rollout(position, &mut worker.rng),
    }
}

/// Gives a node its edges (with priors under PUCT: the predictors' at the root, cheap ones
/// elsewhere); false (the node left unexpanded) when they do not fit within the memory
/// bound.
pub fn expand(
    tree: &mut Tree,
    setting: &Setting<'_>,
    node: usize,
    position: &Chess,
    only: &[Move],
    mut moves: MoveList,
    scratch: &mut Scratch,
) -> bool {
    if !only.is_empty() {
        moves.retain(|m| only.contains(m));
    }
    if tree.memory() + moves.len() * EDGE_BYTES > setting.capacity && node != 0 {
        return false;
    }
    let predicted = node == 0;
    let priors = match setting.options.leaf {
        LeafEval::Puct if predicted => priors::priors(setting.networks, position, &moves, true, scratch),
        LeafEval::Puct => priors::heuristic(position, &moves),
        _ => vec![0.0; moves.len()],
    };
    tree.expand(node, moves.into_iter().zip(priors).map(|(mv, prior)| Edge { mv, prior, child: NONE }));
    tree.nodes[node].predicted = predicted;
    true
}

/// Replaces a node's cheap priors by the move predictors' once it has the visits.
fn predict(tree: &mut Tree, networks: &Networks, node: usize, position: &Chess, scratch: &mut Scratch) {
    let moves: Vec<Move> = tree.edges(node).iter().map(|e| e.mv).collect();
    let priors = priors::priors(networks, position, &moves, node == 0, scratch);
    let first = tree.nodes[node].first as usize;
    for (edge, prior) in tree.edges[first..first + moves.len()].iter_mut().zip(priors) {
        edge.prior = prior;
    }
    tree.nodes[node].predicted = true;
}
