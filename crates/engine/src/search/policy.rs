//! Policy players: a move straight from the move predictors, no search.
//!
//! * **Joint**: the legal move of highest P(piece)·P(square | piece).
//! * **Greedy**: the most probable piece type that has a legal move, then that type's
//!   most probable destination among its legal moves.
//!
//! Promotions are played as queen promotions. When two moves get the same probability
//! (two pieces of one type reaching one square, which the predictors cannot tell apart),
//! the tie is broken by the evaluation net's score of the position after the move (best
//! for the side to move), then by the lower origin square (a1 = 0).

use deepchess_core::FeatureBits;
use deepchess_core::features::role_index;
use shakmaty::{Chess, Color, Move, Position, Role};

use super::ordering::Prediction;
use super::{Score, SearchResult};
use crate::nn::{Networks, Scratch};

/// Which policy player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PolicyMode {
    /// Highest joint probability.
    #[default]
    Joint,
    /// Most probable piece type first, then its most probable square.
    Greedy,
}

/// The policy player's move in `position` (which must have a legal move), restricted to
/// `search_moves` when not empty. The score is the evaluation net's score after the move.
pub fn choose(networks: &Networks, position: &Chess, mode: PolicyMode, search_moves: &[Move]) -> SearchResult {
    let mut scratch = Scratch::default();
    let candidates: Vec<Move> = position
        .legal_moves()
        .into_iter()
        .filter(|m| m.promotion().is_none_or(|r| r == Role::Queen))
        .filter(|m| search_moves.is_empty() || search_moves.contains(m))
        .collect();
    let candidates = if candidates.is_empty() { position.legal_moves().to_vec() } else { candidates };
    let mut prediction = Prediction::new(&networks.movepred, &FeatureBits::from_position(position), &mut scratch);
    let probabilities: Vec<f32> = match mode {
        PolicyMode::Joint => candidates.iter().map(|m| prediction.joint(position, m, &mut scratch)).collect(),
        PolicyMode::Greedy => {
            // The most probable piece type among those that can move; others get -1.
            let piece = candidates
                .iter()
                .map(|m| role_index(m.role()))
                .max_by(|a, b| prediction.piece[*a].total_cmp(&prediction.piece[*b]).then(b.cmp(a)))
                .expect("a legal move");
            candidates
                .iter()
                .map(|m| if role_index(m.role()) == piece { prediction.joint(position, m, &mut scratch) } else { -1.0 })
                .collect()
        }
    };
    let top = probabilities.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let tied: Vec<Move> = candidates.iter().zip(&probabilities).filter(|(_, p)| **p == top).map(|(m, _)| *m).collect();
    let (best, cp) = tied
        .iter()
        .map(|m| (*m, score_after(networks, position, m)))
        .max_by(|(a, sa), (b, sb)| sa.cmp(sb).then(b.from().cmp(&a.from())))
        .expect("a legal move");
    SearchResult { best, score: Score::Cp(cp), pv: vec![best], depth: 0, nodes: tied.len() as u64 }
}

/// The evaluation net's score, in centipawns for the side to move in `position`, of the
/// position after `m`.
fn score_after(networks: &Networks, position: &Chess, m: &Move) -> i32 {
    let mut child = position.clone();
    child.play_unchecked(*m);
    let white = networks.value.evaluate_centipawns(&FeatureBits::from_position(&child));
    if position.turn() == Color::White { white } else { -white }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position_history::Game;

    #[test]
    fn both_modes_play_legal_queen_promotions() {
        let networks = Networks::random(3);
        let game = Game::from_uci(Some("8/P6k/8/8/8/8/8/K7 w - - 0 1"), &[]).unwrap();
        for mode in [PolicyMode::Joint, PolicyMode::Greedy] {
            let result = choose(&networks, game.position(), mode, &[]);
            assert!(game.position().is_legal(result.best));
            assert!(result.best.promotion().is_none_or(|r| r == Role::Queen));
        }
    }

    #[test]
    fn greedy_takes_the_best_square_of_the_likeliest_movable_piece() {
        let networks = Networks::random(4);
        let position = Chess::default();
        let mut scratch = Scratch::default();
        let mut prediction = Prediction::new(&networks.movepred, &FeatureBits::from_position(&position), &mut scratch);
        let result = choose(&networks, &position, PolicyMode::Greedy, &[]);
        // Only pawns and knights can move in the start position.
        let piece = if prediction.piece[0] >= prediction.piece[1] { Role::Pawn } else { Role::Knight };
        assert_eq!(result.best.role(), piece);
        let best_square = position
            .legal_moves()
            .into_iter()
            .filter(|m| m.role() == piece)
            .map(|m| prediction.joint(&position, &m, &mut scratch))
            .fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(prediction.joint(&position, &result.best, &mut scratch), best_square);
        let joint = choose(&networks, &position, PolicyMode::Joint, &[]);
        let top = position
            .legal_moves()
            .into_iter()
            .map(|m| prediction.joint(&position, &m, &mut scratch))
            .fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(prediction.joint(&position, &joint.best, &mut scratch), top);
    }
}
