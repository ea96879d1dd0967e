//! Seeded random games for the tests: positions no opening book or engine would reach
//! (pieces hanging, exchanges under way), the same on every run.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::{Chess, Position};

/// The positions of a game of uniformly random legal moves drawn from `seed`, from the
/// starting position (included) for up to `plies` plies or to the end of the game.
pub fn random_game(seed: u64, plies: usize) -> Vec<Chess> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut position = Chess::default();
    let mut line = vec![position.clone()];
    for _ in 0..plies {
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        position.play_unchecked(moves[rng.random_range(0..moves.len())]);
        line.push(position.clone());
    }
    line
}
