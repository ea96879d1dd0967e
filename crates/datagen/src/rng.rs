//! Seeds and random numbers: each game's generator depends only on (seed, game number), so
//! a resumed run never replays a game and any game can be replayed alone.

/// The splitmix64 finaliser: spreads the bits of `z` over the whole word.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether game `game` goes to the validation split (a `fraction` of the games, chosen by
/// a hash of the game number and the seed).
pub fn is_validation(game: u32, seed: u64, fraction: f64) -> bool {
    let z = splitmix64(u64::from(game) ^ seed.rotate_left(32));
    ((z >> 11) as f64 / (1u64 << 53) as f64) < fraction
}

/// A small deterministic generator (splitmix64 over a counter).
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// The generator of game `game` under `seed`.
    pub fn for_game(seed: u64, game: u32) -> Rng {
        Rng { state: splitmix64(seed ^ splitmix64(u64::from(game) ^ 0x6461_7461_6765_6e00)) }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        splitmix64(self.state)
    }

    /// A uniform index below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_get_their_own_streams_and_the_split_follows_the_fraction() {
        let first = |seed, game| Rng::for_game(seed, game).next_u64();
        assert_eq!(first(1, 2), first(1, 2));
        assert_ne!(first(1, 2), first(1, 3));
        assert_ne!(first(1, 2), first(2, 2));
        let mut rng = Rng::for_game(0, 0);
        assert!((0..1000).all(|_| rng.below(7) < 7));
        let validation = (0..10_000).filter(|&g| is_validation(g, 5, 0.05)).count();
        assert!((350..650).contains(&validation), "{validation}");
        assert!(!(0..1000).any(|g| is_validation(g, 5, 0.0)));
    }
}
