//! The tree: nodes and their edges in two arenas, the memory they take, proven results
//! and the compaction that keeps a subtree (tree reuse) or recycles the least visited
//! nodes (the memory bound).

use shakmaty::Move;

/// No child node yet (an edge never played in the tree).
pub const NONE: u32 = u32::MAX;
/// Bytes of a node and its key.
pub const NODE_BYTES: usize = std::mem::size_of::<Node>() + std::mem::size_of::<u64>();
/// Bytes of an edge.
pub const EDGE_BYTES: usize = std::mem::size_of::<Edge>();

/// A move out of a node with its prior and, once played, its child.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// The move.
    pub mv: Move,
    /// Its prior probability (PUCT; 0 for UCB1).
    pub prior: f32,
    /// The child node, or [`NONE`].
    pub child: u32,
}

/// How the game ended at a node, for the side that moved into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameEnd {
    /// Drawn (stalemate, a draw by rule or by repetition): 0.5.
    Draw,
    /// The side to move is mated: 1 for the side that moved in.
    Mate,
}

/// Where a node's edge priors come from, in the order a node goes through them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PriorSource {
    /// Cheap priors from SEE, checks and threats (none under UCB1).
    #[default]
    Cheap,
    /// The move predictors' priors mixed with the cheap ones.
    Predicted,
    /// Those weighted by the value of each move's position.
    Weighted,
}

/// A position in the tree (32 bytes; its Zobrist key is kept apart, in [`Tree::keys`]);
/// the default is a fresh, unexpanded node.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Sum of results, from the view of the side that moved into this node.
    value: f64,
    /// `value / visits` (0 before the first visit), kept up to date for selection.
    mean: f64,
    /// Playouts through this node.
    pub visits: u32,
    /// First edge in the tree's edge arena.
    pub first: u32,
    /// Number of edges (0 until expanded or when terminal).
    pub count: u16,
    /// Whether the edges have been generated.
    pub expanded: bool,
    /// Where the edges' priors come from.
    pub priors: PriorSource,
    /// How the game ended here, if it did.
    pub terminal: Option<GameEnd>,
    /// Whether `terminal` is a repetition draw (history dependent: undone on reuse).
    pub repetition: bool,
    /// A proven result for the side that moved into this node: `n > 0` a win (mate
    /// `n` plies from the parent), `n < 0` a loss (mated `-n` plies from the parent).
    pub proof: i16,
}

impl Node {
    /// The result of the finished game here for the side that moved in, if it is over.
    pub fn terminal_result(&self) -> Option<f32> {
        self.terminal.map(|end| match end {
            GameEnd::Draw => 0.5,
            GameEnd::Mate => 1.0,
        })
    }

    /// Mean result from the view of the side that moved in (0 when never visited).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Counts a playout through this node (its result comes with [`Node::add_result`]).
    pub fn add_visit(&mut self) {
        self.visits += 1;
        self.update_mean();
    }

    /// Adds a playout's result, from the view of the side that moved in.
    pub fn add_result(&mut self, result: f64) {
        self.value += result;
        self.update_mean();
    }

    fn update_mean(&mut self) {
        self.mean = if self.visits == 0 { 0.0 } else { self.value / f64::from(self.visits) };
    }
}

/// Nodes and edges; node 0 is the root. Each node's edges are in the move generator's
/// order (selection finds the unvisited one of highest prior as it scores the others).
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Each node's Zobrist key (apart from the nodes, which selection reads, so that more
    /// of them fit in the caches).
    pub keys: Vec<u64>,
    /// The edges, each node's in one run.
    pub edges: Vec<Edge>,
}

impl Tree {
    /// Bytes the tree takes.
    pub fn memory(&self) -> usize {
        self.nodes.len() * NODE_BYTES + self.edges.len() * EDGE_BYTES
    }

    /// Starts the tree afresh with a root of key `key`.
    pub fn reset(&mut self, key: u64) {
        self.clear();
        self.nodes.push(Node::default());
        self.keys.push(key);
    }

    /// The edges of `node`.
    pub fn edges(&self, node: usize) -> &[Edge] {
        let n = &self.nodes[node];
        &self.edges[n.first as usize..n.first as usize + usize::from(n.count)]
    }

