//! Fixed-size 40-byte dataset records: a packed position plus what a game says about it.
//!
//! Byte layout (little-endian, documented in `docs/dataset-format.md`):
//!
//! | bytes  | field                                                                 |
//! |--------|-----------------------------------------------------------------------|
//! | 0..8   | occupancy bitboard (bit i = square i occupied)                        |
//! | 8..24  | 4-bit piece codes of the occupied squares in increasing square order, low nibble first; code = colour * 6 + role (White P N B R Q K = 0..6, Black 6..12) |
//! | 24     | bit 0: Black to move; bits 1..5: castling rights WK WQ BK BQ          |
//! | 25     | en-passant square (only when a legal en-passant capture exists), 255 = none |
//! | 26..28 | ply of the position in its game (0 = the game's first position)       |
//! | 28..30 | engine evaluation in centipawns, White's view; mates ±(30000 − moves); `i16::MIN` = none |
//! | 30     | game result, White's view: 1, 0 or −1                                 |
//! | 31     | from-square of the move played here, 255 = none (last position)        |
//! | 32     | destination label of the move (king's destination for castling)       |
//! | 33     | bits 0..3: moving piece type 0..6; bits 3..6: promotion role 0 none, 1..6 N B R Q (role index); bit 6 capture; bit 7 castling |
//! | 34..38 | game number in the input (0-based, counted over all files)            |
//! | 38     | half-move clock (capped at 255)                                       |
//! | 39     | reserved, 0                                                           |

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Piece, Position, Role, Setup, Square,
};

use crate::features::{CASTLING_ORDER, SparseFeatures, role_index};
use crate::move_label::{LABEL_ROLES, MoveLabel, label_destination};

/// Size of one record in bytes.
pub const RECORD_SIZE: usize = 40;
/// Evaluation value meaning "no evaluation in the source".
pub const EVAL_NONE: i16 = i16::MIN;
/// Base of mate scores: mate in `n` moves is stored as `±(MATE_BASE − n)`.
pub const MATE_BASE: i16 = 30000;
/// Centipawn evaluations are clamped to ±`EVAL_CP_LIMIT` so they never look like mates.
pub const EVAL_CP_LIMIT: i16 = 20000;
const NO_SQUARE: u8 = 255;

/// A record could not be built or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// More than 32 pieces: the packed board holds at most 32.
    #[error("position has {0} pieces; records hold at most 32")]
    TooManyPieces(u32),
    /// Stored bytes do not describe a legal standard-chess position.
    #[error("record does not hold a legal position: {0}")]
    IllegalPosition(String),
    /// Stored bytes are inconsistent (bad piece code, bad square).
    #[error("corrupt record: {0}")]
    Corrupt(&'static str),
}

/// The move played in a recorded position, in label form plus what it takes to
/// reconstruct it exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayedMove {
    /// From-square.
    pub from: Square,
    /// Piece type and destination as the move predictors see them.
    pub label: MoveLabel,
    /// Promotion role, if any.
    pub promotion: Option<Role>,
    /// Whether the move captured (en passant included).
    pub capture: bool,
    /// Whether the move is castling.
    pub castle: bool,
}

impl PlayedMove {
    /// Describes `m` played by the side to move of `pos`. `None` for drops.
    pub fn new(pos: &Chess, m: &Move) -> Option<PlayedMove> {
        Some(PlayedMove {
            from: m.from()?,
            label: MoveLabel::from_move(m, pos.turn())?,
            promotion: m.promotion(),
            capture: m.is_capture(),
            castle: m.is_castle(),
        })
    }

    /// Finds the legal move of `pos` this describes.
    pub fn to_move(&self, pos: &Chess) -> Option<Move> {
        pos.legal_moves().into_iter().find(|m| {
            m.from() == Some(self.from)
                && label_destination(m, pos.turn()) == Some(self.label.to_square())
                && m.promotion() == self.promotion
        })
    }
}

