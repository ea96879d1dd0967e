//! Leaf values, as the expected score of the side to move:
//! * the evaluation net after a short capture search ([`Resolver`]): captures and
//!   promotions that do not lose material by SEE (at the leaf itself quiet direct checks
//!   too), the side to move standing pat on the net's score, all evasions when in check
//!   (mate found); so that a leaf in the middle of an exchange is judged when the exchange
//!   is over, and a mate in one is seen;
//! * rollouts for the thesis's UCB1 variants: moves sampled from the move predictors
//!   until a quiet position, or uniformly random moves to the end of the game.

use deepchess_core::FeatureBits;
use rand::RngExt;
use rand::distr::Distribution;
use rand::distr::weighted::WeightedIndex;
use rand::rngs::Xoshiro256PlusPlus;
use shakmaty::{Chess, Move, MoveList, Position, Role};

use crate::nn::{Accumulator, Networks, Scratch};
use crate::position_history::{is_rule_draw, played};
use crate::search::ordering::{move_probabilities, mvv_lva};
use crate::search::see::loses_material;

use super::params::Params;
use super::priors::gives_direct_check;

/// Longest predictor rollout before the evaluation net judges the position.
pub const ROLLOUT_QUIET_PLIES: usize = 16;
/// Longest random rollout; a draw beyond.
pub const ROLLOUT_MAX_PLIES: usize = 400;
/// Logit of being mated (an expected score of about 0).
const MATED: f32 = -30.0;

/// The capture search's accumulators and move lists, one per ply, kept between leaves.
#[derive(Clone, Debug)]
pub struct Resolver {
    stack: Vec<Accumulator>,
    moves: Vec<Vec<Move>>,
    /// Deepest ply of the capture search (`resolve_plies`).
    plies: usize,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver::new(Params::DEFAULT.resolve_plies as usize)
    }
}

impl Resolver {
    /// A capture search at most `plies` deep.
    pub fn new(plies: usize) -> Resolver {
        Resolver { stack: Vec::new(), moves: Vec::new(), plies }
    }

    /// Makes the capture search at most `plies` deep.
    pub fn set_plies(&mut self, plies: usize) {
        self.plies = plies;
    }

    /// Expected score for the side to move in `position` (with its legal moves, when
    /// known) after the capture search.
    pub fn value(&mut self, networks: &Networks, position: &Chess, moves: Option<&[Move]>) -> f32 {
        1.0 / (1.0 + (-self.logit(networks, position, moves)).exp())
    }

    /// The capture search's logit for the side to move in `position` (with its legal
    /// moves, when known).
    pub fn logit(&mut self, networks: &Networks, position: &Chess, moves: Option<&[Move]>) -> f32 {
        let features = FeatureBits::from_position(position);
        // The root slot follows from the last leaf's (positions a few plies apart differ
        // in a few pieces), through the next slot.
        if self.stack.len() < 2 {
            self.stack.resize(2, networks.value.accumulator(&features));
        }
        let (last, next) = self.stack.split_at_mut(1);
        networks.value.follow(&last[0], &features, &mut next[0]);
        self.stack.swap(0, 1);
        self.search(networks, position, 0, MATED, -MATED, moves)
    }