    /// The children of `node` that exist, as node indices.
    pub fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges(node).iter().filter(|e| e.child != NONE).map(|e| e.child as usize)
    }

    /// The move into each existing child of `node`.
    pub fn child_moves(&self, node: usize) -> impl Iterator<Item = (Move, usize)> + '_ {
        self.edges(node).iter().filter(|e| e.child != NONE).map(|e| (e.mv, e.child as usize))
    }

    /// Adds a child for edge `edge` of the tree; returns its index.
    pub fn add_child(&mut self, edge: usize, key: u64) -> usize {
        let index = self.nodes.len();
        self.nodes.push(Node::default());
        self.keys.push(key);
        self.edges[edge].child = index as u32;
        index
    }

    /// Gives `node` its edges.
    pub fn expand(&mut self, node: usize, edges: &[Edge]) {
        let first = self.edges.len() as u32;
        let count = edges.len().min(usize::from(u16::MAX)) as u16;
        self.edges.extend_from_slice(&edges[..usize::from(count)]);
        let n = &mut self.nodes[node];
        (n.first, n.count, n.expanded) = (first, count, true);
    }

    /// Gives the edges of `node` new priors (in the edges' order).
    pub fn set_priors(&mut self, node: usize, priors: &[f32]) {
        let first = self.nodes[node].first as usize;
        for (edge, &prior) in self.edges[first..first + priors.len()].iter_mut().zip(priors) {
            edge.prior = prior;
        }
    }

    /// Empties the tree, keeping its memory for the next search.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.keys.clear();
        self.edges.clear();
    }

    /// Updates the proof of `node` from its children: lost when a child is won (the side
    /// to move here mates), won when every move is expanded into a lost child.
    /// Returns whether the proof changed.
    pub fn prove(&mut self, node: usize) -> bool {
        if !self.nodes[node].expanded || self.nodes[node].proof != 0 {
            return false;
        }
        let mut shortest_win = i16::MAX;
        let mut longest_loss = 0i16;
        let mut all_lost = true;
        for edge in self.edges(node) {
            let proof = if edge.child == NONE { 0 } else { self.nodes[edge.child as usize].proof };
            if proof > 0 {
                shortest_win = shortest_win.min(proof);
            } else if proof < 0 {
                longest_loss = longest_loss.max(-proof);
            } else {
                all_lost = false;
            }
        }
        let proof = if shortest_win < i16::MAX {
            -shortest_win.saturating_add(1)
        } else if all_lost && self.nodes[node].count > 0 {
            longest_loss.saturating_add(1)
        } else {
            return false;
        };
        self.nodes[node].proof = proof;
        true
    }

    /// The tree made of `root`'s subtree, with every node for which `keep` is false cut
    /// back to an unexpanded leaf (its visits, value and proof kept: proofs rest on mates
    /// alone); repetition draws are undone (history dependent).
    pub fn compact(&self, root: usize, keep: impl Fn(&Node) -> bool) -> Tree {
        let mut tree = Tree {
            nodes: Vec::with_capacity(self.nodes.len()),
            keys: Vec::with_capacity(self.nodes.len()),
            edges: Vec::new(),
        };
        // (old node, new node)
        let mut stack = vec![(root, 0usize)];
        tree.nodes.push(self.nodes[root].clone());
        tree.keys.push(self.keys[root]);
        while let Some((old, new)) = stack.pop() {
            let mut node = self.nodes[old].clone();
            if node.repetition {
                (node.terminal, node.repetition, node.proof) = (None, false, 0);
            }
            if !node.expanded || !keep(&node) || node.terminal.is_some() {
                (node.expanded, node.count, node.first) = (false, 0, 0);
                tree.nodes[new] = node;
                continue;
            }
            node.first = tree.edges.len() as u32;
            for edge in self.edges(old) {
                let mut copy = *edge;
                if edge.child != NONE {
                    copy.child = tree.nodes.len() as u32;
                    stack.push((edge.child as usize, tree.nodes.len()));
                    tree.nodes.push(self.nodes[edge.child as usize].clone());
                    tree.keys.push(self.keys[edge.child as usize]);
                }
                tree.edges.push(copy);
            }
            tree.nodes[new] = node;
        }
        tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_takes_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
        assert_eq!(NODE_BYTES, 40, "with its key");
    }
}
