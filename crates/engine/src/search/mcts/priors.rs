//! PUCT priors: the move predictors' probabilities over the legal moves, flattened by a
//! softmax temperature (higher at the root, where exploration pays most), computed once
//! per node; until a node has enough visits for them to pay, cheap priors from SEE,
//! checks and threats.

use deepchess_core::FeatureBits;
use deepchess_core::features::role_index;
use deepchess_core::move_label::label_destination;
use shakmaty::{Bitboard, Chess, Move, Piece, Position, Role, Square, attacks};

use super::params::Params;
use crate::nn::{MovePredictor, Networks, PredictorAccumulator, Scratch, softmax};
use crate::search::ordering::UNDERPROMOTION_FACTOR;
use crate::search::see::{loses_material, piece_value, see_ge};

/// Cheap priors (summing to 1): a softmax over quiet moves 0 (`quiet_check_score` for
/// those that give check directly, `escape_score` for those that take a threatened
/// piece to safety, -1 for those whose piece is lost by SEE on its new square), captures
/// that do not lose material by SEE 1.5 plus the victim's value in units of 4 pawns,
/// losing captures -1, queen promotions 2, under-promotions -4.
pub fn heuristic(position: &Chess, moves: &[Move], params: &Params) -> Vec<f32> {
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
                None if gives_direct_check(position, m) => params.quiet_check_score as f32,
                None if m.promotion().is_none() && m.from().is_some_and(|from| threatened.contains(from)) => {
                    params.escape_score as f32
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

/// The move predictors' first-layer accumulators a worker updates the next one from: the
/// search root's and the last one computed (a position near either differs from it in a
/// few pieces).
#[derive(Clone, Debug, Default)]
pub struct PredictorBases {
    root: Option<PredictorAccumulator>,
    last: Option<PredictorAccumulator>,
    spare: Option<PredictorAccumulator>,
}

impl PredictorBases {
    /// Starts a search of `root`.
    pub fn start(&mut self, predictor: &MovePredictor, root: &Chess) {
        self.root = Some(predictor.accumulator(&FeatureBits::from_position(root)));
    }

    /// The accumulator of `position`, updated from the nearer base (from scratch where
    /// both differ in more features than the position has).
    pub fn accumulator(&mut self, predictor: &MovePredictor, position: &Chess) -> &PredictorAccumulator {
        let features = FeatureBits::from_position(position);
        let distance = |a: &Option<PredictorAccumulator>| a.as_ref().map_or(usize::MAX, |a| a.distance(&features));
        let base = if distance(&self.root) <= distance(&self.last) { &self.root } else { &self.last };
        let next = match (base, self.spare.take()) {
            (Some(base), Some(mut out)) => {
                predictor.update(base, &features, &mut out);
                out
            }
            (Some(base), None) => {
                let mut out = base.clone();
                predictor.update(base, &features, &mut out);
                out
            }
            (None, _) => predictor.accumulator(&features),
        };
        self.spare = self.last.replace(next);
        self.last.as_ref().expect("just set")
    }
}

/// Priors of `moves`, all the legal moves of `position` (summing to 1), from the move
/// predictors' `accumulator` of `position`: `p^(1/T)` normalised, `T` the `temperature`
/// (the root's or the tree's), `p` from [`legal_probabilities`].
pub fn priors(
    networks: &Networks,
    position: &Chess,
    moves: &[Move],
    temperature: f32,
    accumulator: &PredictorAccumulator,
    scratch: &mut Scratch,
) -> Vec<f32> {
    let mut p = legal_probabilities(&networks.movepred, position, moves, accumulator, scratch);
    let exponent = 1.0 / temperature;
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

/// P(piece type)·P(destination | piece type) of each of `moves`, the legal moves of
/// `position` (`accumulator` its predictors' first layer), the destinations' softmax
/// taken over that piece type's legal destinations only (as policy nets mask illegal
/// moves): the square predictors compute the logits of those squares alone, a fraction
/// of their 64 outputs. Under-promotions are scaled down as in move ordering.
pub fn legal_probabilities(
    predictor: &MovePredictor,
    position: &Chess,
    moves: &[Move],
    accumulator: &PredictorAccumulator,
    scratch: &mut Scratch,
) -> Vec<f32> {
    let piece = predictor.piece_probabilities(accumulator, scratch);
    let turn = position.turn();
    let labels: Vec<(usize, usize)> = moves
        .iter()
        .map(|m| (role_index(m.role()), label_destination(m, turn).expect("standard chess has no drops") as usize))
        .collect();
    let mut p = vec![0.0; moves.len()];
    let (mut squares, mut logits, mut by_square) = ([0usize; 64], [0f32; 64], [0f32; 64]);
    for (kind, &piece_p) in piece.iter().enumerate() {
        let mut seen = 0u64;
        let mut n = 0;
        for &(k, square) in &labels {
            if k == kind && seen & (1 << square) == 0 {
                seen |= 1 << square;
                squares[n] = square;
                n += 1;
            }
        }
        if n == 0 {
            continue;
        }
        predictor.square_logits(kind, accumulator, &squares[..n], &mut logits[..n], scratch);
        softmax(&mut logits[..n]);
        for (&square, &q) in squares[..n].iter().zip(&logits[..n]) {
            by_square[square] = q;
        }
        for (x, &(k, square)) in p.iter_mut().zip(&labels) {
            if k == kind {
                *x = piece_p * by_square[square];
            }
        }
    }
    for (x, m) in p.iter_mut().zip(moves) {
        if matches!(m.promotion(), Some(role) if role != Role::Queen) {
            *x *= UNDERPROMOTION_FACTOR;
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_probabilities_are_the_predictors_renormalised_over_legal_destinations() {
        let networks = Networks::random(11);
        let predictor = &networks.movepred;
        let mut scratch = Scratch::default();
        // Promotions (four moves to one square), a capture, a king, two rooks able to
        // reach one square.
        for fen in
            ["r3k3/1P6/8/8/8/8/8/R3K2R w KQq - 0 1", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]
        {
            let position = crate::position_history::Game::from_uci(Some(fen), &[]).unwrap().position().clone();
            let moves = position.legal_moves();
            let accumulator = predictor.accumulator(&FeatureBits::from_position(&position));
            let p = legal_probabilities(predictor, &position, &moves, &accumulator, &mut scratch);
            let piece = predictor.piece_probabilities(&accumulator, &mut scratch);
            for (m, &got) in moves.iter().zip(&p) {
                let kind = role_index(m.role());
                let full = predictor.square_probabilities(kind, &accumulator, &mut scratch);
                let mut legal = 0u64;
                for other in moves.iter().filter(|o| role_index(o.role()) == kind) {
                    legal |= 1 << label_destination(other, position.turn()).unwrap() as usize;
                }
                let mass: f32 = (0..64).filter(|s| legal & (1 << s) != 0).map(|s| full[s]).sum();
                let square = label_destination(m, position.turn()).unwrap() as usize;
                let factor =
                    if matches!(m.promotion(), Some(r) if r != Role::Queen) { UNDERPROMOTION_FACTOR } else { 1.0 };
                let expected = piece[kind] * full[square] / mass * factor;
                assert!((got - expected).abs() < 1e-5 * expected.max(1.0), "{fen} {m:?}: {got} against {expected}");
            }
        }
    }

    #[test]
    fn priors_sum_to_one_keep_their_order_and_the_root_is_flatter() {
        let networks = Networks::random(11);
        let position = Chess::default();
        let moves = position.legal_moves();
        let mut scratch = Scratch::default();
        let accumulator = networks.movepred.accumulator(&FeatureBits::from_position(&position));
        let raw = legal_probabilities(&networks.movepred, &position, &moves, &accumulator, &mut scratch);
        let (root_temperature, tree_temperature) = (1.6, 1.3);
        let root = priors(&networks, &position, &moves, root_temperature, &accumulator, &mut scratch);
        let tree = priors(&networks, &position, &moves, tree_temperature, &accumulator, &mut scratch);
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
        let position = crate::position_history::Game::from_uci(Some(fen), &[]).unwrap().position().clone();
        let moves = position.legal_moves();
        let p = heuristic(&position, &moves, &Params::DEFAULT);
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