impl MoveLabel {
    /// The destination as a square.
    pub fn to_square(self) -> Square {
        Square::new(u32::from(self.to))
    }

    /// The moving piece type as a role.
    pub fn role(self) -> Role {
        LABEL_ROLES[usize::from(self.piece)]
    }
}

/// One position of a game with its metadata; see the module docs for the byte layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Record {
    bytes: [u8; RECORD_SIZE],
}

/// Game-level facts stored in every record of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameInfo {
    /// Game number in the input (0-based).
    pub game: u32,
    /// Result from White's view: 1, 0, −1.
    pub result: i8,
}

impl Record {
    /// Packs a position. `eval` is White's-view centipawns or a mate score (see
    /// [`MATE_BASE`]), or [`EVAL_NONE`].
    ///
    /// ```
    /// use deepchess_core::{GameInfo, PlayedMove, Record};
    /// use shakmaty::{Chess, Position};
    /// let pos = Chess::default();
    /// let e4 = pos.legal_moves().into_iter().find(|m| m.to().to_string() == "e4").unwrap();
    /// let info = GameInfo { game: 7, result: 1 };
    /// let record = Record::new(&pos, 0, 35, info, PlayedMove::new(&pos, &e4))?;
    /// assert_eq!((record.eval(), record.result(), record.game(), record.ply()), (Some(35), 1, 7, 0));
    /// assert_eq!(record.position()?, pos);
    /// assert_eq!(Record::from_bytes(*record.as_bytes()), record);
    /// # Ok::<(), deepchess_core::record::RecordError>(())
    /// ```
    pub fn new(
        pos: &Chess,
        ply: u16,
        eval: i16,
        info: GameInfo,
        played: Option<PlayedMove>,
    ) -> Result<Record, RecordError> {
        let mut b = [0u8; RECORD_SIZE];
        let board = pos.board();
        let occupied = board.occupied();
        if occupied.count() > 32 {
            return Err(RecordError::TooManyPieces(occupied.count() as u32));
        }
        b[0..8].copy_from_slice(&u64::from(occupied).to_le_bytes());
        for (i, square) in occupied.into_iter().enumerate() {
            let piece = board.piece_at(square).expect("occupied square has a piece");
            let code = piece_code(piece);
            b[8 + i / 2] |= code << (4 * (i % 2));
        }
        let mut flags = u8::from(pos.turn() == Color::Black);
        for (i, (color, side)) in CASTLING_ORDER.iter().enumerate() {
            if pos.castles().has(*color, *side) {
                flags |= 1 << (1 + i);
            }
        }
        b[24] = flags;
        b[25] = pos.ep_square(EnPassantMode::Legal).map_or(NO_SQUARE, |s| s as u8);
        b[26..28].copy_from_slice(&ply.to_le_bytes());
        b[28..30].copy_from_slice(&eval.to_le_bytes());
        b[30] = info.result as u8;
        match played {
            None => b[31] = NO_SQUARE,
            Some(p) => {
                b[31] = p.from as u8;
                b[32] = p.label.to;
                let promo = p.promotion.map_or(0, |r| role_index(r) as u8);
                b[33] = p.label.piece | (promo << 3) | (u8::from(p.capture) << 6) | (u8::from(p.castle) << 7);
            }
        }
        b[34..38].copy_from_slice(&info.game.to_le_bytes());
        b[38] = pos.halfmoves().min(255) as u8;
        Ok(Record { bytes: b })
    }

    /// Wraps stored bytes (not validated; decoding validates).
    pub fn from_bytes(bytes: [u8; RECORD_SIZE]) -> Record {
        Record { bytes }
    }

    /// The stored bytes.
    pub fn as_bytes(&self) -> &[u8; RECORD_SIZE] {
        &self.bytes
    }

    fn occupancy(&self) -> Bitboard {
        Bitboard(u64::from_le_bytes(self.bytes[0..8].try_into().expect("8 bytes")))
    }

