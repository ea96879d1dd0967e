//! Labels of a played move for the move predictors: the piece type that moves and its
//! destination square.

use shakmaty::{Color, Move, Role, Square};

use crate::features::role_index;

/// What the move predictors learn from a played move.
///
/// * `piece`: 0..6 for P N B R Q K. Promotions count as pawn moves, castling as a king move.
/// * `to`: destination square 0..64 (a1 = 0). For castling, the king's destination
///   (g1/c1/g8/c8), not the rook's square that shakmaty uses internally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveLabel {
    /// Piece type index 0..6 (P N B R Q K).
    pub piece: u8,
    /// Destination square index 0..64.
    pub to: u8,
}

impl MoveLabel {
    /// Labels a move played by `turn` (the colour to move).
    ///
    /// Returns `None` for drops (`Move::Put`), which standard chess never has.
    pub fn from_move(m: &Move, turn: Color) -> Option<MoveLabel> {
        let to = label_destination(m, turn)?;
        Some(MoveLabel { piece: role_index(m.role()) as u8, to: to as u8 })
    }
}

/// The destination square a move is labelled with: the king's square after castling,
/// `to` otherwise. `None` for drops.
pub fn label_destination(m: &Move, turn: Color) -> Option<Square> {
    match *m {
        Move::Castle { .. } => Some(m.castling_side()?.king_to(turn)),
        Move::Put { .. } => None,
        _ => Some(m.to()),
    }
}

/// Roles in label order (index = label piece).
pub const LABEL_ROLES: [Role; 6] = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen, uci::UciMove};

    fn label(fen: &str, uci: &str) -> MoveLabel {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        MoveLabel::from_move(&m, pos.turn()).unwrap()
    }

    #[test]
    fn ordinary_moves() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(label(start, "e2e4"), MoveLabel { piece: 0, to: 28 });
        assert_eq!(label(start, "g1f3"), MoveLabel { piece: 1, to: 21 });
    }

    #[test]
    fn castling_is_a_king_move_to_its_destination() {
        let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(label(fen, "e1g1"), MoveLabel { piece: 5, to: 6 });
        assert_eq!(label(fen, "e1c1"), MoveLabel { piece: 5, to: 2 });
        let black = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1";
        assert_eq!(label(black, "e8g8"), MoveLabel { piece: 5, to: 62 });
        assert_eq!(label(black, "e8c8"), MoveLabel { piece: 5, to: 58 });
    }

    #[test]
    fn promotion_and_en_passant_are_pawn_moves() {
        let fen = "1n5k/P7/8/8/8/8/8/K7 w - - 0 1";
        assert_eq!(label(fen, "a7a8q"), MoveLabel { piece: 0, to: 56 });
        assert_eq!(label(fen, "a7b8n"), MoveLabel { piece: 0, to: 57 });
        let ep = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
        assert_eq!(label(ep, "e5f6"), MoveLabel { piece: 0, to: 45 });
    }
}
