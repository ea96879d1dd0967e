//! Position history: a game's current position and the Zobrist keys of the positions
//! before it, for repetition detection (the engine side; the arena's `game` module plays
//! whole games between engine processes).

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

/// Errors building a game from UCI input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GameError {
    /// The FEN does not parse or describes an illegal position.
    #[error("bad FEN `{fen}`: {reason}")]
    Fen {
        /// The FEN as given.
        fen: String,
        /// What is wrong.
        reason: String,
    },
    /// A move is malformed or illegal in its position.
    #[error("move {index} `{text}` is {reason} in position {fen}")]
    Move {
        /// 1-based index in the move list.
        index: usize,
        /// The move as given.
        text: String,
        /// "malformed" or "illegal".
        reason: &'static str,
        /// FEN of the position it was to be played in.
        fen: String,
    },
}

/// The current position and the keys of every earlier position of the game.
#[derive(Clone, Debug)]
pub struct Game {
    position: Chess,
    history: Vec<u64>,
}

impl Default for Game {
    fn default() -> Self {
        Game::new(Chess::default())
    }
}

/// The Zobrist key of a position (en passant counted only when a capture is legal,
/// so transpositions and repetitions are recognised as FIDE counts them).
#[inline]
pub fn key(position: &Chess) -> u64 {
    position.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The position after the legal move `m`.
#[inline]
pub fn played(position: &Chess, m: Move) -> Chess {
    let mut child = position.clone();
    child.play_unchecked(m);
    child
}

/// The key of `child`, the position after `m` from `parent` whose key is `parent_key`:
/// updated by the pieces the move changes where shakmaty can (no en passant square
/// before, no double pawn push, no king move, no castling right touched: most moves of
/// a search), computed from scratch otherwise.
#[inline]
pub fn key_after(parent: &Chess, parent_key: u64, m: Move, child: &Chess) -> u64 {
    match parent.update_zobrist_hash(Zobrist64(parent_key), m, EnPassantMode::Legal) {
        Some(updated) => updated.0,
        None => key(child),
    }
}

/// The key of `null`, the position after a null move from `parent` whose key is
/// `parent_key`: only the side to move flips when `parent` has no en passant capture.
#[inline]
pub fn key_after_null(parent: &Chess, parent_key: u64, null: &Chess) -> u64 {
    match parent.ep_square(EnPassantMode::Legal) {
        None => parent_key ^ Zobrist64::zobrist_for_white_turn().0,
        Some(_) => key(null),
    }
}

impl Game {
    /// A game starting at `position`.
    pub fn new(position: Chess) -> Game {
        Game { position, history: Vec::new() }
    }

    /// A game from a FEN (or the start position for `None`) and UCI moves, standard chess.
    pub fn from_uci(fen: Option<&str>, moves: &[&str]) -> Result<Game, GameError> {
        Game::from_uci_in(fen, moves, CastlingMode::Standard)
    }

    /// A game from a FEN (or the start position for `None`) and UCI moves, with castling
    /// rights as `mode` allows them: `Chess960` also takes X-FEN and Shredder-FEN rights
    /// (rooks on any file). Castling is read as the king taking its rook (`e1h1`) or, where
    /// unambiguous, as the king's two-square move (`e1g1`).
    pub fn from_uci_in(fen: Option<&str>, moves: &[&str], mode: CastlingMode) -> Result<Game, GameError> {
        let position = match fen {
            None => Chess::default(),
            Some(text) => {
                let bad = |reason: String| GameError::Fen { fen: text.to_string(), reason };
                let parsed: Fen = text.parse().map_err(|e| bad(format!("{e}")))?;
                parsed.into_position(mode).map_err(|e| bad(format!("{e}")))?
            }
        };
        let mut game = Game::new(position);
        for (i, text) in moves.iter().enumerate() {
            let error = |reason| GameError::Move {
                index: i + 1,
                text: text.to_string(),
                reason,
                fen: Fen::from_position(&game.position, EnPassantMode::Legal).to_string(),
            };
            let uci: UciMove = text.parse().map_err(|_| error("malformed"))?;
            let m = uci.to_move(&game.position).map_err(|_| error("illegal"))?;
            game.play(m);
        }
        Ok(game)
    }

    /// Plays a legal move.
    pub fn play(&mut self, m: Move) {
        self.history.push(key(&self.position));
        self.position.play_unchecked(m);
    }

    /// The current position.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    /// Keys of the earlier positions, oldest first.
    pub fn history(&self) -> &[u64] {
        &self.history
    }
}

/// Keys of the positions on the way to the current node (game history, then the search
/// path), for draw detection inside a search.
#[derive(Clone, Debug)]
pub struct KeyStack {
    keys: Vec<u64>,
    game_len: usize,
}

impl KeyStack {
    /// Starts from a game's history; the root's own key is pushed by the search.
    pub fn new(game: &Game) -> KeyStack {
        KeyStack { keys: game.history().to_vec(), game_len: game.history().len() }
    }

    /// Enters a position.
    #[inline]
    pub fn push(&mut self, key: u64) {
        self.keys.push(key);
    }

    /// The key of the last position entered.
    #[inline]
    pub fn current(&self) -> Option<u64> {
        self.keys.last().copied()
    }

    /// Leaves the last position entered.
    #[inline]
    pub fn pop(&mut self) {
        self.keys.pop();
    }

    /// Whether the last position entered (with `halfmoves` reversible moves behind it)
    /// repeats an earlier one: twice before within the game, or once since the search
    /// began (a repetition the side to move can force again).
    pub fn is_repetition(&self, halfmoves: u32) -> bool {
        let Some((&current, earlier)) = self.keys.split_last() else { return false };
        let window = (halfmoves as usize).min(earlier.len());
        let start = earlier.len() - window;
        let mut in_game = 0;
        // Same side to move: every second position back.
        let mut i = earlier.len() as isize - 2;
        while i >= start as isize {
            if earlier[i as usize] == current {
                if i as usize >= self.game_len {
                    return true;
                }
                in_game += 1;
                if in_game >= 2 {
                    return true;
                }
            }
            i -= 2;
        }
        false
    }
}

/// Whether a position is drawn by rule before looking at moves: the fifty-move rule (a
/// checkmate on the hundredth half-move still counts, the caller sees it by having no
/// moves) or insufficient material.
pub fn is_rule_draw(position: &Chess) -> bool {
    position.halfmoves() >= 100 || position.is_insufficient_material()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every move two plies deep from positions with castling rights, en passant
    /// captures (legal and pinned), promotions and captures of rooks on their corners.
    #[test]
    fn incremental_keys_match_keys_from_scratch() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 1",
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
            "4k3/8/8/8/3pP3/8/8/4K2R b K e3 0 1",
        ];
        let mut checked = 0;
        for fen in fens {
            let root = Game::from_uci(Some(fen), &[]).expect("test FEN").position().clone();
            for first in root.legal_moves() {
                let child = played(&root, first);
                assert_eq!(key_after(&root, key(&root), first, &child), key(&child), "{fen} {first}");
                if let Ok(null) = child.clone().swap_turn() {
                    assert_eq!(key_after_null(&child, key(&child), &null), key(&null), "{fen} {first} null");
                }
                for second in child.legal_moves() {
                    let grandchild = played(&child, second);
                    assert_eq!(
                        key_after(&child, key(&child), second, &grandchild),
                        key(&grandchild),
                        "{fen} {first} {second}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 4_000, "{checked} moves checked");
    }
}
