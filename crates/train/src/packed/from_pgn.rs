//! Packing the PGN text of `deepchess datagen --pgn`: its games read with pgn-reader, then
//! written back ([`SelfPlayGame::pgn`]) and compared with the text, so that packing never
//! loses a byte: any other PGN is refused with the line where it differs.

use std::ops::ControlFlow;

use deepchess_core::selfplay_game::{SelfPlayGame, TERMINATIONS};
use pgn_reader::{RawComment, RawTag, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::pgn::eval_comment::parse_eval;

/// A game read so far: its tags, its first position, its moves and their scores.
struct Partial {
    tags: Vec<(String, String)>,
    position: Chess,
    start: Chess,
    moves: Vec<Move>,
    evals: Vec<Option<i16>>,
}

/// The visitor: a game as datagen writes it, or why it is not one.
struct DatagenGame;

fn tag<'a>(tags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

impl Partial {
    fn finish(self) -> Result<SelfPlayGame, String> {
        let round = tag(&self.tags, "Round").and_then(|r| r.parse().ok()).ok_or("no numeric Round tag")?;
        let result = match tag(&self.tags, "Result") {
            Some("1-0") => 1,
            Some("0-1") => -1,
            Some("1/2-1/2") => 0,
            other => return Err(format!("Result tag {other:?}: datagen writes 1-0, 0-1 or 1/2-1/2")),
        };
        let termination = tag(&self.tags, "Termination").unwrap_or_default();
        let termination = *TERMINATIONS
            .iter()
            .find(|&&t| t == termination)
            .ok_or_else(|| format!("Termination tag `{termination}`: datagen writes one of {TERMINATIONS:?}"))?;
        let evals = self.evals.iter().enumerate().map(|(i, e)| e.ok_or(format!("move {} has no [%eval]", i + 1)));
        let evals = evals.collect::<Result<Vec<i16>, String>>()?;
        Ok(SelfPlayGame { round, start: self.start, moves: self.moves, evals, result, termination })
    }
}

impl Visitor for DatagenGame {
    type Tags = Vec<(String, String)>;
    type Movetext = Partial;
    type Output = Result<SelfPlayGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let Some(fen) = tag(&tags, "FEN") else {
            return ControlFlow::Break(Err("no FEN tag (datagen writes the first searched position)".into()));
        };
        let start = fen
            .parse::<Fen>()
            .map_err(|e| e.to_string())
            .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).map_err(|e| e.to_string()));
        match start {
            Ok(start) => ControlFlow::Continue(Partial {
                tags,
                position: start.clone(),
                start,
                moves: Vec::new(),
                evals: Vec::new(),
            }),
            Err(e) => ControlFlow::Break(Err(format!("FEN `{fen}`: {e}"))),
        }
    }

    fn san(&mut self, partial: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(&partial.position) {
            Ok(m) => {
                partial.position.play_unchecked(m);
                partial.moves.push(m);
                partial.evals.push(None);
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(Err(format!("move {} ({san_plus}): {e}", partial.moves.len() + 1))),
        }
    }

    fn comment(&mut self, partial: &mut Self::Movetext, comment: RawComment<'_>) -> ControlFlow<Self::Output> {
        if let (Some(last), Some(eval)) = (partial.evals.last_mut(), parse_eval(comment.as_bytes())) {
            *last = Some(eval);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, partial: Self::Movetext) -> Self::Output {
        partial.finish()
    }
}

/// The line (1-based) of byte `at` of `text`.
fn line_of(text: &[u8], at: usize) -> usize {
    text[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Up to 40 characters of `bytes` from `at`, for a message.
fn excerpt(bytes: &[u8], at: usize) -> String {
    let end = (at + 40).min(bytes.len());
    String::from_utf8_lossy(&bytes[at.min(end)..end]).escape_debug().to_string()
}

/// The games of PGN text written by `deepchess datagen --pgn`. Fails, naming the game and
/// its line, on a game datagen would not write, and on any text whose games would unpack
/// to different bytes (other tags, spacing, comments, a partial last game).
pub fn games_of_pgn(text: &[u8]) -> Result<Vec<SelfPlayGame>, String> {
    let mut reader = pgn_reader::Reader::new(text);
    let mut games = Vec::new();
    let mut at = 0;
    loop {
        let game = match reader.read_game(&mut DatagenGame) {
            Ok(Some(game)) => game,
            Ok(None) => break,
            Err(e) => return Err(format!("game {} (line {}): {e}", games.len() + 1, line_of(text, at))),
        };
        let game = game.map_err(|e| format!("game {} (line {}): {e}", games.len() + 1, line_of(text, at)))?;
        let written = game.pgn();
        let end = at + written.len();
        if text.get(at..end) != Some(written.as_bytes()) {
            let differs = (at..end.min(text.len()))
                .find(|&i| text[i] != written.as_bytes()[i - at])
                .unwrap_or(end.min(text.len()));
            return Err(format!(
                "game {} (line {}): the file has \"{}\" where the packed game would unpack to \"{}\": only games as `deepchess datagen --pgn` writes them pack",
                games.len() + 1,
                line_of(text, differs),
                excerpt(text, differs),
                excerpt(written.as_bytes(), differs - at)
            ));
        }
        at = end;
        games.push(game);
    }
    if at != text.len() {
        return Err(format!("line {}: text after the last game: \"{}\"", line_of(text, at), excerpt(text, at)));
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(round: u64, first: usize) -> SelfPlayGame {
        let mut start = Chess::default();
        start.play_unchecked(start.legal_moves()[first]);
        let mut position = start.clone();
        let moves: Vec<Move> = (0..5)
            .map(|i| {
                let m = position.legal_moves()[i * 3 % position.legal_moves().len()];
                position.play_unchecked(m);
                m
            })
            .collect();
        SelfPlayGame { round, start, moves, evals: vec![5, -29_997, 20_000, -3, 0], result: 0, termination: "rules" }
    }

    #[test]
    fn datagen_text_packs_exactly() {
        let text: String = [game(2, 0), game(1, 7), game(30, 19)].iter().map(SelfPlayGame::pgn).collect();
        let games = games_of_pgn(text.as_bytes()).unwrap();
        assert_eq!(games.iter().map(|g| g.round).collect::<Vec<_>>(), [2, 1, 30]);
        assert_eq!(games.iter().map(SelfPlayGame::pgn).collect::<String>(), text);
        assert!(games_of_pgn(b"").unwrap().is_empty());
    }

    #[test]
    fn other_text_is_refused_where_it_differs() {
        let good: String = [game(1, 0), game(2, 1)].iter().map(SelfPlayGame::pgn).collect();
        let second = good.find("[Event").and_then(|i| good[i + 1..].find("[Event").map(|j| i + 1 + j)).unwrap();
        let error = |text: &str| games_of_pgn(text.as_bytes()).unwrap_err();
        let spaced = format!("{}{}", &good[..second], good[second..].replacen("} ", "}  ", 1));
        assert!(error(&spaced).starts_with("game 2 (line 21): the file has"), "{}", error(&spaced));
        let tagged = good.replacen("[White", "[Site \"x\"]\n[White", 1);
        assert!(error(&tagged).starts_with("game 1 (line 3)"), "{}", error(&tagged));
        let unscored = good.replacen(" {[%eval 0.05]}", "", 1);
        assert!(error(&unscored).contains("move 1 has no [%eval]"), "{}", error(&unscored));
        let ended = good.replacen("\"rules\"", "\"abandoned\"", 1);
        assert!(error(&ended).contains("Termination tag `abandoned`"), "{}", error(&ended));
        let tail = format!("{good}% a comment\n");
        assert!(error(&tail).starts_with("line 23: text after the last game"), "{}", error(&tail));
    }
}
