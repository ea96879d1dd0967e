//! The text form of a dataset, as bullet reads it: one line per record,
//! `FEN | score | result`, the score in centipawns from White's view and the result 1.0,
//! 0.5 or 0.0 from White's view; and the way back to records.

use deepchess_core::record::RecordError;
use deepchess_core::{GameInfo, Record};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

/// The text line of `record`; `None` for a record without an evaluation.
pub fn to_line(record: &Record) -> Result<Option<String>, RecordError> {
    let Some(eval) = record.eval() else { return Ok(None) };
    let fen = Fen::from_position(&record.position()?, EnPassantMode::Legal);
    let result = match record.result() {
        1 => "1.0",
        -1 => "0.0",
        _ => "0.5",
    };
    Ok(Some(format!("{fen} | {eval} | {result}")))
}

/// A record from a text line: the position, score and result (the ply from the FEN's move
/// number; no game number, no move). The error says what is wrong with the line.
pub fn from_line(line: &str) -> Result<Record, String> {
    let mut fields = line.split('|').map(str::trim);
    let (Some(fen), Some(score), Some(result), None) = (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(format!("expected `FEN | score | result`, got `{line}`"));
    };
    let position: Chess = fen
        .parse::<Fen>()
        .map_err(|e| format!("FEN `{fen}`: {e}"))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("FEN `{fen}`: {e}"))?;
    let score: i16 = score.parse().map_err(|_| format!("score `{score}` is not an integer"))?;
    let result = match result {
        "1.0" | "1" => 1,
        "0.5" => 0,
        "0.0" | "0" => -1,
        other => return Err(format!("result `{other}` is not 1.0, 0.5 or 0.0")),
    };
    let ply = 2 * (position.fullmoves().get() - 1) + u32::from(position.turn() == Color::Black);
    let ply = ply.min(u32::from(u16::MAX)) as u16;
    Record::new(&position, ply, score, GameInfo { game: 0, result }, None).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::record::EVAL_NONE;

    #[test]
    fn lines_round_trip_and_bad_lines_say_why() {
        let fen = "r3k2r/8/8/8/3pP3/8/8/R3K2R b KQkq e3 3 20";
        let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let record = Record::new(&position, 39, -29_995, GameInfo { game: 7, result: -1 }, None).unwrap();
        let line = to_line(&record).unwrap().unwrap();
        assert_eq!(line, format!("{fen} | -29995 | 0.0"));
        let back = from_line(&line).unwrap();
        assert_eq!((back.eval(), back.result()), (Some(-29_995), -1));
        assert_eq!(to_line(&back).unwrap().unwrap(), line);
        let none = Record::new(&position, 39, EVAL_NONE, GameInfo { game: 7, result: 0 }, None).unwrap();
        assert_eq!(to_line(&none).unwrap(), None);
        assert!(from_line("8/8/8 w - - 0 1 | 3 | 1.0").unwrap_err().contains("FEN"));
        assert!(from_line(&format!("{fen} | x | 1.0")).unwrap_err().contains("score"));
        assert!(from_line(&format!("{fen} | 3 | 2")).unwrap_err().contains("result"));
        assert!(from_line(fen).unwrap_err().contains("expected"));
    }
}
