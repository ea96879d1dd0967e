//! Time management between iterations: how much of the soft time limit an
//! iterative-deepening search should use, from how stable its best move is, how its
//! score moves and what share of the root's nodes the best move took.

use shakmaty::Move;

/// Soft-limit factor by the number of iterations the best move has stayed the same.
const STABILITY_FACTORS: [f64; 5] = [2.0, 1.3, 1.0, 0.9, 0.8];
/// Largest score drop (centipawns, against the previous iteration) that still adds time.
const MAX_DROP: i32 = 60;
/// Extra time per centipawn of score drop.
const DROP_FACTOR: f64 = 1.0 / 100.0;
/// Bounds of the soft-limit factor.
const SCALE_BOUNDS: (f64, f64) = (0.4, 2.5);

/// What the completed iterations so far say about the position.
#[derive(Clone, Debug, Default)]
pub struct TimeManager {
    best: Option<Move>,
    stable: usize,
    score: Option<i32>,
    scale: f64,
}

impl TimeManager {
    /// Takes in a completed iteration: its best move and score (centipawns, side to
    /// move's view) and the share of the root's nodes spent below the best move (0..=1).
    /// Returns the factor for the soft time limit.
    pub fn update(&mut self, best: Move, score: i32, best_node_share: f64) -> f64 {
        self.stable = if self.best == Some(best) { self.stable + 1 } else { 0 };
        self.best = Some(best);
        let drop = self.score.map_or(0, |previous| (previous - score).clamp(0, MAX_DROP));
        self.score = Some(score);
        let stability = STABILITY_FACTORS[self.stable.min(STABILITY_FACTORS.len() - 1)];
        let falling = 1.0 + f64::from(drop) * DROP_FACTOR;
        let dominance = (1.5 - best_node_share.clamp(0.0, 1.0)) * 1.35;
        self.scale = (stability * falling * dominance).clamp(SCALE_BOUNDS.0, SCALE_BOUNDS.1);
        self.scale
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Position};

    use super::*;

    #[test]
    fn a_stable_dominant_move_shortens_and_a_changing_falling_one_lengthens() {
        let moves = Chess::default().legal_moves();
        let mut stable = TimeManager::default();
        let mut scales = Vec::new();
        for _ in 0..6 {
            scales.push(stable.update(moves[0], 20, 0.9));
        }
        assert!(scales.windows(2).all(|w| w[1] <= w[0]), "{scales:?}");
        assert!(*scales.last().unwrap() < 1.0, "{scales:?}");
        let mut unstable = TimeManager::default();
        unstable.update(moves[0], 20, 0.5);
        let changed = unstable.update(moves[1], -40, 0.3);
        assert!(changed > 2.0 && changed <= SCALE_BOUNDS.1, "{changed}");
    }
}
