//! A pgn-reader visitor that turns one game into dataset records, or says why the game
//! is skipped.

use std::ops::ControlFlow;

use deepchess_core::record::{EVAL_NONE, GameInfo, PlayedMove, Record};
use deepchess_core::selfplay_game::SelfPlayGame;
use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::eval_comment::parse_eval;

/// Why a game is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// A `Variant` tag naming a variant other than standard chess or Chess960.
    Variant,
    /// Chess960: `Variant` tag or a FEN only Chess960 castling rules can read.
    Chess960,
    /// A `FEN` tag that is not a legal standard position.
    BadFen,
    /// A move that is illegal or cannot be read in its position.
    IllegalMove,
    /// No result: neither a `Result` tag nor a termination marker with 1-0, 0-1 or ½-½.
    NoResult,
    /// More than 32 pieces on the board (records hold at most 32).
    TooManyPieces,
    /// The PGN reader could not parse the game (for example an unterminated tag).
    Unreadable,
    /// A ply (from the `FEN` tag's move number, or a game that long) beyond the largest
    /// a record stores, [`u16::MAX`].
    PlyOutOfRange,
}

impl SkipReason {
    /// Every reason, in summary order.
    pub const ALL: [SkipReason; 8] = [
        SkipReason::Variant,
        SkipReason::Chess960,
        SkipReason::BadFen,
        SkipReason::IllegalMove,
        SkipReason::NoResult,
        SkipReason::TooManyPieces,
        SkipReason::Unreadable,
        SkipReason::PlyOutOfRange,
    ];

    /// Name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Variant => "variant",
            SkipReason::Chess960 => "chess960",
            SkipReason::BadFen => "bad_fen",
            SkipReason::IllegalMove => "illegal_move",
            SkipReason::NoResult => "no_result",
            SkipReason::TooManyPieces => "too_many_pieces",
            SkipReason::Unreadable => "unreadable",
            SkipReason::PlyOutOfRange => "ply_out_of_range",
        }
    }
}

/// Options of the game parser.
#[derive(Clone, Copy, Debug)]
pub struct ParseOptions {
    /// Keep the moves before an illegal move instead of skipping the game.
    pub keep_truncated: bool,
    /// Collect a header description for messages.
    pub describe: bool,
}

/// One parsed game.
#[derive(Clone, Debug)]
pub struct ParsedGame {
    /// Every position of the game with the move played (the last one without), in order.
    /// Game numbers are 0 until the caller sets them.
    pub records: Vec<Record>,
    /// Result, White's view, when known.
    pub result: Option<i8>,
    /// Why the game is skipped; `None` when it is used.
    pub skip: Option<SkipReason>,
    /// Detail for messages (the bad move, the bad FEN, ...).
    pub detail: String,
    /// The game stopped at an illegal move and its earlier moves were kept.
    pub truncated: bool,
    /// Elo ratings from the tags.
    pub elo: [Option<u32>; 2],
    /// Deterministic hash of the game's tags and moves (decides the split).
    pub hash: u64,
    /// "White - Black | Event | Round | Date", when asked for.
    pub description: String,
}

/// FNV-1a, 64 bit: stable across platforms and Rust versions.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A tag's name and raw value, each followed by a NUL.
    fn tag(&mut self, name: &[u8], value: &[u8]) {
        self.write(name);
        self.write(b"\0");
        self.write(value);
        self.write(b"\0");
    }

    /// A move: its from-square, its label's destination and its promotion role.
    fn played(&mut self, played: &PlayedMove) {
        self.write(&[played.from as u8, played.label.to, played.promotion.map_or(0, |r| r as u8)]);
    }
}

/// The ply of a game's first position, from its move number and side to move; the ply as
/// the error when it is beyond the largest a record stores.
fn first_ply(pos: &Chess) -> Result<u16, u32> {
    let ply = pos.fullmoves().get().saturating_sub(1).saturating_mul(2) + u32::from(pos.turn() == Color::Black);
    u16::try_from(ply).map_err(|_| ply)
}

impl ParsedGame {
    /// A self-play game as the parser reads its PGN text ([`SelfPlayGame::pgn`]): the same
    /// records and hash, without writing or parsing the text.
    pub fn from_selfplay(game: &SelfPlayGame) -> Result<ParsedGame, String> {
        let mut hash = Fnv::new();
        for (name, value) in game.tags() {
            hash.tag(name.as_bytes(), value.as_bytes());
        }
        let mut pos = game.start.clone();
        let mut ply = first_ply(&pos)
            .map_err(|ply| format!("its first position is ply {ply}, beyond the plies a record stores"))?;
        let info = GameInfo { game: 0, result: game.result };
        let mut records = Vec::with_capacity(game.moves.len() + 1);
        let mut pending = EVAL_NONE;
        for (&m, &eval) in game.moves.iter().zip(&game.evals) {
            let played = PlayedMove::new(&pos, &m).ok_or("a drop in standard chess")?;
            records.push(Record::new(&pos, ply, pending, info, Some(played)).map_err(|e| e.to_string())?);
            hash.played(&played);
            pos.play_unchecked(m);
            ply = ply.checked_add(1).ok_or("a game beyond the plies a record stores")?;
            pending = eval;
        }
        records.push(Record::new(&pos, ply, pending, info, None).map_err(|e| e.to_string())?);
        Ok(ParsedGame {
            records,
            result: Some(game.result),
            skip: None,
            detail: String::new(),
            truncated: false,
            elo: [None, None],
            hash: hash.0,
            description: String::new(),
        })
    }
}

