//! Child selection: PUCT as Lc0 and Monty do it (priors, first-play urgency at the
//! parent's value, exploration growing with the parent's visits, root and tree constants
//! apart) and UCB1 for the
//! thesis's variants. Proven results steer it: a won child is taken at once, a lost one
//! only when nothing else is left.

use std::sync::LazyLock;

use super::params::{C_ROOT, C_SCALE, C_TREE};
use super::tree::{NONE, Tree};

/// Parent visits below which the exploration term comes from [`EXPLORATION`] instead of
/// a logarithm and a square root at every selection.
const TABLED_VISITS: usize = 4096;

/// The PUCT exploration term `c·(1 + ln((N + B)/B))·sqrt(N)` of `N` parent visits, for
/// the root's and the tree's `c`: the same value, bit for bit, whether tabled or not.
fn exploration(base: f64, visits: f64) -> f64 {
    base * (1.0 + ((visits + C_SCALE) / C_SCALE).ln()) * visits.sqrt()
}

/// [`exploration`] for the tree's `c` at parent visits below [`TABLED_VISITS`].
static EXPLORATION: LazyLock<Vec<f64>> =
    LazyLock::new(|| (0..TABLED_VISITS).map(|n| exploration(C_TREE, n as f64)).collect());

/// The edge of `node` to follow: by PUCT when `puct`, else by UCB1 with constant `c`
/// (every untried move first, in the generator's order).
pub fn select(tree: &Tree, node: usize, root: bool, puct: bool, c: f64) -> usize {
    let parent = &tree.nodes[node];
    let first = parent.first as usize;
    let edges = tree.edges(node);
    let n = f64::from(parent.visits.max(1));
    let (explore, fpu) = if puct {
        let visits = parent.visits.max(1) as usize;
        let explore = match EXPLORATION.get(visits) {
            Some(&tabled) if !root => tabled,
            _ => exploration(if root { C_ROOT } else { C_TREE }, n),
        };
        // First-play urgency: an unvisited child is worth the parent's value for the side
        // to move there (who moves into the children).
        (explore, if parent.visits == 0 { 0.5 } else { 1.0 - parent.mean() })
    } else {
        (c * n.ln().sqrt(), 0.0)
    };
    let (mut best, mut best_score) = (0, f64::NEG_INFINITY);
    // The unvisited edge of highest prior (the first of equal ones), for which
    // `fpu + explore·P/(1 + 0)` is highest among the unvisited: scored once, after the loop.
    let (mut unvisited, mut unvisited_prior) = (None, f32::NEG_INFINITY);
    for (i, edge) in edges.iter().enumerate() {
        if edge.child == NONE {
            if !puct {
                // UCB1 tries every move once first.
                return first + i;
            }
            if edge.prior > unvisited_prior {
                (unvisited, unvisited_prior) = (Some(i), edge.prior);
            }
            continue;
        }
        let child = &tree.nodes[edge.child as usize];
        if child.proof > 0 {
            return first + i;
        }
        let q = if child.visits == 0 { fpu } else { child.mean() };
        // Lost children only when nothing else is left.
        let q = if child.proof < 0 { q - 1e6 } else { q };
        let visits = f64::from(child.visits);
        let score = if puct {
            q + explore * f64::from(edge.prior) / (1.0 + visits)
        } else {
            q + explore / visits.max(1.0).sqrt()
        };
        if score > best_score {
            (best, best_score) = (i, score);
        }
    }
    if let Some(i) = unvisited
        && fpu + explore * f64::from(unvisited_prior) > best_score
    {
        best = i;
    }
    first + best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unvisited_edge_of_highest_prior_is_taken_unless_a_visited_one_scores_more() {
        use shakmaty::{Chess, Move, Position};

        use crate::search::mcts::tree::Edge;
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().take(4).collect();
        let mut tree = Tree::default();
        tree.reset(0);
        let priors = [0.1, 0.4, 0.1, 0.4];
        let edges: Vec<Edge> = moves.iter().zip(priors).map(|(&mv, prior)| Edge { mv, prior, child: NONE }).collect();
        tree.expand(0, &edges);
        tree.nodes[0].add_visit();
        tree.nodes[0].add_result(0.5);
        // Nothing visited: the first of the two highest priors.
        assert_eq!(select(&tree, 0, false, true, 0.0), 1);
        // It is visited and did badly: the other one of prior 0.4 comes next.
        let child = tree.add_child(1, 1);
        tree.nodes[child].add_visit();
        tree.nodes[0].add_visit();
        assert_eq!(select(&tree, 0, false, true, 0.0), 3);
        // A visited child that did well scores more than any unvisited one.
        tree.nodes[child].add_result(1.0);
        tree.nodes[0].add_result(0.0);
        assert_eq!(select(&tree, 0, false, true, 0.0), 1);
    }

    #[test]
    fn the_tabled_exploration_is_the_computed_one_bit_for_bit() {
        for visits in [1usize, 2, 7, 100, 1000, TABLED_VISITS - 1] {
            assert_eq!(EXPLORATION[visits].to_bits(), exploration(C_TREE, visits as f64).to_bits(), "{visits}");
        }
        assert!(exploration(C_TREE, 100.0) > exploration(C_TREE, 10.0));
    }
}
