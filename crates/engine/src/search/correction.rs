//! Pawn-structure correction history: how far the searches below nodes with a given pawn
//! structure have landed from the static evaluation, learned during the game and added to
//! the evaluation of later nodes with the same structure (as Stockfish, Ethereal and
//! Berserk correct their static evaluations).
//!
//! Each entry is a running average of `search score − static evaluation` in
//! `1/GRAIN` centipawns, per side to move and per pawn structure (a hash of both sides'
//! pawns into `ENTRIES` slots); a deeper search weighs more.

use shakmaty::{Board, Color};

/// Slots per side to move.
const ENTRIES: usize = 1 << 14;
/// Units of an entry per centipawn.
const GRAIN: i32 = 256;
/// Largest correction, in centipawns.
const MAX_CORRECTION: i32 = 64;
/// Weight of a new result in 1/`WEIGHT_SCALE`: `depth + 1`, at most `MAX_WEIGHT`.
const WEIGHT_SCALE: i32 = 256;
const MAX_WEIGHT: i32 = 16;

/// The correction table of one search thread.
#[derive(Clone)]
pub struct CorrectionHistory {
    entries: Vec<i16>,
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory { entries: vec![0; 2 * ENTRIES] }
    }
}

impl CorrectionHistory {
    /// Forgets everything (the table keeps its memory).
    pub fn clear(&mut self) {
        self.entries.fill(0);
    }

    /// The correction for `turn` to move with the pawns of `board`, in centipawns.
    pub fn correction(&self, turn: Color, board: &Board) -> i32 {
        i32::from(self.entries[index(turn, board)]) / GRAIN
    }

    /// Learns that a search of `depth` plies scored `score` where the static evaluation
    /// (before correction) was `static_eval`, both from `turn`'s view.
    pub fn update(&mut self, turn: Color, board: &Board, depth: i32, score: i32, static_eval: i32) {
        let entry = &mut self.entries[index(turn, board)];
        let target = (score - static_eval).clamp(-MAX_CORRECTION, MAX_CORRECTION) * GRAIN;
        let weight = (depth + 1).clamp(1, MAX_WEIGHT);
        let updated = (i32::from(*entry) * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        *entry = updated.clamp(-MAX_CORRECTION * GRAIN, MAX_CORRECTION * GRAIN) as i16;
    }
}

/// The slot of `turn` to move with the pawns of `board`.
fn index(turn: Color, board: &Board) -> usize {
    let white = u64::from(board.pawns() & board.white());
    let black = u64::from(board.pawns() & board.black());
    let hash = white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F).rotate_left(29);
    usize::from(turn == Color::Black) * ENTRIES + (hash >> (64 - ENTRIES.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Position};

    use super::*;

    fn board(fen: &str) -> Board {
        let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        position.board().clone()
    }

    #[test]
    fn corrections_move_toward_the_search_results_and_stay_bounded() {
        let start = board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        // The same pawns with other pieces share the slot; other pawns do not (here).
        let same_pawns = board("4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1");
        let other_pawns = board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let mut table = CorrectionHistory::default();
        assert_eq!(table.correction(Color::White, &start), 0);
        for _ in 0..10 {
            table.update(Color::White, &start, 4, 50, 10);
        }
        let first = table.correction(Color::White, &start);
        assert!(first > 0 && first < 40, "{first}");
        assert_eq!(table.correction(Color::White, &same_pawns), first);
        assert_eq!(table.correction(Color::Black, &start), 0);
        assert_eq!(table.correction(Color::White, &other_pawns), 0);
        // Deeper results weigh more.
        let mut deep = CorrectionHistory::default();
        for _ in 0..10 {
            deep.update(Color::White, &start, 12, 50, 10);
        }
        assert!(deep.correction(Color::White, &start) > first);
        // Many results far above the evaluation saturate at the bound; then below it.
        for _ in 0..1_000 {
            table.update(Color::White, &start, 20, 5_000, 0);
        }
        // (Integer averaging stops a unit short of the bound.)
        assert!((MAX_CORRECTION - 1..=MAX_CORRECTION).contains(&table.correction(Color::White, &start)));
        for _ in 0..1_000 {
            table.update(Color::White, &start, 20, -5_000, 0);
        }
        assert!((-MAX_CORRECTION..=1 - MAX_CORRECTION).contains(&table.correction(Color::White, &start)));
        table.clear();
        assert_eq!(table.correction(Color::White, &start), 0);
    }
}
