//! The 773-feature encoding as bit sets: the twelve piece planes are a position's piece
//! bitboards, so that encoding a position is twelve loads and the pieces that differ
//! between two positions are their exclusive or (what incremental first layers need),
//! with no sorted lists to build or merge.

use shakmaty::{Color, Piece, Position, Role};

use crate::features::{CASTLING_ORDER, MAX_ACTIVE, SIDE_TO_MOVE, SparseFeatures};

/// The active features of a position: plane `colour·6 + role` holds the squares of that
/// piece (feature `plane·64 + square`); `flags` bit 0 is the side to move (Black), bits
/// 1–4 the castling rights in feature order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureBits {
    planes: [u64; 12],
    flags: u8,
}

impl FeatureBits {
    /// Encodes a position.
    ///
    /// ```
    /// use deepchess_core::{FeatureBits, SparseFeatures};
    /// use shakmaty::Chess;
    /// let start = FeatureBits::from_position(&Chess::default());
    /// assert_eq!(start.piece_count(), 32);
    /// assert_eq!(start.to_sparse(), SparseFeatures::from_position(&Chess::default()));
    /// ```
    pub fn from_position<P: Position>(pos: &P) -> FeatureBits {
        let board = pos.board();
        let mut planes = [0; 12];
        for (i, plane) in planes.iter_mut().enumerate() {
            let color = if i < 6 { Color::White } else { Color::Black };
            *plane = board.by_piece(Piece { color, role: Role::ALL[i % 6] }).0;
        }
        let castles = pos.castles();
        let mut flags = u8::from(pos.turn() == Color::Black);
        for (i, (color, side)) in CASTLING_ORDER.iter().enumerate() {
            flags |= u8::from(castles.has(*color, *side)) << (i + 1);
        }
        FeatureBits { planes, flags }
    }

    /// Whether Black is to move.
    #[inline]
    pub fn black_to_move(&self) -> bool {
        self.flags & 1 != 0
    }

    /// The square of `color`'s king as `color` sees it (0 = a1 … 63 = h8, ranks flipped
    /// for Black, as [`crate::features::perspective_feature`] does), 0 without one.
    ///
    /// ```
    /// use deepchess_core::FeatureBits;
    /// use shakmaty::{Chess, Color};
    /// let start = FeatureBits::from_position(&Chess::default());
    /// assert_eq!(start.king_square(Color::White), 4); // e1
    /// assert_eq!(start.king_square(Color::Black), 4); // e8, seen from Black's side
    /// ```
    #[inline]
    pub fn king_square(&self, color: Color) -> u16 {
        let plane = self.planes[color.fold_wb(5, 11)];
        if plane == 0 { 0 } else { plane.trailing_zeros() as u16 ^ color.fold_wb(0, 56) }
    }

    /// Number of pieces on the board (active features below 768).
    #[inline]
    pub fn piece_count(&self) -> usize {
        self.planes.iter().map(|p| p.count_ones() as usize).sum()
    }

    /// Number of active features.
    #[inline]
    pub fn len(&self) -> usize {
        self.piece_count() + self.flags.count_ones() as usize
    }

