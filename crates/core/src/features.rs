//! The 773-feature position encoding of DeepChess.
//!
//! Layout (see `docs/encoding.md`):
//!
//! | indices   | meaning                                                         |
//! |-----------|-----------------------------------------------------------------|
//! | 0..768    | 12 planes of 64 squares: White P N B R Q K, then Black p n b r q k; square a1 = 0 … h8 = 63 |
//! | 768       | side to move (0 White, 1 Black)                                 |
//! | 769..773  | castling rights: White king-side, White queen-side, Black king-side, Black queen-side |
//!
//! A feature index of a piece is `plane * 64 + square` with
//! `plane = colour * 6 + role`, colour 0 for White, role 0..6 for P N B R Q K.

use shakmaty::{Board, CastlingSide, Color, Piece, Position, Role, Square};

use crate::arch::{InputMap, ValueInputLayout};

/// Number of input features.
pub const FEATURE_COUNT: usize = 773;
/// Index of the side-to-move feature (1 when Black is to move).
pub const SIDE_TO_MOVE: usize = 768;
/// Index of the first castling feature (White king-side); the next three follow in the
/// order White queen-side, Black king-side, Black queen-side.
pub const CASTLING: usize = 769;
/// Capacity of [`SparseFeatures`]: every square occupied plus side to move and four
/// castling rights. Legal positions use at most 37 (32 pieces + 5).
pub const MAX_ACTIVE: usize = 64 + 5;

/// Index 0..6 of a role in the plane order P N B R Q K.
#[inline]
pub fn role_index(role: Role) -> usize {
    role as usize - 1
}

/// Feature index of `piece` standing on `square`.
#[inline]
pub fn piece_feature(piece: Piece, square: Square) -> usize {
    let colour = usize::from(piece.color == Color::Black);
    (colour * 6 + role_index(piece.role)) * 64 + square as usize
}

/// Feature index of a castling right.
#[inline]
pub fn castling_feature(color: Color, side: CastlingSide) -> usize {
    CASTLING + 2 * usize::from(color == Color::Black) + usize::from(side == CastlingSide::QueenSide)
}

/// The active (non-zero) features of a position, in increasing order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SparseFeatures {
    indices: [u16; MAX_ACTIVE],
    len: u8,
}

impl std::fmt::Debug for SparseFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl SparseFeatures {
    /// Encodes a position.
    ///
    /// ```
    /// use deepchess_core::SparseFeatures;
    /// use deepchess_core::features::SIDE_TO_MOVE;
    /// use shakmaty::Chess;
    /// let start = SparseFeatures::from_position(&Chess::default());
    /// // 32 pieces and 4 castling rights; White to move, so feature 768 is off
    /// assert_eq!(start.len(), 36);
    /// assert!(!start.as_slice().contains(&(SIDE_TO_MOVE as u16)));
    /// assert_eq!(start.as_slice()[0], 8); // the White pawn on a2: plane 0, square 8
    /// ```
    pub fn from_position<P: Position>(pos: &P) -> SparseFeatures {
        let castles = pos.castles();
        let mut rights = [false; 4];
        for (i, (color, side)) in CASTLING_ORDER.iter().enumerate() {
            rights[i] = castles.has(*color, *side);
        }
        SparseFeatures::from_parts(pos.board(), pos.turn(), rights)
    }

    /// Encodes a board, the side to move and castling rights in the order White
    /// king-side, White queen-side, Black king-side, Black queen-side.
    pub fn from_parts(board: &Board, turn: Color, castling: [bool; 4]) -> SparseFeatures {
        let mut features = SparseFeatures { indices: [0; MAX_ACTIVE], len: 0 };
        // Visit planes in order so that indices come out sorted.
        for color in [Color::White, Color::Black] {
            for role in Role::ALL {
                for square in board.by_piece(Piece { color, role }) {
                    features.push(piece_feature(Piece { color, role }, square));
                }
            }
        }
        if turn == Color::Black {
            features.push(SIDE_TO_MOVE);
        }
        for (i, has) in castling.iter().enumerate() {
            if *has {
                features.push(CASTLING + i);
            }
        }
        features
    }

    /// The features `indices` (sorted, at most [`MAX_ACTIVE`]).
    pub(crate) fn from_sorted(indices: &[u16]) -> SparseFeatures {
        debug_assert!(indices.len() <= MAX_ACTIVE && indices.windows(2).all(|w| w[0] < w[1]));
        let mut features = SparseFeatures { indices: [0; MAX_ACTIVE], len: indices.len() as u8 };
        features.indices[..indices.len()].copy_from_slice(indices);
        features
    }

    fn push(&mut self, index: usize) {
        self.indices[usize::from(self.len)] = index as u16;
        self.len += 1;
    }

    /// The active feature indices, sorted.
    #[inline]
    pub fn as_slice(&self) -> &[u16] {
        &self.indices[..usize::from(self.len)]
    }

