//! Reading training data: datasets by split, batches of sparse features, seeded epoch
//! orders and the colour-flip augmentation.

use std::path::{Path, PathBuf};

use anyhow::Context;
use deepchess_core::dataset::file_name;
use deepchess_core::features::{CASTLING, SIDE_TO_MOVE};
use deepchess_core::{Content, Dataset, Record, Split};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::nn::sparse::SparseBatch;

/// A dataset file with its path (for error messages).
pub struct DataFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The records.
    pub data: Dataset,
}

impl DataFile {
    /// Opens `dir/{content}-{split}.bin`, checking its header says what we expect.
    pub fn open(dir: &Path, content: Content, split: Split) -> anyhow::Result<DataFile> {
        let path = dir.join(file_name(content, split));
        let data = Dataset::open(&path).context("cannot open the dataset")?;
        if data.content() != content || data.split() != split {
            anyhow::bail!(
                "{}: header says {:?}/{:?}, expected {content:?}/{split:?}",
                path.display(),
                data.content(),
                data.split()
            );
        }
        Ok(DataFile { path, data })
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Record {
        self.data.get(i)
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Features of records `indices`, each colour-flipped where `flip` says so.
    pub fn features(&self, indices: &[usize], flip: impl Fn(usize) -> bool + Sync) -> anyhow::Result<SparseBatch> {
        let rows: Vec<Vec<u16>> = indices
            .par_iter()
            .enumerate()
            .map(|(k, &i)| {
                let f = self.get(i).features().with_context(|| format!("{}: record {i}", self.path.display()))?;
                Ok(if flip(k) { flipped(f.as_slice()) } else { f.as_slice().to_vec() })
            })
            .collect::<anyhow::Result<_>>()?;
        let mut batch = SparseBatch::new();
        for r in &rows {
            batch.push(r);
        }
        Ok(batch)
    }
}

/// Refuses a training split without records (nothing to train on: the model would be its
/// random initialisation) and an empty validation split (the validation figures, and the
/// best epoch chosen by them, would mean nothing), naming the file.
pub fn refuse_empty(train: &DataFile, validation: &DataFile) -> anyhow::Result<()> {
    anyhow::ensure!(!train.is_empty(), "{}: no training record: nothing to train on", train.path.display());
    anyhow::ensure!(
        !validation.is_empty(),
        "{}: the validation split is empty: its figures and the best epoch chosen by them would mean nothing; prepare with a --validation-fraction above 0",
        validation.path.display()
    );
    Ok(())
}

/// The features of the colour-flipped position: board mirrored top to bottom, colours
/// swapped, the other side to move, castling rights swapped between the colours. A
/// position from a game White won becomes one from a game Black won.
pub fn flipped(active: &[u16]) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::with_capacity(active.len() + 1);
    let mut black_to_move = false;
    for &i in active {
        let i = usize::from(i);
        if i < SIDE_TO_MOVE {
            let (plane, square) = (i / 64, i % 64);
            out.push((((plane + 6) % 12) * 64 + (square ^ 56)) as u16);
        } else if i == SIDE_TO_MOVE {
            black_to_move = true;
        } else {
            out.push((CASTLING + (i - CASTLING + 2) % 4) as u16);
        }
    }
    if !black_to_move {
        out.push(SIDE_TO_MOVE as u16);
    }
    out.sort_unstable();
    out
}

/// The splitmix64 finaliser: spreads the bits of `z` over the whole word (a cheap,
/// stateless hash for seeded per-item decisions).
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random generator for `(seed, epoch, purpose)`: every epoch draws from its own stream,
/// so a resumed run makes exactly the draws the uninterrupted one would have.
pub fn rng(seed: u64, epoch: u32, purpose: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    r.set_stream(u64::from(epoch));
    r
}

/// `0..n` shuffled for `epoch`, cut to at most `limit` items.
pub fn epoch_order(n: usize, limit: Option<usize>, seed: u64, epoch: u32) -> Vec<usize> {
    epoch_order_for(n, limit, seed, epoch, 1)
}

/// [`epoch_order`] drawn from the random stream of another `purpose` (see [`rng`]): an
/// order independent of the one `epoch_order` gives for the same seed and epoch.
pub fn epoch_order_for(n: usize, limit: Option<usize>, seed: u64, epoch: u32, purpose: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng(seed, epoch, purpose));
    order.truncate(limit.unwrap_or(n));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::SparseFeatures;
    use deepchess_core::record::mirrored;
    use shakmaty::{CastlingMode, Chess, fen::Fen};

    #[test]
    fn flipping_features_matches_flipping_the_position() {
        for fen in [
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b2P3/2NP1N2/PPPB1PPP/R2QK2R w Kq - 0 1",
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2",
        ] {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let f = SparseFeatures::from_position(&pos);
            let m = SparseFeatures::from_position(&mirrored(&pos));
            assert_eq!(flipped(f.as_slice()), m.as_slice());
            assert_eq!(flipped(&flipped(f.as_slice())), f.as_slice());
        }
    }

    #[test]
    fn epoch_orders_are_seeded_permutations() {
        let a = epoch_order(100, None, 7, 3);
        assert_eq!(a, epoch_order(100, None, 7, 3));
        assert_ne!(a, epoch_order(100, None, 7, 4));
        let mut s = a.clone();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<_>>());
        assert_eq!(epoch_order(100, Some(10), 7, 3), a[..10]);
    }
}
