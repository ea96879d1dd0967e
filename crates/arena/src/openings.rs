//! Opening positions for matches: EPD lines (a position each) or PGN games (a start position
//! and the main line's moves), checked for legality when read.

use std::cell::Cell;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::rc::Rc;

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::epd::{LineError, parse_line, read_lines};

/// A start position and the moves played from it before the engines take over; always
/// legal (checked when made).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    fen: String,
    moves: Vec<String>,
}

impl Opening {
    /// The standard start position, no moves.
    pub fn startpos() -> Opening {
        Opening { fen: Fen::from_position(&Chess::default(), EnPassantMode::Legal).to_string(), moves: Vec::new() }
    }

    /// An opening from a FEN and UCI moves, checked: the position is legal, every move is
    /// legal, and the game is not over at the end.
    pub fn new(fen: &str, moves: Vec<String>) -> Result<Opening, String> {
        let start = parse_fen(fen)?;
        let mut position = start.clone();
        for (i, uci) in moves.iter().enumerate() {
            let m = uci
                .parse::<UciMove>()
                .ok()
                .and_then(|m| m.to_move(&position).ok())
                .ok_or_else(|| format!("move {} (\"{uci}\") is not legal", i + 1))?;
            position.play_unchecked(m);
        }
        if position.is_game_over() {
            return Err(format!("the game is already over after {} plies", moves.len()));
        }
        Ok(Opening { fen: Fen::from_position(&start, EnPassantMode::Legal).to_string(), moves })
    }

    /// The start position (FEN).
    pub fn fen(&self) -> &str {
        &self.fen
    }

    /// The moves played from it (UCI).
    pub fn moves(&self) -> &[String] {
        &self.moves
    }
}

/// Puts `openings` in a random order fixed by `seed` (Fisher–Yates with a SplitMix64
/// stream; the modulo bias is below 2⁻⁴⁰ for any real book), so that a seed names an order
/// across runs and machines.
pub fn shuffle(openings: &mut [Opening], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..openings.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        openings.swap(i, j);
    }
}

/// Reads a FEN of a legal standard chess position.
pub fn parse_fen(fen: &str) -> Result<Chess, String> {
    let parsed: Fen = fen.parse().map_err(|e| format!("FEN \"{fen}\": {e}"))?;
    parsed.into_position(CastlingMode::Standard).map_err(|e| format!("FEN \"{fen}\": {e}"))
}

/// Openings read from a file, with the entries that could not be used.
#[derive(Debug, Default)]
pub struct OpeningBook {
    /// The usable openings, in file order.
    pub openings: Vec<Opening>,
    /// Bad EPD lines, or bad PGN games (at the line of the bad tag or move, else the
    /// game's first line; the message names the game).
    pub errors: Vec<LineError>,
}

impl OpeningBook {
    /// Reads `.pgn` files as games and anything else as EPD.
    pub fn read(path: &Path) -> std::io::Result<OpeningBook> {
        let is_pgn = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
        if is_pgn { read_pgn(path) } else { read_epd(path) }
    }
}

fn read_epd(path: &Path) -> std::io::Result<OpeningBook> {
    let mut book = OpeningBook::default();
    for (line, text) in read_lines(path)? {
        match text.and_then(|text| parse_line(&text)).and_then(|epd| Opening::new(&epd.fen, Vec::new())) {
            Ok(opening) => book.openings.push(opening),
            Err(message) => book.errors.push(LineError { line, message }),
        }
    }
    Ok(book)
}

/// A byte slice handed to the PGN reader, counting the bytes it has taken, so that the
/// start of each game (the bytes taken less those still buffered) gives its line.
struct Counted<'a> {
    bytes: &'a [u8],
    taken: Rc<Cell<usize>>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.bytes.read(buf)?;
        self.taken.set(self.taken.get() + n);
        Ok(n)
    }
}

/// The 1-based line of byte `at` of `bytes`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())].iter().filter(|&&b| b == b'\n').count()
}

fn read_pgn(path: &Path) -> std::io::Result<OpeningBook> {
    let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let bytes = std::fs::read(path).map_err(named)?;
    let taken = Rc::new(Cell::new(0));
    let mut reader = Reader::new(Counted { bytes: &bytes, taken: taken.clone() });
    let mut book = OpeningBook::default();
    let (mut starts, mut bad) = (Vec::new(), Vec::new());
    while reader.has_more().map_err(named)? {
        starts.push(taken.get() - reader.buffer().len());
        let Some(parsed) = reader.read_game(&mut OpeningVisitor).map_err(named)? else { break };
        match parsed {
            Ok(opening) => book.openings.push(opening),
            Err(error) => bad.push((starts.len() - 1, error)),
        }
    }
    for (index, BadGame { message, near }) in bad {
        // The line of what is wrong (the FEN tag, the move) when it can be found in the
        // game's text, else the game's first line.
        let (start, end) = (starts[index], starts.get(index + 1).copied().unwrap_or(bytes.len()));
        let text = &bytes[start..end];
        let at = near.and_then(|needle| text.windows(needle.len()).position(|w| w == needle.as_bytes())).unwrap_or(0);
        let line = line_of(&bytes, start + at);
        book.errors.push(LineError { line, message: format!("game {}: {message}", index + 1) });
    }
    Ok(book)
}