    /// Number of active features.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when no feature is active (never the case for a position with kings).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dense 0/1 vector.
    pub fn to_dense(&self) -> [f32; FEATURE_COUNT] {
        let mut dense = [0.0; FEATURE_COUNT];
        self.write_dense(&mut dense);
        dense
    }

    /// Writes the dense 0/1 vector into `out` (which is cleared first).
    pub fn write_dense(&self, out: &mut [f32; FEATURE_COUNT]) {
        out.fill(0.0);
        for &i in self.as_slice() {
            out[usize::from(i)] = 1.0;
        }
    }
}

/// Inputs of one perspective of the evaluation net: the pieces as one side sees them,
/// 2 colours (own, then the opponent's) × 6 roles (P N B R Q K) × 64 squares, the board
/// flipped vertically for Black so that both sides see their pieces start on ranks 1-2.
pub const PERSPECTIVE_FEATURES: usize = 768;

/// Index in `view`'s perspective of the piece feature `feature` (`< 768`) of the 773
/// encoding: White's view is the 773 index itself; Black's view swaps the colours and
/// mirrors the square (a1 ↔ a8).
///
/// ```
/// use deepchess_core::features::{PERSPECTIVE_FEATURES, perspective_feature};
/// use shakmaty::Color;
/// // A White knight on b1 (plane 1, square 1) is Black's opponent knight on b8 (plane 7, square 57).
/// assert_eq!(perspective_feature(64 + 1, Color::White), 64 + 1);
/// assert_eq!(perspective_feature(64 + 1, Color::Black), 7 * 64 + 57);
/// assert!(usize::from(perspective_feature(767, Color::Black)) < PERSPECTIVE_FEATURES);
/// ```
#[inline]
pub fn perspective_feature(feature: u16, view: Color) -> u16 {
    debug_assert!(usize::from(feature) < PERSPECTIVE_FEATURES);
    match view {
        Color::White => feature,
        Color::Black => {
            let (plane, square) = (feature / 64, feature % 64);
            ((plane + 6) % 12) * 64 + (square ^ 56)
        }
    }
}

/// The input maps ([`ValueInputLayout::map`]) of the side to move's perspective and of
/// the opponent's for a position given by its side to move's perspective features (as
/// [`perspective_feature`] makes them): each from the square of that side's own king as
/// it sees it (a1 when a king is missing).
///
/// ```
/// use deepchess_core::arch::{InputMap, ValueInputLayout};
/// use deepchess_core::features::perspective_maps;
/// // own king on g1 (plane 5, square 6), the opponent's on c8 (plane 11, square 58)
/// let features = [5 * 64 + 6, 11 * 64 + 58];
/// let mirrored = InputMap { xor: 7, offset: 0 };
/// assert_eq!(perspective_maps(&features, ValueInputLayout::HorizontalMirror), (mirrored, InputMap::default()));
/// assert_eq!(perspective_maps(&features, ValueInputLayout::Plain), (InputMap::default(), InputMap::default()));
/// // the opponent sees its king on c1: bucket 1
/// let them = perspective_maps(&features, ValueInputLayout::MirrorKingBuckets).1;
/// assert_eq!(them, InputMap { xor: 0, offset: 768 });
/// ```
pub fn perspective_maps(side_to_move_view: &[u16], layout: ValueInputLayout) -> (InputMap, InputMap) {
    let king = |plane: u16| side_to_move_view.iter().find(|&&f| f / 64 == plane).map(|&f| f % 64);
    let us = layout.map(king(OWN_KING_PLANE).unwrap_or(0));
    // the opponent's king, seen from the opponent's side: ranks flipped
    let them = layout.map(king(OPPONENT_KING_PLANE).map_or(0, |s| s ^ 56));
    (us, them)
}

/// Plane of a perspective's own king among its 12 (own P N B R Q K, then the opponent's).
const OWN_KING_PLANE: u16 = 5;
/// Plane of the opponent's king in a perspective.
const OPPONENT_KING_PLANE: u16 = 11;

/// Calls `emit(f, true)` for every index in `new` but not in `old` and `emit(f, false)`
/// for every index in `old` but not in `new`; both lists are sorted (as
/// [`SparseFeatures::as_slice`] is), so one merge pass finds them: the rows an incremental
/// first layer adds and removes between two positions.
///
/// ```
/// let mut changes = Vec::new();
/// deepchess_core::features::diff(&[1, 5, 9], &[1, 6, 9, 12], |f, added| changes.push((f, added)));
/// assert_eq!(changes, [(5, false), (6, true), (12, true)]);
/// ```
pub fn diff(old: &[u16], new: &[u16], mut emit: impl FnMut(u16, bool)) {
    let (mut i, mut j) = (0, 0);
    loop {
        match (old.get(i), new.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(&x), Some(y)) if x < *y => {
                emit(x, false);
                i += 1;
            }
            (Some(&x), None) => {
                emit(x, false);
                i += 1;
            }
            (_, Some(&y)) => {
                emit(y, true);
                j += 1;
            }
            (None, None) => return,
        }
    }
}

