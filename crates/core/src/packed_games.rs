//! The packed games format: self-play games ([`SelfPlayGame`]) stored by columns, so that a
//! general compressor finds their regularities (1.3 bytes a position after `zstd -19`, where
//! their PGN takes 3.9). It holds everything the PGN of `deepchess datagen --pgn` says, so
//! a packed file unpacks to the same PGN text byte for byte.
//!
//! Layout before compression (integers are LEB128 varints; signed ones zig-zag coded):
//!
//! | part | content |
//! |---|---|
//! | magic | the four bytes `DCPG`, then the version byte, 1 |
//! | count | the number of games |
//! | rounds | per game its `Round` minus the previous game's (signed; the first minus 0) |
//! | results | per game one byte: 0 White won, 1 draw, 2 Black won |
//! | terminations | per game one byte: its index in [`TERMINATIONS`] |
//! | lengths | per game its number of moves (at least 1) |
//! | first positions | per game its first position's FEN: its length, then its ASCII bytes |
//! | moves | per move one byte: its index among the legal moves sorted by [`move_key`] |
//! | scores | per move its score minus the game's previous one (signed; the first minus 0) |

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, MoveList, Position};

use crate::selfplay_game::{SelfPlayGame, TERMINATIONS};

/// The first bytes of a packed file (before the version byte).
pub const MAGIC: &[u8; 4] = b"DCPG";
/// The version this code writes and reads.
pub const VERSION: u8 = 1;
/// The most moves a game may hold (a bound against corrupt lengths).
const MAX_MOVES: u64 = 20_000;
/// The longest FEN a game may start from.
const MAX_FEN: u64 = 100;

/// Why bytes are not packed games, or games cannot be packed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    /// The bytes do not start with [`MAGIC`].
    #[error("not packed games (they start with DCPG)")]
    NotPacked,
    /// A version this code does not read.
    #[error("packed games version {0}; this build reads version {VERSION}")]
    Version(u8),
    /// The bytes end inside a part.
    #[error("the data ends inside its {0}")]
    Truncated(&'static str),
    /// Bytes after the last part.
    #[error("{0} bytes after the last part")]
    Trailing(usize),
    /// A game's data is inconsistent (the message names the game and what is wrong).
    #[error("{0}")]
    Corrupt(String),
}

/// The sort key of a legal move: from-square, then destination as UCI writes it (the king's
/// for castling), then promotion role. Shakmaty's generation order may change between
/// versions; this order does not.
pub fn move_key(m: &Move) -> u32 {
    match m.to_uci(CastlingMode::Standard) {
        UciMove::Normal { from, to, promotion } => {
            (u32::from(from) << 9) | (u32::from(to) << 3) | promotion.map_or(0, |r| r as u32)
        }
        _ => u32::MAX,
    }
}

/// The legal moves of `position` in [`move_key`] order.
fn sorted_moves(position: &Chess) -> MoveList {
    let mut moves = position.legal_moves();
    moves.sort_unstable_by_key(move_key);
    moves
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

fn result_code(result: i8) -> u8 {
    match result {
        1 => 0,
        0 => 1,
        _ => 2,
    }
}

/// Packs `games`. Fails on a game without moves, with a score for each move missing, or with
/// a move that is not legal where it is played (the message names the game by its round).
pub fn encode(games: &[SelfPlayGame]) -> Result<Vec<u8>, PackError> {
    let mut out = MAGIC.to_vec();
    out.push(VERSION);
    put_varint(&mut out, games.len() as u64);
    let mut previous = 0i64;
    for game in games {
        put_varint(&mut out, zigzag(game.round as i64 - previous));
        previous = game.round as i64;
    }
    out.extend(games.iter().map(|g| result_code(g.result)));
    for game in games {
        let corrupt = |why: String| PackError::Corrupt(format!("game of round {}: {why}", game.round));
        let index = TERMINATIONS.iter().position(|&t| t == game.termination);
        out.push(
            index.ok_or_else(|| corrupt(format!("termination `{}` is none of {TERMINATIONS:?}", game.termination)))?
                as u8,
        );
    }
    for game in games {
        if game.moves.is_empty() || game.moves.len() != game.evals.len() || game.moves.len() as u64 > MAX_MOVES {
            let why = format!(
                "{} moves and {} scores (1 to {MAX_MOVES} moves, one score each)",
                game.moves.len(),
                game.evals.len()
            );
            return Err(PackError::Corrupt(format!("game of round {}: {why}", game.round)));
        }
        put_varint(&mut out, game.moves.len() as u64);
    }
    for game in games {
        let fen = game.fen();
        put_varint(&mut out, fen.len() as u64);
        out.extend_from_slice(fen.as_bytes());
    }
    for game in games {
        let mut position = game.start.clone();
        for (ply, &played) in game.moves.iter().enumerate() {
            let index = sorted_moves(&position).iter().position(|m| *m == played).ok_or_else(|| {
                PackError::Corrupt(format!("game of round {}: move {ply} ({played}) is not legal", game.round))
            })?;
            out.push(index as u8);
            position.play_unchecked(played);
        }
    }
    for game in games {
        let mut previous = 0i64;
        for &eval in &game.evals {
            put_varint(&mut out, zigzag(i64::from(eval) - previous));
            previous = i64::from(eval);
        }
    }
    Ok(out)
}

/// A cursor over the packed bytes that says which part ended early.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self, part: &'static str) -> Result<u8, PackError> {
        let b = *self.bytes.get(self.at).ok_or(PackError::Truncated(part))?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self, part: &'static str) -> Result<u64, PackError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(part)?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(PackError::Corrupt(format!("a number in the {part} runs past 64 bits")))
    }

    fn take(&mut self, n: usize, part: &'static str) -> Result<&[u8], PackError> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or(PackError::Truncated(part))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
}

