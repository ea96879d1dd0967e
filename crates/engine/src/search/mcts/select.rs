//! Child selection: PUCT as Lc0 and Monty do it (priors, first-play urgency at the
//! parent's value, exploration growing with the parent's visits, root and tree constants
//! apart) and UCB1 for the
//! thesis's variants. Proven results steer it: a won child is taken at once, a lost one
//! only when nothing else is left.

use super::params::{C_ROOT, C_SCALE, C_TREE};
use super::tree::{NONE, Tree};

/// The edge of `node` to follow: by PUCT when `puct`, else by UCB1 with constant `c`
/// (every untried move first, in the generator's order).
pub fn select(tree: &Tree, node: usize, root: bool, puct: bool, c: f64) -> usize {
    let parent = &tree.nodes[node];
    let first = parent.first as usize;
    let edges = tree.edges(node);
    let n = f64::from(parent.visits.max(1));
    let (explore, fpu) = if puct {
        let base = if root { C_ROOT } else { C_TREE };
        let explore = base * (1.0 + ((n + C_SCALE) / C_SCALE).ln()) * n.sqrt();
        // First-play urgency: an unvisited child is worth the parent's value for the side
        // to move there (who moves into the children).
        (explore, if parent.visits == 0 { 0.5 } else { 1.0 - parent.mean() })
    } else {
        (c * n.ln().sqrt(), 0.0)
    };
    let (mut best, mut best_score) = (0, f64::NEG_INFINITY);
    let mut unvisited_scored = false;
    for (i, edge) in edges.iter().enumerate() {
        let score = if edge.child == NONE {
            if !puct {
                // UCB1 tries every move once first.
                return first + i;
            }
            // Unvisited: `fpu + explore·P/(1 + 0)` without the division. The edges are
            // ordered by prior, so the first unvisited one scores highest of them.
            if unvisited_scored {
                continue;
            }
            unvisited_scored = true;
            fpu + explore * f64::from(edge.prior)
        } else {
            let child = &tree.nodes[edge.child as usize];
            if child.proof > 0 {
                return first + i;
            }
            let q = if child.visits == 0 { fpu } else { child.mean() };
            // Lost children only when nothing else is left.
            let q = if child.proof < 0 { q - 1e6 } else { q };
            let visits = f64::from(child.visits);
            if puct {
                q + explore * f64::from(edge.prior) / (1.0 + visits)
            } else {
                q + explore / visits.max(1.0).sqrt()
            }
        };
        if score > best_score {
            (best, best_score) = (i, score);
        }
    }
    first + best
}