/// Castling rights in feature order.
pub const CASTLING_ORDER: [(Color, CastlingSide); 4] = [
    (Color::White, CastlingSide::KingSide),
    (Color::White, CastlingSide::QueenSide),
    (Color::Black, CastlingSide::KingSide),
    (Color::Black, CastlingSide::QueenSide),
];

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, Chess, fen::Fen};

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    #[test]
    fn start_position_by_hand() {
        let features = SparseFeatures::from_position(&Chess::default());
        let mut expected: Vec<u16> = Vec::new();
        expected.extend(8..16); // White pawns a2..h2: plane 0
        expected.extend([64 + 1, 64 + 6]); // White knights b1 g1
        expected.extend([128 + 2, 128 + 5]); // bishops c1 f1
        expected.extend([192, 192 + 7]); // rooks a1 h1
        expected.push(256 + 3); // queen d1
        expected.push(320 + 4); // king e1
        expected.extend((384 + 48)..(384 + 56)); // Black pawns a7..h7: plane 6
        expected.extend([448 + 57, 448 + 62]); // knights b8 g8
        expected.extend([512 + 58, 512 + 61]);
        expected.extend([576 + 56, 576 + 63]);
        expected.push(640 + 59); // queen d8
        expected.push(704 + 60); // king e8
        expected.extend([769, 770, 771, 772]); // White to move: 768 inactive
        assert_eq!(features.as_slice(), expected.as_slice());
        assert_eq!(features.len(), 36);
        let dense = features.to_dense();
        assert_eq!(dense.iter().sum::<f32>(), 36.0);
        assert_eq!(dense[768], 0.0);
    }

    #[test]
    fn en_passant_position_black_to_move() {
        // After 1. e4 d5 2. e5 f5: White may capture en passant on f6; White to move.
        let pos = position("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3");
        let f = SparseFeatures::from_position(&pos);
        assert!(f.as_slice().contains(&(4 * 8 + 4))); // White pawn e5 = square 36
        assert!(f.as_slice().contains(&(384 + 37))); // Black pawn f5
        assert!(f.as_slice().contains(&(384 + 35))); // Black pawn d5
        assert!(!f.as_slice().contains(&768));
        // The encoding has no en-passant feature: same features without the ep square.
        let no_ep = position("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3");
        assert_eq!(f, SparseFeatures::from_position(&no_ep));
        let black = position("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 2");
        assert!(SparseFeatures::from_position(&black).as_slice().contains(&768));
    }

    #[test]
    fn lost_castling_rights() {
        // White has only queen-side castling, Black only king-side.
        let pos = position("r3k2r/8/8/8/8/8/8/R3K2R w Qk - 0 1");
        let f = SparseFeatures::from_position(&pos);
        let tail: Vec<u16> = f.as_slice().iter().copied().filter(|&i| i >= 768).collect();
        assert_eq!(tail, vec![770, 771]);
        assert_eq!(castling_feature(Color::White, CastlingSide::QueenSide), 770);
        assert_eq!(castling_feature(Color::Black, CastlingSide::KingSide), 771);
    }

    #[test]
    fn black_perspective_of_a_position_is_white_perspective_of_its_mirror() {
        let pos = position("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5");
        let mirror = crate::record::mirrored(&pos);
        let view = |f: &SparseFeatures, c: Color| {
            let mut v: Vec<u16> = f
                .as_slice()
                .iter()
                .filter(|&&i| usize::from(i) < PERSPECTIVE_FEATURES)
                .map(|&i| perspective_feature(i, c))
                .collect();
            v.sort_unstable();
            v
        };
        let (a, b) = (SparseFeatures::from_position(&pos), SparseFeatures::from_position(&mirror));
        assert_eq!(view(&a, Color::Black), view(&b, Color::White));
        assert_eq!(view(&a, Color::White), view(&b, Color::Black));
    }

    #[test]
    fn promoted_pieces_beyond_the_usual_count() {
        // Nine White queens after promotions: still encoded, 41 active features.
        let board: Board = "QQQQQQQQ/8/8/8/8/8/8/Qk5K".parse().unwrap();
        let f = SparseFeatures::from_parts(&board, Color::White, [false; 4]);
        assert_eq!(f.as_slice().iter().filter(|&&i| (256..320).contains(&i)).count(), 9);
        assert_eq!(f.len(), 11);
        // A full board fits too.
        let board: Board = "QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/QQQQQQQQ/qqqqqqqq/qqqqqqqq/qqqqqqqq/qqqqqqKk".parse().unwrap();
        let f = SparseFeatures::from_parts(&board, Color::Black, [true; 4]);
        assert_eq!(f.len(), MAX_ACTIVE);
        assert!(f.as_slice().windows(2).all(|w| w[0] < w[1]));
    }
}