    /// True when no feature is active (never the case for a position with kings).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The piece features (`< 768`), in increasing order.
    pub fn pieces(&self) -> impl Iterator<Item = u16> + '_ {
        self.planes.iter().enumerate().flat_map(|(plane, &bits)| squares(bits).map(move |s| (plane * 64) as u16 + s))
    }

    /// Every active feature, in increasing order.
    pub fn active(&self) -> impl Iterator<Item = u16> + '_ {
        self.pieces().chain(squares(u64::from(self.flags)).map(|bit| SIDE_TO_MOVE as u16 + bit))
    }

    /// Calls `emit(f, true)` for every piece feature of `new` not in `self` and
    /// `emit(f, false)` for every one of `self` not in `new`, in increasing order: the
    /// rows an incremental first layer of the pieces adds and removes between the two
    /// positions.
    ///
    /// ```
    /// use deepchess_core::FeatureBits;
    /// use shakmaty::{Chess, Position, Square, uci::UciMove};
    /// let start = Chess::default();
    /// let m = "e2e4".parse::<UciMove>().unwrap().to_move(&start).unwrap();
    /// let after = start.clone().play(m).unwrap();
    /// let mut changes = Vec::new();
    /// FeatureBits::from_position(&start).piece_changes(&FeatureBits::from_position(&after), |f, added| changes.push((f, added)));
    /// assert_eq!(changes, [(Square::E2 as u16, false), (Square::E4 as u16, true)]);
    /// ```
    #[inline]
    pub fn piece_changes(&self, new: &FeatureBits, mut emit: impl FnMut(u16, bool)) {
        for (plane, (&old, &new)) in self.planes.iter().zip(&new.planes).enumerate() {
            changed_bits(old, new, (plane * 64) as u16, &mut emit);
        }
    }

    /// As [`FeatureBits::piece_changes`], then the side to move's and the castling
    /// rights' features that differ: every feature of the 773.
    #[inline]
    pub fn changes(&self, new: &FeatureBits, mut emit: impl FnMut(u16, bool)) {
        self.piece_changes(new, &mut emit);
        changed_bits(u64::from(self.flags), u64::from(new.flags), SIDE_TO_MOVE as u16, &mut emit);
    }

    /// The same features as a sorted list.
    pub fn to_sparse(&self) -> SparseFeatures {
        let mut indices = [0u16; MAX_ACTIVE];
        let mut n = 0;
        for (slot, f) in indices.iter_mut().zip(self.active()) {
            *slot = f;
            n += 1;
        }
        SparseFeatures::from_sorted(&indices[..n])
    }
}

/// Emits the bits set in `old ^ new` as features `offset + bit`, lowest first, each
/// with whether `new` has it.
#[inline]
fn changed_bits(old: u64, new: u64, offset: u16, emit: &mut impl FnMut(u16, bool)) {
    let changed = old ^ new;
    if changed != 0 {
        for bit in squares(changed) {
            emit(offset + bit, new & (1 << bit) != 0);
        }
    }
}

/// The squares of a bitboard (the set bits of a word), lowest first.
#[inline]
fn squares(mut bits: u64) -> impl Iterator<Item = u16> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let square = bits.trailing_zeros() as u16;
            bits &= bits - 1;
            square
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{PERSPECTIVE_FEATURES, diff};
    use shakmaty::Chess;

    /// Positions of seeded random games (captures, promotions, castling and Black to move
    /// among them).
    fn positions() -> Vec<Chess> {
        // xorshift64: the moves of the games, seeded.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut all = Vec::new();
        for _ in 0..40 {
            let mut position = Chess::default();
            for _ in 0..120 {
                let moves = position.legal_moves();
                if moves.is_empty() {
                    break;
                }
                position.play_unchecked(moves[next(moves.len())]);
                all.push(position.clone());
            }
        }
        all
    }

    #[test]
    fn the_bits_encode_what_the_sorted_list_does_and_differ_where_it_does() {
        let positions = positions();
        assert!(positions.len() > 2000);
        for pair in positions.windows(2) {
            let (a, b) = (FeatureBits::from_position(&pair[0]), FeatureBits::from_position(&pair[1]));
            let (sa, sb) = (SparseFeatures::from_position(&pair[0]), SparseFeatures::from_position(&pair[1]));
            assert_eq!(a.to_sparse(), sa);
            assert_eq!(a.black_to_move(), sa.as_slice().contains(&(SIDE_TO_MOVE as u16)));
            assert_eq!(
                a.piece_count(),
                sa.as_slice().iter().filter(|&&f| usize::from(f) < PERSPECTIVE_FEATURES).count()
            );
            let pieces = |s: &SparseFeatures| -> Vec<u16> {
                s.as_slice().iter().copied().filter(|&f| usize::from(f) < PERSPECTIVE_FEATURES).collect()
            };
            let (mut by_bits, mut by_merge) = (Vec::new(), Vec::new());
            a.piece_changes(&b, |f, added| by_bits.push((f, added)));
            diff(&pieces(&sa), &pieces(&sb), |f, added| by_merge.push((f, added)));
            assert_eq!(by_bits, by_merge);
            let (mut all_bits, mut all_merge) = (Vec::new(), Vec::new());
            a.changes(&b, |f, added| all_bits.push((f, added)));
            diff(sa.as_slice(), sb.as_slice(), |f, added| all_merge.push((f, added)));
            assert_eq!(all_bits, all_merge);
            assert_eq!(a.len(), sa.len());
        }
    }
}
