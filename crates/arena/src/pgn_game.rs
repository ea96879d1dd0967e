//! Reads one game of a PGN stream: its tags, start position (`FEN` tag or the standard
//! one), main line (variations skipped) and result, every move checked for legality.
//! Games are numbered from 1; errors name the game.

use std::io::Read;
use std::ops::ControlFlow;

use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

/// A game read from PGN: its tags, start position and main line.
#[derive(Clone, Debug)]
pub struct PgnGame {
    /// The tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub start: Chess,
    /// The main line, each move legal in its position.
    pub moves: Vec<Move>,
    /// The result written after the moves (`*` when none is).
    pub outcome: Outcome,
}

/// Why [`read_game`] found no usable game.
#[derive(Debug, thiserror::Error)]
pub enum ReadGameError {
    /// The stream could not be read (or decompressed) while reading a game.
    #[error("reading game {game}: {source}")]
    Io {
        /// The game being read, from 1.
        game: u64,
        /// What failed.
        source: std::io::Error,
    },
    /// The stream ends before the game asked for.
    #[error("no game {wanted}: the file has {count}")]
    Missing {
        /// The game asked for, from 1.
        wanted: u64,
        /// The games the stream holds.
        count: u64,
    },
    /// The game asked for is not a legal game.
    #[error("game {game}: {message}")]
    Bad {
        /// The game, from 1.
        game: u64,
        /// What is wrong.
        message: String,
    },
}

/// Reads game `number` (from 1) of a PGN stream; the games before it are only counted.
pub fn read_game(stream: impl Read, number: u64) -> Result<PgnGame, ReadGameError> {
    let mut reader = Reader::new(stream);
    let mut count = 0;
    loop {
        let wanted = count + 1 == number;
        let parsed = reader
            .read_game(&mut GameVisitor { wanted })
            .map_err(|source| ReadGameError::Io { game: count + 1, source })?;
        let Some(parsed) = parsed else {
            return Err(ReadGameError::Missing { wanted: number, count });
        };
        count += 1;
        if wanted {
            let game = parsed.map_err(|message| ReadGameError::Bad { game: number, message })?;
            if game.tags.is_empty() && game.moves.is_empty() {
                let message = "neither tags nor moves: is this PGN text?".to_owned();
                return Err(ReadGameError::Bad { game: number, message });
            }
            return Ok(game);
        }
    }
}

/// Reads a game's tags and main line (`wanted`: otherwise the game is only counted).
struct GameVisitor {
    wanted: bool,
}

/// The main line read so far.
struct Movetext {
    game: PgnGame,
    position: Chess,
}

/// The position of a `FEN` tag.
fn parse_fen(fen: &str) -> Result<Chess, String> {
    let parsed: Fen = fen.parse().map_err(|e| format!("FEN tag `{fen}`: {e}"))?;
    parsed.into_position(CastlingMode::Standard).map_err(|e| format!("FEN tag `{fen}`: {e}"))
}

impl Visitor for GameVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        if self.wanted {
            tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let start = match tags.iter().find(|(name, _)| name == "FEN") {
            Some((_, fen)) => match parse_fen(fen) {
                Ok(position) => position,
                Err(e) => return ControlFlow::Break(Err(e)),
            },
            None => Chess::default(),
        };
        let game = PgnGame { tags, start: start.clone(), moves: Vec::new(), outcome: Outcome::Unknown };
        ControlFlow::Continue(Movetext { game, position: start })
    }

    fn san(&mut self, line: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if !self.wanted {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&line.position) {
            Ok(m) => {
                line.game.moves.push(m);
                line.position.play_unchecked(m);
                ControlFlow::Continue(())
            }
            Err(e) => {
                let ply = line.game.moves.len() + 1;
                ControlFlow::Break(Err(format!("ply {ply} (`{san_plus}`) is not legal: {e}")))
            }
        }
    }

    fn begin_variation(&mut self, _line: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn outcome(&mut self, line: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        line.game.outcome = outcome;
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, line: Self::Movetext) -> Self::Output {
        Ok(line.game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 (1. d4 d5) e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                       [Event \"b\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 40\"]\n\n40... Kd7 41. e4 *\n";

    #[test]
    fn reads_the_game_asked_for() {
        let first = read_game(TWO.as_bytes(), 1).unwrap();
        assert_eq!(first.moves.len(), 7, "the variation is skipped");
        assert_eq!(first.outcome.to_string(), "1-0");
        assert_eq!(first.tags[0], ("Event".to_owned(), "a".to_owned()));
        let second = read_game(TWO.as_bytes(), 2).unwrap();
        assert_eq!(second.start.fullmoves().get(), 40);
        assert_eq!((second.moves.len(), second.outcome), (2, Outcome::Unknown));
    }

    #[test]
    fn errors_name_the_game_and_the_real_count() {
        let missing = read_game(TWO.as_bytes(), 5).unwrap_err().to_string();
        assert_eq!(missing, "no game 5: the file has 2");
        let illegal = "[Event \"x\"]\n\n1. e4 e5 2. Ke3 *\n";
        let error = read_game(illegal.as_bytes(), 1).unwrap_err().to_string();
        assert!(error.starts_with("game 1: ply 3 (`Ke3`) is not legal"), "{error}");
        let fen = "[FEN \"8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n";
        assert!(read_game(fen.as_bytes(), 1).unwrap_err().to_string().contains("FEN tag"));
        let garbage = "this is not a chess game at all\n";
        let error = read_game(garbage.as_bytes(), 1).unwrap_err().to_string();
        assert!(error.contains("neither tags nor moves"), "{error}");
    }

    #[test]
    fn a_read_error_is_reported_with_the_game() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("incomplete frame"))
            }
        }
        let error = read_game(Failing, 3).unwrap_err().to_string();
        assert_eq!(error, "reading game 1: incomplete frame");
    }
}