/// Unpacks games packed by [`encode`].
pub fn decode(bytes: &[u8]) -> Result<Vec<SelfPlayGame>, PackError> {
    if !bytes.starts_with(MAGIC) {
        return Err(PackError::NotPacked);
    }
    let mut r = Reader { bytes, at: MAGIC.len() };
    let version = r.byte("header")?;
    if version != VERSION {
        return Err(PackError::Version(version));
    }
    let count = r.varint("header")?;
    // every game takes at least five bytes: a bound before allocating
    if count > bytes.len() as u64 {
        return Err(PackError::Corrupt(format!("{count} games in {} bytes", bytes.len())));
    }
    let count = count as usize;
    let mut rounds = Vec::with_capacity(count);
    let mut round = 0i64;
    for _ in 0..count {
        round += unzigzag(r.varint("rounds")?);
        rounds.push(u64::try_from(round).map_err(|_| PackError::Corrupt(format!("round {round} below 0")))?);
    }
    let results = r.take(count, "results")?.to_vec();
    let terminations = r.take(count, "terminations")?.to_vec();
    let mut lengths = Vec::with_capacity(count);
    for (i, round) in rounds.iter().enumerate() {
        let n = r.varint("lengths")?;
        if n == 0 || n > MAX_MOVES {
            return Err(PackError::Corrupt(format!("game {i} (round {round}): {n} moves (1 to {MAX_MOVES})")));
        }
        lengths.push(n as usize);
    }
    let mut games = Vec::with_capacity(count);
    for i in 0..count {
        let corrupt = |why: String| PackError::Corrupt(format!("game {i} (round {}): {why}", rounds[i]));
        let n = r.varint("first positions")?;
        if n > MAX_FEN {
            return Err(corrupt(format!("a FEN of {n} bytes")));
        }
        let text = r.take(n as usize, "first positions")?;
        let fen = std::str::from_utf8(text).map_err(|_| corrupt("its FEN is not text".into()))?;
        let start: Chess = fen
            .parse::<Fen>()
            .map_err(|e| corrupt(format!("FEN `{fen}`: {e}")))?
            .into_position(CastlingMode::Standard)
            .map_err(|e| corrupt(format!("FEN `{fen}`: {e}")))?;
        let result = match results[i] {
            0 => 1,
            1 => 0,
            2 => -1,
            code => return Err(corrupt(format!("result code {code}"))),
        };
        let termination = *TERMINATIONS
            .get(usize::from(terminations[i]))
            .ok_or_else(|| corrupt(format!("termination code {}", terminations[i])))?;
        games.push(SelfPlayGame { round: rounds[i], start, moves: Vec::new(), evals: Vec::new(), result, termination });
    }
    for (i, game) in games.iter_mut().enumerate() {
        let mut position = game.start.clone();
        game.moves.reserve(lengths[i]);
        for ply in 0..lengths[i] {
            let index = usize::from(r.byte("moves")?);
            let moves = sorted_moves(&position);
            let played = *moves.get(index).ok_or_else(|| {
                PackError::Corrupt(format!(
                    "game {i} (round {}): move {ply} is number {index} of {} legal moves",
                    game.round,
                    moves.len()
                ))
            })?;
            game.moves.push(played);
            position.play_unchecked(played);
        }
    }
    for (i, game) in games.iter_mut().enumerate() {
        let mut eval = 0i64;
        game.evals.reserve(lengths[i]);
        for ply in 0..lengths[i] {
            eval += unzigzag(r.varint("scores")?);
            let stored = i16::try_from(eval).map_err(|_| {
                PackError::Corrupt(format!("game {i} (round {}): score {eval} of move {ply}", game.round))
            })?;
            game.evals.push(stored);
        }
    }
    match bytes.len() - r.at {
        0 => Ok(games),
        extra => Err(PackError::Trailing(extra)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MATE_BASE;

    /// `n` games of seeded random legal moves, with scores of every kind.
    fn games(n: u64) -> Vec<SelfPlayGame> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|g| {
                let mut position = Chess::default();
                let mut moves = Vec::new();
                for _ in 0..(1 + next() % 120) {
                    let legal = position.legal_moves();
                    if legal.is_empty() {
                        break;
                    }
                    let m = legal[(next() % legal.len() as u64) as usize];
                    moves.push(m);
                    position.play_unchecked(m);
                }
                let split = (next() % moves.len() as u64) as usize;
                let mut start = Chess::default();
                moves[..split].iter().for_each(|&m| start.play_unchecked(m));
                let moves = moves[split..].to_vec();
                let evals = (0..moves.len())
                    .map(|i| match next() % 10 {
                        0 => MATE_BASE - (i % 7) as i16 - 1,
                        1 => -(MATE_BASE - 3),
                        2 => 20_000,
                        _ => (next() % 801) as i16 - 400,
                    })
                    .collect();
                SelfPlayGame {
                    round: [3, 1, 2000, 7][g as usize % 4] + g,
                    start,
                    moves,
                    evals,
                    result: [1, 0, -1][(next() % 3) as usize],
                    termination: TERMINATIONS[(next() % 4) as usize],
                }
            })
            .collect()
    }

    #[test]
    fn games_unpack_to_the_same_pgn() {
        let games = games(40);
        let bytes = encode(&games).unwrap();
        let back = decode(&bytes).unwrap();
        assert_eq!(back.len(), games.len());
        for (a, b) in games.iter().zip(&back) {
            assert_eq!(a.pgn(), b.pgn());
            assert_eq!((a.round, &a.evals, &a.moves), (b.round, &b.evals, &b.moves));
        }
        assert_eq!(decode(&encode(&[]).unwrap()).unwrap().len(), 0);
    }

    #[test]
    fn damaged_bytes_say_what_is_wrong() {
        let games = games(5);
        let bytes = encode(&games).unwrap();
        assert_eq!(decode(b"[Event \"x\"]").unwrap_err(), PackError::NotPacked);
        let mut newer = bytes.clone();
        newer[4] = 2;
        assert_eq!(decode(&newer).unwrap_err(), PackError::Version(2));
        for cut in [6, bytes.len() / 2, bytes.len() - 1] {
            assert!(matches!(decode(&bytes[..cut]).unwrap_err(), PackError::Truncated(_)), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer).unwrap_err(), PackError::Trailing(1));
        // one move from the start position: its move byte is the one before its score
        let one = SelfPlayGame { moves: games[0].moves[..1].to_vec(), evals: vec![0], ..games[0].clone() };
        let one = SelfPlayGame { start: Chess::default(), moves: vec![Chess::default().legal_moves()[0]], ..one };
        let mut bad_move = encode(&[one]).unwrap();
        let at = bad_move.len() - 2;
        bad_move[at] = 250;
        assert!(decode(&bad_move).unwrap_err().to_string().contains("move 0 is number 250 of 20 legal moves"));
    }

    #[test]
    fn unpackable_games_are_refused_by_round() {
        let mut game = games(1).remove(0);
        game.evals.pop();
        assert!(encode(&[game.clone()]).unwrap_err().to_string().contains("scores"));
        game.evals.push(0);
        game.termination = "abandoned";
        assert!(encode(&[game]).unwrap_err().to_string().contains("`abandoned`"));
    }

    #[test]
    fn the_move_order_is_by_squares_not_by_generation() {
        let moves = sorted_moves(&Chess::default());
        let keys: Vec<u32> = moves.iter().map(move_key).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(moves[0].to_uci(CastlingMode::Standard).to_string(), "b1a3");
    }
}