    /// The board, side to move and castling rights (enough for the features).
    pub fn board(&self) -> Result<Board, RecordError> {
        let occupied = self.occupancy();
        if occupied.count() > 32 {
            return Err(RecordError::Corrupt("more than 32 squares occupied"));
        }
        let mut board = Board::empty();
        for (i, square) in occupied.into_iter().enumerate() {
            let code = (self.bytes[8 + i / 2] >> (4 * (i % 2))) & 0x0f;
            board.set_piece_at(square, piece_from_code(code)?);
        }
        Ok(board)
    }

    /// Side to move.
    pub fn turn(&self) -> Color {
        if self.bytes[24] & 1 == 1 { Color::Black } else { Color::White }
    }

    /// Castling rights in feature order (WK, WQ, BK, BQ).
    pub fn castling(&self) -> [bool; 4] {
        std::array::from_fn(|i| self.bytes[24] & (1 << (1 + i)) != 0)
    }

    /// The 773 features, straight from the packed bytes (no legality check).
    pub fn features(&self) -> Result<SparseFeatures, RecordError> {
        Ok(SparseFeatures::from_parts(&self.board()?, self.turn(), self.castling()))
    }

    /// The full position, validated as legal standard chess.
    pub fn position(&self) -> Result<Chess, RecordError> {
        let mut setup = Setup::empty();
        setup.board = self.board()?;
        setup.turn = self.turn();
        let castling = self.castling();
        let rooks = [Square::H1, Square::A1, Square::H8, Square::A8];
        for (has, rook) in castling.iter().zip(rooks) {
            if *has {
                setup.castling_rights.add(rook);
            }
        }
        setup.ep_square = match self.bytes[25] {
            NO_SQUARE => None,
            s if s < 64 => Some(Square::new(u32::from(s))),
            _ => return Err(RecordError::Corrupt("bad en-passant square")),
        };
        setup.halfmoves = u32::from(self.bytes[38]);
        setup.fullmoves = std::num::NonZeroU32::new(1 + u32::from(self.ply()) / 2).expect("≥ 1");
        Chess::from_setup(setup, CastlingMode::Standard).map_err(|e| RecordError::IllegalPosition(e.to_string()))
    }

    /// Ply of the position in its game.
    pub fn ply(&self) -> u16 {
        u16::from_le_bytes([self.bytes[26], self.bytes[27]])
    }

    /// Engine evaluation (White's view, centipawns or mate score), `None` when absent.
    pub fn eval(&self) -> Option<i16> {
        let e = i16::from_le_bytes([self.bytes[28], self.bytes[29]]);
        (e != EVAL_NONE).then_some(e)
    }

    /// Game result from White's view: 1, 0, −1.
    pub fn result(&self) -> i8 {
        self.bytes[30] as i8
    }

    /// Game number in the input.
    pub fn game(&self) -> u32 {
        u32::from_le_bytes(self.bytes[34..38].try_into().expect("4 bytes"))
    }

    /// Sets the game number (a parser learns a game's place in the input after parsing it).
    pub fn set_game(&mut self, game: u32) {
        self.bytes[34..38].copy_from_slice(&game.to_le_bytes());
    }

    /// Sets the game result, White's view (known only at the end of a game's movetext
    /// when the Result tag is missing).
    pub fn set_result(&mut self, result: i8) {
        self.bytes[30] = result as u8;
    }

    /// The move played in this position, `None` for a game's last position.
    pub fn played(&self) -> Result<Option<PlayedMove>, RecordError> {
        if self.bytes[31] == NO_SQUARE {
            return Ok(None);
        }
        let (from, to, info) = (self.bytes[31], self.bytes[32], self.bytes[33]);
        let piece = info & 0x07;
        let promo = (info >> 3) & 0x07;
        if from >= 64 || to >= 64 || piece >= 6 || promo >= 5 {
            return Err(RecordError::Corrupt("bad move fields"));
        }
        Ok(Some(PlayedMove {
            from: Square::new(u32::from(from)),
            label: MoveLabel { piece, to },
            promotion: (promo != 0).then(|| LABEL_ROLES[usize::from(promo)]),
            capture: info & (1 << 6) != 0,
            castle: info & (1 << 7) != 0,
        }))
    }
}