/// Tag state of a game.
pub struct Tags {
    hash: Fnv,
    variant: Option<String>,
    fen: Option<String>,
    result: Option<i8>,
    elo: [Option<u32>; 2],
    header: [String; 5],
}

/// Movetext state of a game.
pub struct Movetext {
    game: ParsedGame,
    pos: Chess,
    ply: u16,
    pending_eval: i16,
    hash: Fnv,
    outcome: Option<Outcome>,
}

/// The visitor.
pub struct GameParser {
    options: ParseOptions,
}

impl GameParser {
    /// A parser with `options`.
    pub fn new(options: ParseOptions) -> GameParser {
        GameParser { options }
    }

    fn skipped(&self, tags: &Tags, reason: SkipReason, detail: String) -> ParsedGame {
        ParsedGame {
            records: Vec::new(),
            result: tags.result,
            skip: Some(reason),
            detail,
            truncated: false,
            elo: tags.elo,
            hash: tags.hash.0,
            description: self.describe(tags),
        }
    }

    fn describe(&self, tags: &Tags) -> String {
        if !self.options.describe {
            return String::new();
        }
        let [white, black, event, round, date] = &tags.header;
        format!("{white} - {black} | {event} | round {round} | {date}")
    }

    fn start_position(tags: &Tags) -> Result<Chess, (SkipReason, String)> {
        if let Some(variant) = &tags.variant {
            let v = variant.trim().to_ascii_lowercase();
            if v.contains("960") || v.contains("fischer") {
                return Err((SkipReason::Chess960, format!("Variant \"{variant}\"")));
            }
            if !matches!(v.as_str(), "" | "standard" | "chess" | "normal" | "from position") {
                return Err((SkipReason::Variant, format!("Variant \"{variant}\"")));
            }
        }
        let Some(fen) = &tags.fen else {
            return Ok(Chess::default());
        };
        let parsed: Fen = fen.parse().map_err(|e| (SkipReason::BadFen, format!("FEN \"{fen}\": {e}")))?;
        match parsed.clone().into_position(CastlingMode::Standard) {
            Ok(pos) => Ok(pos),
            Err(e) if parsed.into_position::<Chess>(CastlingMode::Chess960).is_ok() => {
                Err((SkipReason::Chess960, format!("FEN \"{fen}\" needs Chess960 castling ({e})")))
            }
            Err(e) => Err((SkipReason::BadFen, format!("FEN \"{fen}\": {e}"))),
        }
    }

    fn finish(&self, mut m: Movetext, final_position: bool) -> ParsedGame {
        if final_position {
            let info = GameInfo { game: 0, result: 0 };
            match Record::new(&m.pos, m.ply, m.pending_eval, info, None) {
                Ok(r) => m.game.records.push(r),
                Err(e) => {
                    m.game.skip = Some(SkipReason::TooManyPieces);
                    m.game.detail = e.to_string();
                }
            }
        }
        if m.game.result.is_none() {
            m.game.result = match m.outcome {
                Some(Outcome::Known(KnownOutcome::Decisive { winner })) => Some(sign(winner)),
                Some(Outcome::Known(KnownOutcome::Draw)) => Some(0),
                _ => None,
            };
        }
        match m.game.result {
            None if m.game.skip.is_none() => {
                m.game.skip = Some(SkipReason::NoResult);
                m.game.detail = "no Result tag and no result in the movetext".into();
            }
            Some(result) => m.game.records.iter_mut().for_each(|r| r.set_result(result)),
            None => {}
        }
        if m.game.skip.is_some() {
            m.game.records.clear();
        }
        m.game.hash = m.hash.0;
        m.game
    }
}

fn sign(winner: Color) -> i8 {
    match winner {
        Color::White => 1,
        Color::Black => -1,
    }
}

fn parse_result(value: &[u8]) -> Option<i8> {
    match value {
        b"1-0" => Some(1),
        b"0-1" => Some(-1),
        b"1/2-1/2" | b"1/2" | b"\xc2\xbd-\xc2\xbd" => Some(0),
        _ => None,
    }
}

