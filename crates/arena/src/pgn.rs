//! Writes finished games as PGN: the seven-tag roster plus `FEN`, `TimeControl`,
//! `PlyCount`, `Termination`; each engine move with a `{[%eval ...] [%emt ...]}` comment
//! (White's view, pawns; `#N` for mates) and the reason the game ended as a last comment.
//! The pieces every PGN writer of the project shares live here too: [`eval_text`],
//! [`write_tag`] and [`write_movetext`].

use std::fmt::Write as _;
use std::time::Duration;

use crate::game::GameRecord;
use crate::limits::TimeControl;
use deepchess_engine::search::Score;

/// Match-wide tags.
#[derive(Clone, Debug)]
pub struct PgnHeader {
    /// `Event`.
    pub event: String,
    /// `Site`.
    pub site: String,
    /// `Date` (`YYYY.MM.DD`).
    pub date: String,
    /// The time control of every game.
    pub tc: TimeControl,
}

/// Today's date (UTC) as the PGN `Date` tag writes it (`YYYY.MM.DD`).
pub fn today() -> String {
    chrono::Utc::now().format("%Y.%m.%d").to_string()
}

/// `[%eval]` notation of a score from White's view, as lichess writes it: pawns with two
/// decimals, or `#N` / `#-N` for White / Black mating in N moves.
pub fn eval_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("{:.2}", f64::from(cp) / 100.0),
        Score::Mate(n) => format!("#{n}"),
    }
}

/// `h:mm:ss.mmm`, as `[%emt]` and `[%clk]` take it.
fn clock_text(d: Duration) -> String {
    let ms = d.as_millis();
    format!("{}:{:02}:{:02}.{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

/// Writes the tag pair `[name "value"]` and a line break, the value escaped.
pub fn write_tag(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(out, "[{name} \"{}\"]", value.replace('\\', "\\\\").replace('"', "\\\""));
}

/// Writes movetext tokens (move numbers, moves, comments, variations, the result) separated
/// by spaces in lines of at most 79 characters (a longer token stands alone), then a blank
/// line.
pub fn write_movetext<S: AsRef<str>>(out: &mut String, tokens: impl IntoIterator<Item = S>) {
    let mut line_len = 0;
    for token in tokens {
        let t = token.as_ref();
        if line_len > 0 && line_len + 1 + t.len() > 79 {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(t);
        line_len += t.len();
    }
    out.push_str("\n\n");
}

/// One game as PGN text, ending with a blank line. `round` is written as the `Round` tag.
pub fn write_game(header: &PgnHeader, round: usize, game: &GameRecord) -> String {
    let mut out = String::new();
    write_tag(&mut out, "Event", &header.event);
    write_tag(&mut out, "Site", &header.site);
    write_tag(&mut out, "Date", &header.date);
    write_tag(&mut out, "Round", &round.to_string());
    write_tag(&mut out, "White", &game.white);
    write_tag(&mut out, "Black", &game.black);
    write_tag(&mut out, "Result", game.end.result.pgn());
    let standard = crate::openings::Opening::startpos();
    if game.start_fen != standard.fen() {
        write_tag(&mut out, "SetUp", "1");
        write_tag(&mut out, "FEN", &game.start_fen);
    }
    write_tag(&mut out, "TimeControl", &header.tc.pgn_tag());
    write_tag(&mut out, "PlyCount", &game.moves.len().to_string());
    write_tag(&mut out, "Termination", game.end.termination.pgn());
    out.push('\n');

    let white_first = game.start_fen.split_whitespace().nth(1) != Some("b");
    let mut fullmove: u32 = game.start_fen.split_whitespace().nth(5).and_then(|n| n.parse().ok()).unwrap_or(1);
    let mut tokens: Vec<String> = Vec::new();
    let mut need_number = true;
    for (i, m) in game.moves.iter().enumerate() {
        let white_moves = (i % 2 == 0) == white_first;
        if white_moves {
            tokens.push(format!("{fullmove}."));
        } else if need_number {
            tokens.push(format!("{fullmove}..."));
        }
        tokens.push(m.san.clone());
        need_number = false;
        let mut comment = Vec::new();
        if m.book {
            if game.moves.get(i + 1).is_none_or(|next| !next.book) {
                comment.push("book".to_owned());
            }
        } else {
            if let Some(s) = m.score_white {
                comment.push(format!("[%eval {}]", eval_text(s)));
            }
            comment.push(format!("[%emt {}]", clock_text(m.time)));
            if let Some(c) = m.clock {
                comment.push(format!("[%clk {}]", clock_text(c)));
            }
            if let Some(d) = m.depth {
                comment.push(format!("depth {d}"));
            }
        }
        if !comment.is_empty() {
            tokens.push(format!("{{{}}}", comment.join(" ")));
            need_number = true;
        }
        if !white_moves {
            fullmove += 1;
        }
    }
    tokens.push(format!("{{{}}}", game.end.reason.replace('}', ")")));
    tokens.push(game.end.result.pgn().to_owned());
    write_movetext(&mut out, tokens);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameEnd, GameResult, MoveRecord, Termination};

    #[test]
    fn movetext_numbers_comments_and_tags() {
        let mv = |uci: &str, san: &str, book, score| MoveRecord {
            uci: uci.into(),
            san: san.into(),
            book,
            score_white: score,
            depth: (!book).then_some(7),
            time: Duration::from_millis(1234),
            clock: None,
        };
        let game = GameRecord {
            white: "A \"x\"".into(),
            black: "B".into(),
            start_fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            moves: vec![
                mv("e7e5", "e5", true, None),
                mv("g1f3", "Nf3", false, Some(Score::Cp(35))),
                mv("b8c6", "Nc6", false, Some(Score::Mate(-4))),
            ],
            end: GameEnd::new(GameResult::Draw, Termination::Adjudication, "draw by move limit", None),
        };
        let header =
            PgnHeader { event: "E".into(), site: "S".into(), date: "2026.01.01".into(), tc: TimeControl::Nodes(5) };
        let text = write_game(&header, 3, &game);
        assert!(text.contains("[White \"A \\\"x\\\"\"]\n"), "{text}");
        assert!(text.contains("[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\"]"));
        assert!(
            text.contains("[Round \"3\"]")
                && text.contains("[PlyCount \"3\"]")
                && text.contains("[Termination \"adjudication\"]")
        );
        let movetext = text.split("\n\n").nth(1).unwrap().replace('\n', " ");
        assert_eq!(
            movetext,
            "1... e5 {book} 2. Nf3 {[%eval 0.35] [%emt 0:00:01.234] depth 7} 2... Nc6 {[%eval #-4] [%emt 0:00:01.234] depth 7} {draw by move limit} 1/2-1/2"
        );
    }
}
