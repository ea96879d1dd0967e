//! PUCT priors: the policy net's probabilities over the legal moves, flattened by a
//! softmax temperature (higher at the root, where exploration pays most), computed once
//! per node; until a node has enough visits for them to pay, cheap priors from SEE,
//! checks and threats.

use shakmaty::{Bitboard, Chess, Move, Piece, Position, Role, Square, attacks};

use super::params::{ESCAPE_SCORE, QUIET_CHECK_SCORE, ROOT_TEMPERATURE, TREE_TEMPERATURE};
use crate::nn::{Networks, PolicyScratch, softmax};
use crate::search::ordering::UNDERPROMOTION_FACTOR;
use crate::search::see::{loses_material, piece_value, see_ge};

/// Cheap priors (summing to 1): a softmax over quiet moves 0 ([`QUIET_CHECK_SCORE`] for
/// those that give check directly, [`ESCAPE_SCORE`] for those that take a threatened
/// piece to safety, -1 for those whose piece is lost by SEE on its new square), captures
/// that do not lose material by SEE 1.5 plus the victim's value in units of 4 pawns,
/// losing captures -1, queen promotions 2, under-promotions -4.
pub fn heuristic(position: &Chess, moves: &[Move]) -> Vec<f32> {
    let enemy = EnemyAttacks::of(position);
    let threatened = threatened_pieces(position, &enemy);
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
                None if m.promotion().is_none() && enemy.may_take(m) && !see_ge(position, m, 0) => -1.0,
                None if gives_direct_check(position, m) => QUIET_CHECK_SCORE,
                None if m.promotion().is_none() && m.from().is_some_and(|from| threatened.contains(from)) => {
                    ESCAPE_SCORE
                }
                None => 0.0,
            };
            promotion + capture
        })
        .collect();
    softmax(&mut scores);
    scores
}

/// What the side not to move attacks, found once per node so that most quiet moves and
/// pieces skip the exchange evaluation and the threat test (the same answers, less work).
struct EnemyAttacks {
    /// Squares it attacks.
    all: Bitboard,
    /// Squares its bishops, rooks and queens attack.
    sliders: Bitboard,
}

impl EnemyAttacks {
    fn of(position: &Chess) -> EnemyAttacks {
        let board = position.board();
        let occupied = board.occupied();
        let (mut all, mut sliders) = (Bitboard::EMPTY, Bitboard::EMPTY);
        for square in board.by_color(!position.turn()) {
            let Some(piece) = board.piece_at(square) else { continue };
            let attacked = attacks::attacks(square, piece, occupied);
            all |= attacked;
            if matches!(piece.role, Role::Bishop | Role::Rook | Role::Queen) {
                sliders |= attacked;
            }
        }
        EnemyAttacks { all, sliders }
    }

    /// Whether the piece of quiet move `m` can be taken on its destination: it is
    /// attacked there, or a slider sees the square it leaves (a line it may open).
    fn may_take(&self, m: &Move) -> bool {
        self.all.contains(m.to()) || m.from().is_some_and(|from| self.sliders.contains(from))
    }
}

/// The squares of the side to move's pieces that are [`threatened`], found once per node
/// among those `enemy` attacks.
fn threatened_pieces(position: &Chess, enemy: &EnemyAttacks) -> Bitboard {
    (position.board().by_color(position.turn()) & enemy.all)
        .into_iter()
        .filter(|&sq| threatened(position, sq))
        .collect()
}

/// Whether the piece `m` moves (or promotes to) attacks the enemy king from its
/// destination (discovered checks and castling are not seen).
pub(super) fn gives_direct_check(position: &Chess, m: &Move) -> bool {
    let (Some(from), to) = (m.from(), m.to()) else { return false };
    if m.is_castle() {
        return false;
    }
    let board = position.board();
    let Some(king) = board.king_of(!position.turn()) else { return false };
    let occupied = (board.occupied() ^ Bitboard::from(from)) | Bitboard::from(to);
    let piece = Piece { color: position.turn(), role: m.promotion().unwrap_or(m.role()) };
    attacks::attacks(to, piece, occupied).contains(king)
}

/// Whether the piece of the side to move on `from` (not its king) can be taken with
/// gain: it is attacked by a cheaper piece, or attacked and not defended.
fn threatened(position: &Chess, from: Square) -> bool {
    let board = position.board();
    let Some(piece) = board.piece_at(from) else { return false };
    if piece.role == Role::King {
        return false;
    }
    let occupied = board.occupied();
    let attackers = board.attacks_to(from, !piece.color, occupied);
    if attackers.is_empty() {
        return false;
    }
    let value = piece_value(piece.role);
    attackers.into_iter().any(|a| board.role_at(a).is_some_and(|r| piece_value(r) < value))
        || board.attacks_to(from, piece.color, occupied).is_empty()
}

