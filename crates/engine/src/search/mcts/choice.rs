//! What the tree says once searched: how good each child is to play, the best child of a
//! node and its line, the final move, and whether the root's most visited move can still
//! be overtaken.

use shakmaty::Move;

use super::FinalMove;
use super::tree::Tree;

impl Tree {
    /// How good a child is to play: a proven win first (the shortest), then by visits and
    /// mean, a proven loss last (the longest).
    pub fn rank(&self, child: usize) -> f64 {
        let n = &self.nodes[child];
        match n.proof {
            p if p > 0 => 1e12 - f64::from(p),
            p if p < 0 => -1e12 - f64::from(p),
            _ => f64::from(n.visits) + n.mean() * 0.5,
        }
    }

    /// The best visited child of `node` by [`Tree::rank`], with its move.
    pub fn best_child(&self, node: usize) -> Option<(Move, usize)> {
        self.child_moves(node)
            .filter(|&(_, c)| self.nodes[c].visits > 0)
            .max_by(|a, b| self.rank(a.1).total_cmp(&self.rank(b.1)))
    }

    /// The root's child of highest mean value (a proven result first).
    pub fn by_value(&self) -> Option<(Move, usize)> {
        let key = |c: usize| {
            let n = &self.nodes[c];
            if n.proof != 0 { self.rank(c) } else { n.mean() }
        };
        self.child_moves(0)
            .filter(|&(_, c)| self.nodes[c].visits > 0)
            .max_by(|a, b| key(a.1).total_cmp(&key(b.1)).then(self.nodes[a.1].visits.cmp(&self.nodes[b.1].visits)))
    }

    /// Whether the most visited root move and the one of highest mean value differ.
    pub fn disagree(&self) -> bool {
        self.best_child(0).map(|c| c.0) != self.by_value().map(|c| c.0)
    }

    /// The root's child that `select` plays.
    pub fn final_child(&self, select: FinalMove) -> Option<(Move, usize)> {
        match select {
            FinalMove::Value => self.by_value(),
            FinalMove::Visits | FinalMove::Both => self.best_child(0),
        }
    }

    /// The best line below `node`.
    pub fn line_from(&self, mut node: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        while let Some((m, child)) = self.best_child(node) {
            pv.push(m);
            node = child;
        }
        pv
    }

    /// Whether the principal variation is `depth` plies long or ends where the game is
    /// decided (a finished game or a proven result), where no playout can lengthen it.
    pub fn depth_reached(&self, depth: u32) -> bool {
        let (mut node, mut plies) = (0, 0);
        while plies < depth {
            let n = &self.nodes[node];
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

    /// The root's lead in visits: the most visited child's visits less the second's.
    pub fn root_lead(&self) -> u32 {
        let (mut first, mut second) = (0, 0);
        for (_, child) in self.child_moves(0) {
            let visits = self.nodes[child].visits;
            if visits > first {
                (first, second) = (visits, first);
            } else if visits > second {
                second = visits;
            }
        }
        first - second
    }
}