fn parse_elo(value: &[u8]) -> Option<u32> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

impl Visitor for GameParser {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = ParsedGame;

    fn begin_tags(&mut self) -> ControlFlow<ParsedGame, Tags> {
        ControlFlow::Continue(Tags {
            hash: Fnv::new(),
            variant: None,
            fen: None,
            result: None,
            elo: [None, None],
            header: Default::default(),
        })
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<ParsedGame> {
        let raw = value.as_bytes();
        tags.hash.tag(name, raw);
        let text = || value.decode_utf8_lossy().into_owned();
        match name {
            b"Variant" => tags.variant = Some(text()),
            b"FEN" => tags.fen = Some(text()),
            b"Result" => tags.result = parse_result(raw),
            b"WhiteElo" => tags.elo[0] = parse_elo(raw),
            b"BlackElo" => tags.elo[1] = parse_elo(raw),
            _ => {}
        }
        if self.options.describe {
            let slot = [&b"White"[..], b"Black", b"Event", b"Round", b"Date"].iter().position(|n| *n == name);
            if let Some(i) = slot {
                tags.header[i] = text();
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<ParsedGame, Movetext> {
        let pos = match Self::start_position(&tags) {
            Ok(pos) => pos,
            Err((reason, detail)) => return ControlFlow::Break(self.skipped(&tags, reason, detail)),
        };
        let ply = match first_ply(&pos) {
            Ok(ply) => ply,
            Err(ply) => {
                let detail = format!(
                    "the FEN tag's move number {} is ply {ply}, beyond the {} plies a record stores",
                    pos.fullmoves(),
                    u16::MAX
                );
                return ControlFlow::Break(self.skipped(&tags, SkipReason::PlyOutOfRange, detail));
            }
        };
        let game = ParsedGame {
            records: Vec::with_capacity(160),
            result: tags.result,
            skip: None,
            detail: String::new(),
            truncated: false,
            elo: tags.elo,
            hash: 0,
            description: self.describe(&tags),
        };
        ControlFlow::Continue(Movetext { game, pos, ply, pending_eval: EVAL_NONE, hash: tags.hash, outcome: None })
    }

    fn san(&mut self, m: &mut Movetext, san_plus: SanPlus) -> ControlFlow<ParsedGame> {
        if m.ply == u16::MAX {
            let mut game = std::mem::replace(m, placeholder());
            game.game.skip = Some(SkipReason::PlyOutOfRange);
            game.game.detail = format!("move {san_plus} leads beyond the {} plies a record stores", u16::MAX);
            return ControlFlow::Break(self.finish(game, false));
        }
        let mv = match san_plus.san.to_move(&m.pos) {
            Ok(mv) => mv,
            Err(e) => {
                let detail = format!("move {} at ply {}: {e}", san_plus, m.ply);
                let mut game = std::mem::replace(m, placeholder());
                if self.options.keep_truncated {
                    game.game.truncated = true;
                    game.game.detail = detail;
                    return ControlFlow::Break(self.finish(game, true));
                }
                game.game.skip = Some(SkipReason::IllegalMove);
                game.game.detail = detail;
                return ControlFlow::Break(self.finish(game, false));
            }
        };
        let played = PlayedMove::new(&m.pos, &mv).expect("standard chess has no drops");
        let info = GameInfo { game: 0, result: 0 };
        match Record::new(&m.pos, m.ply, m.pending_eval, info, Some(played)) {
            Ok(r) => m.game.records.push(r),
            Err(e) => {
                let mut game = std::mem::replace(m, placeholder());
                game.game.skip = Some(SkipReason::TooManyPieces);
                game.game.detail = e.to_string();
                return ControlFlow::Break(self.finish(game, false));
            }
        }
        m.hash.played(&played);
        m.pending_eval = EVAL_NONE;
        m.pos.play_unchecked(mv);
        m.ply += 1;
        ControlFlow::Continue(())
    }

    fn comment(&mut self, m: &mut Movetext, comment: RawComment<'_>) -> ControlFlow<ParsedGame> {
        if let Some(eval) = parse_eval(comment.as_bytes()) {
            m.pending_eval = eval;
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, m: &mut Movetext, outcome: Outcome) -> ControlFlow<ParsedGame> {
        m.outcome = Some(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, m: Movetext) -> ParsedGame {
        self.finish(m, true)
    }
}

/// An empty movetext left behind when a game is moved out of the visitor early.
fn placeholder() -> Movetext {
    Movetext {
        game: ParsedGame {
            records: Vec::new(),
            result: None,
            skip: None,
            detail: String::new(),
            truncated: false,
            elo: [None, None],
            hash: 0,
            description: String::new(),
        },
        pos: Chess::default(),
        ply: 0,
        pending_eval: EVAL_NONE,
        hash: Fnv::new(),
        outcome: None,
    }
}