/// Why a PGN game is not a usable opening, with the text to look for to find its line.
struct BadGame {
    message: String,
    near: Option<String>,
}

/// Reads one PGN game's start position and main line.
struct OpeningVisitor;

/// The game being read.
struct Line {
    start: Chess,
    position: Chess,
    moves: Vec<String>,
}

impl Visitor for OpeningVisitor {
    type Tags = Option<String>;
    type Movetext = Line;
    type Output = Result<Opening, BadGame>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(None)
    }

    fn tag(&mut self, fen: &mut Option<String>, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            *fen = Some(value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, fen: Option<String>) -> ControlFlow<Self::Output, Line> {
        let start = match fen.as_deref().map(parse_fen).unwrap_or(Ok(Chess::default())) {
            Ok(p) => p,
            Err(message) => return ControlFlow::Break(Err(BadGame { message, near: Some("[FEN".to_owned()) })),
        };
        ControlFlow::Continue(Line { position: start.clone(), start, moves: Vec::new() })
    }

    fn san(&mut self, line: &mut Line, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(&line.position) {
            Ok(m) => {
                line.moves.push(UciMove::from_standard(m).to_string());
                line.position.play_unchecked(m);
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(Err(BadGame {
                message: format!("move {} after {} plies: {e}", san_plus, line.moves.len()),
                near: Some(san_plus.to_string()),
            })),
        }
    }

    fn begin_variation(&mut self, _line: &mut Line) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, line: Line) -> Self::Output {
        Opening::new(&Fen::from_position(&line.start, EnPassantMode::Legal).to_string(), line.moves)
            .map_err(|message| BadGame { message, near: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_and_pgn_openings() {
        let dir = tempfile::tempdir().unwrap();
        let epd = dir.path().join("o.epd");
        std::fs::write(&epd, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\nbad line\n\n# comment\n")
            .unwrap();
        let book = OpeningBook::read(&epd).unwrap();
        assert_eq!(book.openings.len(), 1);
        assert_eq!(book.openings[0].fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(book.errors[0].line, 2);

        let pgn = dir.path().join("o.pgn");
        std::fs::write(&pgn, "[Event \"a\"]\n\n1. e4 (1. d4) e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. e4 e5 2. Ke3 *\n\n[Event \"c\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e3 *\n").unwrap();
        let book = OpeningBook::read(&pgn).unwrap();
        assert_eq!(book.openings.len(), 2);
        assert_eq!(book.openings[0].moves(), ["e2e4", "e7e5", "g1f3"]);
        assert_eq!(book.openings[1].fen(), "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
        assert!(
            book.errors[0].message.contains("game 2") && book.errors[0].message.contains("Ke3"),
            "{:?}",
            book.errors
        );
        assert_eq!(book.errors[0].line, 7, "the line of the illegal move: {:?}", book.errors);
    }

    #[test]
    fn shuffles_are_seeded_permutations() {
        let fens =
            ["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "4k3/8/8/8/8/8/3P4/4K3 w - - 0 1", "4k3/8/8/8/8/8/2P5/4K3 w - - 0 1"];
        let book: Vec<Opening> = (0..30).map(|i| Opening::new(fens[i % 3], Vec::new()).unwrap()).collect();
        let order = |seed| {
            let mut b = book.clone();
            shuffle(&mut b, seed);
            b
        };
        assert_eq!(order(7), order(7), "the same seed, the same order");
        assert_ne!(order(7), order(8));
        assert_ne!(order(7), book);
        let count = |b: &[Opening], fen: &str| b.iter().filter(|o| o.fen() == fen).count();
        assert!(fens.iter().all(|f| count(&order(7), f) == 10), "a permutation");
        let mut one = vec![Opening::startpos()];
        shuffle(&mut one, 1);
        shuffle(&mut [], 1);
        assert_eq!(one, [Opening::startpos()]);
    }

    #[test]
    fn bad_pgn_openings_are_reported_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("o.pgn");
        let text = "[Event \"a\"]\n[Site \"?\"]\n\n1. e4 e5 *\n\n\
                    [Event \"b\"]\n[Site \"?\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n\n\
                    [Event \"c\"]\n\n1. e4 e5\n2. Nf3 Nc6\n3. Ke3 *\n";
        std::fs::write(&pgn, text).unwrap();
        let book = OpeningBook::read(&pgn).unwrap();
        assert_eq!(book.openings.len(), 1);
        assert_eq!(book.errors.len(), 2, "{:?}", book.errors);
        assert_eq!((book.errors[0].line, book.errors[1].line), (8, 16), "{:?}", book.errors);
        assert!(book.errors[0].message.starts_with("game 2: FEN"), "{:?}", book.errors);
        assert!(book.errors[1].message.starts_with("game 3: move Ke3"), "{:?}", book.errors);
    }
}
