//! Child selection: PUCT as Lc0 and Monty do it (priors, first-play urgency at the
//! parent's value, exploration growing with the parent's visits, root and tree constants
//! apart) and UCB1 for the
//! thesis's variants. Proven results steer it: a won child is taken at once, a lost one
//! only when nothing else is left.

use super::params::Params;
use super::tree::{NONE, Tree};

/// Parent visits below which the exploration term comes from a table instead of a
/// logarithm and a square root at every selection.
const TABLED_VISITS: usize = 4096;

/// The PUCT exploration term `c·(1 + ln((N + B)/B))·sqrt(N)` of `N` parent visits with
/// scale `B`: the same value, bit for bit, whether tabled or not.
fn exploration(base: f64, scale: f64, visits: f64) -> f64 {
    base * (1.0 + ((visits + scale) / scale).ln()) * visits.sqrt()
}

/// PUCT's constants from [`Params`], the tree's exploration term tabled for parent visits
/// below [`TABLED_VISITS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Puct {
    c_root: f64,
    c_tree: f64,
    c_scale: f64,
    fpu_reduction: f64,
    tabled: Vec<f64>,
}

impl Puct {
    /// The constants of `params`.
    pub fn new(params: &Params) -> Puct {
        let (c_tree, c_scale) = (params.c_tree, params.c_scale);
        Puct {
            c_root: params.c_root,
            c_tree,
            c_scale,
            fpu_reduction: params.fpu_reduction,
            tabled: (0..TABLED_VISITS).map(|n| exploration(c_tree, c_scale, n as f64)).collect(),
        }
    }

    /// Whether these are the constants of `params`.
    pub fn is_of(&self, params: &Params) -> bool {
        (self.c_root, self.c_tree, self.c_scale, self.fpu_reduction)
            == (params.c_root, params.c_tree, params.c_scale, params.fpu_reduction)
    }

    /// The exploration term at a node of `visits` (at least 1) visits.
    fn exploration(&self, root: bool, visits: u32) -> f64 {
        match self.tabled.get(visits as usize) {
            Some(&tabled) if !root => tabled,
            _ => exploration(if root { self.c_root } else { self.c_tree }, self.c_scale, f64::from(visits)),
        }
    }
}

/// How children are selected.
#[derive(Clone, Copy)]
pub enum Rule<'a> {
    /// PUCT with these constants.
    Puct(&'a Puct),
    /// UCB1 with this constant `c`.
    Ucb1(f64),
}

/// The edge of `node` to follow by `rule` (under UCB1 every untried move first, in the
/// generator's order).
pub fn select(tree: &Tree, node: usize, root: bool, rule: Rule<'_>) -> usize {
    let parent = &tree.nodes[node];
    let first = parent.first as usize;
    let edges = tree.edges(node);
    let visits = parent.visits.max(1);
    let puct = matches!(rule, Rule::Puct(_));
    let (explore, fpu) = match rule {
        // First-play urgency: an unvisited child is worth the parent's value for the side
        // to move there (who moves into the children), less the reduction.
        Rule::Puct(constants) => (
            constants.exploration(root, visits),
            if parent.visits == 0 { 0.5 } else { 1.0 - parent.mean() } - constants.fpu_reduction,
        ),
        Rule::Ucb1(c) => (c * f64::from(visits).ln().sqrt(), 0.0),
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
        let puct = Puct::new(&Params::DEFAULT);
        let mut tree = Tree::default();
        tree.reset(0);
        let priors = [0.1, 0.4, 0.1, 0.4];
        let edges: Vec<Edge> = moves.iter().zip(priors).map(|(&mv, prior)| Edge { mv, prior, child: NONE }).collect();
        tree.expand(0, &edges);
        tree.nodes[0].add_visit();
        tree.nodes[0].add_result(0.5);
        // Nothing visited: the first of the two highest priors.
        assert_eq!(select(&tree, 0, false, Rule::Puct(&puct)), 1);
        // It is visited and did badly: the other one of prior 0.4 comes next.
        let child = tree.add_child(1, 1);
        tree.nodes[child].add_visit();
        tree.nodes[0].add_visit();
        assert_eq!(select(&tree, 0, false, Rule::Puct(&puct)), 3);
        // A visited child that did well scores more than any unvisited one.
        tree.nodes[child].add_result(1.0);
        tree.nodes[0].add_result(0.0);
        assert_eq!(select(&tree, 0, false, Rule::Puct(&puct)), 1);
    }

    #[test]
    fn the_tabled_exploration_is_the_computed_one_bit_for_bit() {
        let puct = Puct::new(&Params::DEFAULT);
        for visits in [1u32, 2, 7, 100, 1000, TABLED_VISITS as u32 - 1] {
            let computed = exploration(Params::DEFAULT.c_tree, Params::DEFAULT.c_scale, f64::from(visits));
            assert_eq!(puct.exploration(false, visits).to_bits(), computed.to_bits(), "{visits}");
        }
        assert!(puct.exploration(false, 100) > puct.exploration(false, 10));
        assert!(puct.exploration(true, 100) > puct.exploration(false, 100), "the root explores more");
        assert!(puct.is_of(&Params::DEFAULT) && !puct.is_of(&Params { c_root: 1.0, ..Params::DEFAULT }));
    }
}