fn piece_code(piece: Piece) -> u8 {
    (u8::from(piece.color == Color::Black) * 6) + role_index(piece.role) as u8
}

fn piece_from_code(code: u8) -> Result<Piece, RecordError> {
    if code >= 12 {
        return Err(RecordError::Corrupt("bad piece code"));
    }
    let color = if code >= 6 { Color::Black } else { Color::White };
    Ok(Piece { color, role: LABEL_ROLES[usize::from(code % 6)] })
}

/// Colour-flip: the mirrored board with colours swapped, as
/// `Setup::into_mirrored` does; a White-won position becomes a Black-won one.
pub fn mirrored(pos: &Chess) -> Chess {
    let setup = pos.to_setup(EnPassantMode::Legal).into_mirrored();
    Chess::from_setup(setup, CastlingMode::Standard).expect("mirror of a legal position is legal")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{fen::Fen, uci::UciMove};

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    fn roundtrip(fen: &str, uci: Option<&str>) {
        let pos = position(fen);
        let played = uci.map(|u| {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            PlayedMove::new(&pos, &m).unwrap()
        });
        let info = GameInfo { game: 123_456, result: -1 };
        let r = Record::new(&pos, 77, -35, info, played).unwrap();
        let back = Record::from_bytes(*r.as_bytes());
        let decoded = back.position().unwrap();
        assert_eq!(decoded.board(), pos.board());
        assert_eq!(decoded.turn(), pos.turn());
        assert_eq!(decoded.castles().castling_rights(), pos.castles().castling_rights());
        assert_eq!(decoded.ep_square(EnPassantMode::Legal), pos.ep_square(EnPassantMode::Legal));
        assert_eq!(back.features().unwrap(), SparseFeatures::from_position(&pos));
        assert_eq!((back.ply(), back.eval(), back.result(), back.game()), (77, Some(-35), -1, 123_456));
        assert_eq!(back.played().unwrap(), played);
        if let (Some(p), Some(u)) = (played, uci) {
            let m = p.to_move(&decoded).unwrap();
            assert_eq!(m, u.parse::<UciMove>().unwrap().to_move(&pos).unwrap());
        }
    }

    #[test]
    fn records_round_trip() {
        roundtrip("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Some("e2e4"));
        roundtrip("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", Some("e5f6"));
        roundtrip("r3k2r/8/8/8/8/8/8/R3K2R b Kq - 3 20", Some("e8c8"));
        roundtrip("1n5k/P7/8/8/8/8/8/K7 w - - 0 1", Some("a7b8n"));
        roundtrip("8/8/8/8/8/8/8/K6k w - - 0 1", None);
    }

    #[test]
    fn eval_none_and_mirror() {
        let pos = Chess::default();
        let r = Record::new(&pos, 0, EVAL_NONE, GameInfo { game: 0, result: 1 }, None).unwrap();
        assert_eq!(r.eval(), None);
        assert_eq!(r.played().unwrap(), None);
        let after = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let m = mirrored(&after);
        assert_eq!(m.turn(), Color::White);
        assert_eq!(m.board().piece_at(Square::E5), Some(Piece { color: Color::Black, role: Role::Pawn }));
        assert_eq!(m.board().occupied().count(), after.board().occupied().count());
    }

    #[test]
    fn corrupt_bytes_are_errors_not_panics() {
        let mut bytes = [0xffu8; RECORD_SIZE];
        assert!(Record::from_bytes(bytes).board().is_err());
        bytes[0..8].copy_from_slice(&1u64.to_le_bytes());
        assert!(Record::from_bytes(bytes).position().is_err());
        bytes[31] = 70;
        assert!(Record::from_bytes(bytes).played().is_err());
    }
}