    /// Negamax over captures in logits for the side to move, `stack[ply]` holding this
    /// position's accumulator.
    fn search(
        &mut self,
        networks: &Networks,
        position: &Chess,
        ply: usize,
        mut alpha: f32,
        beta: f32,
        legal: Option<&[Move]>,
    ) -> f32 {
        let in_check = position.is_check();
        let stand = if in_check {
            MATED
        } else {
            let white = networks.value.logit(&self.stack[ply]);
            if position.turn().is_white() { white } else { -white }
        };
        if ply >= self.plies || (!in_check && stand >= beta) {
            return if in_check && ply >= self.plies { self.static_logit(networks, position, ply) } else { stand };
        }
        let generated: MoveList;
        let legal = match legal {
            Some(known) => known,
            None => {
                generated = position.legal_moves();
                &generated
            }
        };
        if legal.is_empty() {
            return if in_check { MATED } else { 0.0 };
        }
        if self.moves.len() <= ply {
            self.moves.resize_with(ply + 1, Vec::new);
        }
        // This ply's list, taken out of the resolver while the children are searched.
        let mut moves = std::mem::take(&mut self.moves[ply]);
        moves.clear();
        if in_check {
            moves.extend_from_slice(legal);
        } else {
            // At the leaf itself quiet checks too (the replies are then every evasion), so
            // that a mate in one or a check that wins material is seen.
            moves.extend(legal.iter().filter(|m| {
                let noisy = m.is_capture() || m.promotion() == Some(Role::Queen);
                (noisy || (ply == 0 && gives_direct_check(position, m))) && !loses_material(position, m)
            }));
        }
        moves.sort_by_key(|m| -mvv_lva(m));
        let mut best = stand;
        alpha = alpha.max(stand);
        if self.stack.len() <= ply + 1 {
            self.stack.push(self.stack[ply].clone());
        }
        for &m in &moves {
            let child = played(position, m);
            let features = FeatureBits::from_position(&child);
            let (parents, children) = self.stack.split_at_mut(ply + 1);
            networks.value.update(&parents[ply], &features, &mut children[0]);
            let score = -self.search(networks, &child, ply + 1, -beta, -alpha, None);
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.moves[ply] = moves;
        best
    }

    /// The net's logit for the side to move at `ply` (a position in check at the
    /// search's depth limit).
    fn static_logit(&self, networks: &Networks, position: &Chess, ply: usize) -> f32 {
        let white = networks.value.logit(&self.stack[ply]);
        if position.turn().is_white() { white } else { -white }
    }
}

/// The result for the side to move if the game is over: 0 when mated, 0.5 for a draw.
fn game_over(position: &Chess, no_moves: bool) -> Option<f32> {
    if no_moves {
        Some(if position.is_check() { 0.0 } else { 0.5 })
    } else if is_rule_draw(position) {
        Some(0.5)
    } else {
        None
    }
}

/// The evaluation net's expected score for the side to move, without a search.
pub fn net_value(networks: &Networks, position: &Chess) -> f32 {
    let white = networks.value.evaluate(&FeatureBits::from_position(position));
    let logit = if position.turn().is_white() { white } else { -white };
    1.0 / (1.0 + (-logit).exp())
}

/// Expected score for the side to move after a rollout of moves sampled from the move
/// predictors until a quiet position (side to move not in check, last move neither a
/// capture nor a promotion; at most [`ROLLOUT_QUIET_PLIES`] plies), then the net.
pub fn predictor_rollout(
    networks: &Networks,
    start: &Chess,
    rng: &mut Xoshiro256PlusPlus,
    scratch: &mut Scratch,
) -> f32 {
    let mut position = start.clone();
    let mut quiet = false;
    let mut flips = 0;
    for _ in 0..ROLLOUT_QUIET_PLIES {
        if quiet {
            break;
        }
        let moves = position.legal_moves();
        if let Some(result) = game_over(&position, moves.is_empty()) {
            return if flips % 2 == 0 { result } else { 1.0 - result };
        }
        let weights = move_probabilities(&networks.movepred, &position, &moves, scratch);
        let m = match WeightedIndex::new(&weights) {
            Ok(dist) => moves[dist.sample(rng)],
            Err(_) => moves[rng.random_range(0..moves.len())],
        };
        quiet = !m.is_capture() && m.promotion().is_none();
        position.play_unchecked(m);
        flips += 1;
        quiet &= !position.is_check();
    }
    let moves = position.legal_moves();
    let result = game_over(&position, moves.is_empty()).unwrap_or_else(|| net_value(networks, &position));
    if flips % 2 == 0 { result } else { 1.0 - result }
}

/// Expected score for the side to move after uniformly random moves to the end of the
/// game (a draw after [`ROLLOUT_MAX_PLIES`] plies).
pub fn random_rollout(start: &Chess, rng: &mut Xoshiro256PlusPlus) -> f32 {
    let mut position = start.clone();
    for ply in 0..ROLLOUT_MAX_PLIES {
        let moves = position.legal_moves();
        if let Some(result) = game_over(&position, moves.is_empty()) {
            return if ply % 2 == 0 { result } else { 1.0 - result };
        }
        position.play_unchecked(moves[rng.random_range(0..moves.len())]);
    }
    0.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position_history::Game;

    fn position(fen: &str) -> Chess {
        Game::from_uci(Some(fen), &[]).unwrap().position().clone()
    }

    #[test]
    fn the_capture_search_sees_a_hanging_queen_and_mates_and_stands_pat_when_quiet() {
        let networks = Networks::random(5);
        let mut resolver = Resolver::default();
        // White to move takes the undefended queen: worth more than the net's guess alone.
        let hanging = position("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1");
        let taken = position("4k3/8/8/3R4/8/8/8/4K3 b - - 0 1");
        let value = resolver.value(&networks, &hanging, None);
        assert!(value >= 1.0 - net_value(&networks, &taken) - 1e-4, "the capture is seen");
        assert!(value >= net_value(&networks, &hanging) - 1e-6, "standing pat is a floor");
        // Mated: no evasion.
        let mated = position("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1");
        assert!(resolver.value(&networks, &mated, None) < 1e-6);
        // A mate in one by a quiet check, seen at the leaf (the net alone cannot know it).
        let mate_in_one = position("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
        assert!(resolver.value(&networks, &mate_in_one, None) > 1.0 - 1e-6);
        // Nothing to take and no check to give: the net's own score.
        let quiet = position("4k3/8/8/8/8/8/7P/4K3 w - - 0 1");
        assert!((resolver.value(&networks, &quiet, None) - net_value(&networks, &quiet)).abs() < 1e-5);
    }

    #[test]
    fn rollouts_score_a_finished_game_for_the_side_to_move() {
        let networks = Networks::random(5);
        let mut rng = <Xoshiro256PlusPlus as rand::SeedableRng>::seed_from_u64(1);
        let mated = position("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1");
        assert_eq!(random_rollout(&mated, &mut rng), 0.0);
        assert_eq!(predictor_rollout(&networks, &mated, &mut rng, &mut Scratch::default()), 0.0);
        let bare = position("8/8/8/4k3/8/8/8/4K3 w - - 0 1");
        assert_eq!(random_rollout(&bare, &mut rng), 0.5);
    }
}