/// Priors of `moves`, all the legal moves of `position` (summing to 1), from the policy
/// net: `p^(1/T)` normalised, `T` the root's or the tree's temperature, `p` the softmax
/// of the moves' logits (promotions to different pieces share one) with under-promotions
/// scaled down as in move ordering.
pub fn priors(
    networks: &Networks,
    position: &Chess,
    moves: &[Move],
    root: bool,
    scratch: &mut PolicyScratch,
) -> Vec<f32> {
    let mut p = vec![0.0; moves.len()];
    networks.policy.logits(position, moves, &mut p, scratch);
    softmax(&mut p);
    for (x, m) in p.iter_mut().zip(moves) {
        if matches!(m.promotion(), Some(role) if role != Role::Queen) {
            *x *= UNDERPROMOTION_FACTOR;
        }
    }
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

/// `priors` (summing to 1) weighted by `exp(weight · v)` for each move's value logit `v`
/// and normalised again.
pub fn weighted_by_values(priors: &[f32], values: &[f32], weight: f32) -> Vec<f32> {
    let top = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p: Vec<f32> = priors.iter().zip(values).map(|(&p, &v)| p * (weight * (v - top)).exp()).collect();
    let total: f32 = p.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return priors.to_vec();
    }
    for x in &mut p {
        *x /= total;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> Chess {
        crate::position_history::Game::from_uci(Some(fen), &[]).unwrap().position().clone()
    }

    #[test]
    fn priors_sum_to_one_keep_the_policy_nets_order_and_the_root_is_flatter() {
        let networks = Networks::random(11);
        let position = Chess::default();
        let moves = position.legal_moves();
        let mut scratch = PolicyScratch::default();
        let mut raw = vec![0.0; moves.len()];
        networks.policy.logits(&position, &moves, &mut raw, &mut scratch);
        let root = priors(&networks, &position, &moves, true, &mut scratch);
        let tree = priors(&networks, &position, &moves, false, &mut scratch);
        for p in [&root, &tree] {
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            for i in 0..moves.len() {
                for j in 0..moves.len() {
                    if raw[i] > raw[j] + 1e-4 {
                        assert!(p[i] >= p[j], "order kept");
                    }
                }
            }
        }
        let top = |p: &[f32]| p.iter().copied().fold(0.0, f32::max);
        assert!(top(&root) <= top(&tree), "the root's priors are flatter");
    }

    #[test]
    fn under_promotions_are_scaled_down_and_mirrored_positions_get_mirrored_priors() {
        let networks = Networks::random(12);
        let mut scratch = PolicyScratch::default();
        for fen in [
            "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 6 5",
        ] {
            let position = position(fen);
            let mirror = deepchess_core::record::mirrored(&position);
            assert_ne!(position.turn(), mirror.turn());
            let (moves, mirror_moves) = (position.legal_moves(), mirror.legal_moves());
            assert_eq!(moves.len(), mirror_moves.len());
            for root in [true, false] {
                let p = priors(&networks, &position, &moves, root, &mut scratch);
                let q = priors(&networks, &mirror, &mirror_moves, root, &mut scratch);
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5 && (q.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                let temperature = if root { ROOT_TEMPERATURE } else { TREE_TEMPERATURE };
                for (m, &prior) in moves.iter().zip(&p) {
                    let flipped = mirror_moves
                        .iter()
                        .position(|o| {
                            o.from().map(|s| s.flip_vertical()) == m.from()
                                && o.to().flip_vertical() == m.to()
                                && o.promotion() == m.promotion()
                        })
                        .unwrap_or_else(|| panic!("{fen}: no mirror of {m:?}"));
                    assert!(
                        (prior - q[flipped]).abs() < 1e-5 * prior.max(1e-2),
                        "{fen} {m:?}: {prior} against {}",
                        q[flipped]
                    );
                    if matches!(m.promotion(), Some(role) if role != Role::Queen) {
                        let queen = moves
                            .iter()
                            .position(|o| {
                                (o.from(), o.to()) == (m.from(), m.to()) && o.promotion() == Some(Role::Queen)
                            })
                            .expect("a queen promotion beside every other");
                        let expected = p[queen] * UNDERPROMOTION_FACTOR.powf(1.0 / temperature);
                        assert!(
                            (prior - expected).abs() < 1e-5 * expected.max(1e-3),
                            "{m:?}: {prior} against {expected}"
                        );
                    }
                }
            }
            let promotions = moves.iter().filter(|m| m.is_promotion()).count();
            assert_eq!(promotions, if fen.contains("1P6") { 8 } else { 0 });
        }
    }

    #[test]
    fn priors_weighted_by_values_favour_the_better_moves_and_sum_to_one() {
        let priors = [0.5, 0.3, 0.2];
        let values = [-1.0, 0.0, 2.0];
        let p = weighted_by_values(&priors, &values, 0.5);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        for (i, expected) in [0.5 * (-0.5f32).exp(), 0.3, 0.2 * 1f32.exp()].iter().enumerate() {
            let total = 0.5 * (-0.5f32).exp() + 0.3 + 0.2 * 1f32.exp();
            assert!((p[i] - expected / total).abs() < 1e-6, "{p:?}");
        }
        let unweighted = weighted_by_values(&priors, &values, 0.0);
        assert!(unweighted.iter().zip(priors).all(|(a, b)| (a - b).abs() < 1e-6), "{unweighted:?}");
        // Values so far apart that every weight underflows but the best's: still a distribution.
        let p = weighted_by_values(&priors, &[-200.0, -200.0, 200.0], 1.0);
        assert_eq!(p, vec![0.0, 0.0, 1.0]);
    }

    /// The position of `fen` and its cheap priors by UCI move (checked to sum to 1).
    fn cheap_priors_of(fen: &str) -> (Chess, impl Fn(&str) -> f32) {
        let position = position(fen);
        let moves = position.legal_moves();
        let p = heuristic(&position, &moves);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        let prior = move |uci: &str| p[moves.iter().position(|m| crate::search::uci_move(m) == uci).unwrap()];
        (position, prior)
    }

    #[test]
    fn the_enemy_attack_filter_skips_only_what_cannot_be_lost_or_threatened() {
        let (mut checked, mut lost) = (0, 0);
        for game in 0..40 {
            for position in crate::random_games::random_game(100 + game, 80) {
                let enemy = EnemyAttacks::of(&position);
                for m in position.legal_moves().iter().filter(|m| !m.is_capture() && !m.is_promotion()) {
                    checked += 1;
                    if crate::search::see::see(&position, m) < 0 {
                        lost += 1;
                        assert!(
                            enemy.may_take(m),
                            "{m:?} in {}",
                            shakmaty::fen::Fen::from_position(&position, shakmaty::EnPassantMode::Legal)
                        );
                    }
                }
                let all: Bitboard = position
                    .board()
                    .by_color(position.turn())
                    .into_iter()
                    .filter(|&sq| threatened(&position, sq))
                    .collect();
                assert_eq!(threatened_pieces(&position, &enemy), all);
            }
        }
        assert!(checked > 10_000 && lost > 500, "{checked} quiet moves, {lost} lost");
    }

    #[test]
    fn cheap_priors_favour_taking_a_threatened_piece_to_safety() {
        // The knight on c3 is attacked by the pawn on b4, the rook on h1 by nothing.
        let (position, prior) = cheap_priors_of("k7/8/8/8/1p6/2N5/8/4K2R w - - 0 1");
        assert!(prior("c3e4") > prior("h1h2"), "the threatened knight's escape before a quiet rook move");
        assert_eq!(prior("c3e4"), prior("c3d5"));
        assert_eq!(prior("h1h2"), prior("e1d2"), "no threat, no bonus");
        assert!(threatened(&position, Square::C3) && !threatened(&position, Square::H1));
        assert!(!threatened(&position, Square::E1), "the king is not counted");
    }

    #[test]
    fn cheap_priors_put_winning_captures_first_and_losing_ones_last() {
        // A rook takes a free queen (d5), the other a defended pawn (b7: the king a8
        // takes back), or moves quietly: to a safe square (c2, b1, b4), with check to a2 (where
        // the queen would take and be taken by the other rook) or to one the queen takes it
        // on (b3, b5).
        let (_, prior) = cheap_priors_of("k7/1p6/8/3q4/8/8/1R1R4/4K3 w - - 0 1");
        assert!(prior("d2d5") > prior("b2c2") && prior("b2c2") > prior("b2b7"));
        assert!(prior("b2c2") > prior("b2b3"), "a quiet move that loses its piece comes last");
        assert_eq!(prior("b2b3"), prior("b2b7"), "as a losing capture");
        assert!(prior("d2d5") > prior("b2a2") && prior("b2a2") > prior("b2c2"), "a quiet check before quiet moves");
        for safe in ["b2b1", "b2b4", "d2h2"] {
            assert_eq!(prior(safe), prior("b2c2"), "safe quiet moves alike: {safe}");
        }
        assert_eq!(prior("b2b5"), prior("b2b3"), "lost quiet moves alike");
    }
}
