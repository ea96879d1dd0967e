//! PUCT priors: the move predictors' joint probabilities flattened by a softmax
//! temperature (higher at the root, where exploration pays most), computed once per node;
//! until a node has enough visits for them to pay, cheap priors from the captures.

use shakmaty::{Chess, Move, Role};

use super::params::{ROOT_TEMPERATURE, TREE_TEMPERATURE};
use crate::nn::{Networks, Scratch, softmax};
use crate::search::ordering::move_probabilities;
use crate::search::see::{loses_material, piece_value};

/// Cheap priors (summing to 1): a softmax over quiet moves 0, captures that do not lose
/// material by SEE 1.5 plus the victim's value in units of 4 pawns, losing captures -1,
/// queen promotions 2, under-promotions -4.
pub fn heuristic(position: &Chess, moves: &[Move]) -> Vec<f32> {
    let mut scores: Vec<f32> = moves
        .iter()
        .map(|m| {
            let promotion = match m.promotion() {
                Some(Role::Queen) => 2.0,
                Some(_) => -4.0,
                None => 0.0,
            };
            let capture = match m.capture() {
                Some(_) if loses_material(position, m) => -1.0,
                Some(victim) => 1.5 + piece_value(victim) as f32 / 400.0,
                None => 0.0,
            };
            promotion + capture
        })
        .collect();
    softmax(&mut scores);
    scores
}

/// Priors of `moves` (summing to 1): `p^(1/T)` normalised, `T` the root's or the tree's
/// temperature.
pub fn priors(networks: &Networks, position: &Chess, moves: &[Move], root: bool, scratch: &mut Scratch) -> Vec<f32> {
    let mut p = move_probabilities(&networks.movepred, position, moves, scratch);
    let exponent = 1.0 / if root { ROOT_TEMPERATURE } else { TREE_TEMPERATURE };
    for x in &mut p {
        *x = x.max(1e-9).powf(exponent);
    }
    let total: f32 = p.iter().sum::<f32>().max(f32::MIN_POSITIVE);
    for x in &mut p {
        *x /= total;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Position;

    #[test]
    fn priors_sum_to_one_keep_their_order_and_the_root_is_flatter() {
        let networks = Networks::random(11);
        let position = Chess::default();
        let moves = position.legal_moves();
        let mut scratch = Scratch::default();
        let raw = move_probabilities(&networks.movepred, &position, &moves, &mut scratch);
        let root = priors(&networks, &position, &moves, true, &mut scratch);
        let tree = priors(&networks, &position, &moves, false, &mut scratch);
        for p in [&root, &tree] {
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            for i in 0..moves.len() {
                for j in 0..moves.len() {
                    if raw[i] > raw[j] * 1.0001 {
                        assert!(p[i] >= p[j], "order kept");
                    }
                }
            }
        }
        let top = |p: &[f32]| p.iter().copied().fold(0.0, f32::max);
        assert!(top(&root) <= top(&tree), "the root's priors are flatter");
    }

    #[test]
    fn cheap_priors_put_winning_captures_first_and_losing_ones_last() {
        // A rook takes a free queen (d5), the other a defended pawn (b7: the king a8
        // takes back), or a rook moves quietly.
        let position = crate::position_history::Game::from_uci(Some("k7/1p6/8/3q4/8/8/1R1R4/4K3 w - - 0 1"), &[])
            .unwrap()
            .position()
            .clone();
        let moves = position.legal_moves();
        let p = heuristic(&position, &moves);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        let prior = |uci: &str| p[moves.iter().position(|m| crate::search::uci_move(m) == uci).unwrap()];
        assert!(prior("d2d5") > prior("b2b3") && prior("b2b3") > prior("b2b7"));
        assert_eq!(prior("b2b3"), prior("b2a2"), "quiet moves alike");
    }
}
