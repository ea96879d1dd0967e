//! EPD (Extended Position Description) parsing: the four position fields, optional FEN move
//! counters, and the operations that test suites use (`bm`, `am`, `id`, `c0`..`c9`, ...),
//! with quoted and unquoted operands and moves in SAN or UCI notation.

use std::path::Path;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move};

/// One EPD operation: an opcode and its operands (quotes removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The opcode, for example `bm` or `c9`.
    pub opcode: String,
    /// The operands in order; a quoted operand is one operand.
    pub operands: Vec<String>,
}

/// A parsed EPD line.
#[derive(Clone, Debug)]
pub struct EpdLine {
    /// The position.
    pub position: Chess,
    /// The position as a full FEN (with move counters), as sent to engines.
    pub fen: String,
    /// Every operation in the order written.
    pub operations: Vec<Operation>,
}

impl EpdLine {
    /// The operands of the first operation named `opcode`, if any.
    pub fn operands(&self, opcode: &str) -> Option<&[String]> {
        self.operations.iter().find(|op| op.opcode == opcode).map(|op| op.operands.as_slice())
    }
}

/// A bad EPD line: its 1-based line number and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LineError {
    /// 1-based line number in the file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses one EPD line (without its line terminator). Moves in operations are not checked
/// here; see [`parse_move`].
pub fn parse_line(text: &str) -> Result<EpdLine, String> {
    let mut rest = text.trim();
    let mut fields = Vec::with_capacity(4);
    for _ in 0..4 {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        fields.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    if fields.len() < 4 {
        return Err(format!("expected 4 position fields (board, side, castling, en passant), found {}", fields.len()));
    }
    let mut operations = tokenize_operations(rest)?;
    // FEN-style move counters written after the en passant field ("... - 0 1 bm e4;").
    let mut counters = (0u32, 1u32);
    if let Some(first) = operations.first()
        && first.opcode.bytes().all(|b| b.is_ascii_digit())
    {
        let half = first.opcode.parse().map_err(|_| format!("bad halfmove clock \"{}\"", first.opcode))?;
        let (full, opcode, operands) = match first.operands.split_first() {
            Some((n, tail)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                let (op, rest) = tail.split_first().map_or((None, &[][..]), |(o, r)| (Some(o.clone()), r));
                (n.parse().map_err(|_| format!("bad fullmove number \"{n}\""))?, op, rest.to_vec())
            }
            _ => return Err(format!("halfmove clock \"{}\" without a fullmove number", first.opcode)),
        };
        counters = (half, full);
        match opcode {
            Some(opcode) => operations[0] = Operation { opcode, operands },
            None => {
                operations.remove(0);
            }
        }
    }
    for op in &operations {
        let number = |name: &str| -> Result<Option<u32>, String> {
            if op.opcode != name {
                return Ok(None);
            }
            let value = op.operands.first().ok_or(format!("{name} without a value"))?;
            value.parse().map(Some).map_err(|_| format!("bad {name} \"{value}\""))
        };
        if let Some(h) = number("hmvc")? {
            counters.0 = h;
        }
        if let Some(f) = number("fmvn")? {
            counters.1 = f;
        }
    }
    let fen_text =
        format!("{} {} {} {} {} {}", fields[0], fields[1], fields[2], fields[3], counters.0, counters.1.max(1));
    let fen: Fen = fen_text.parse().map_err(|e| format!("bad position \"{}\": {e}", fields.join(" ")))?;
    let position: Chess = fen
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position \"{}\": {e}", fields.join(" ")))?;
    let fen = Fen::from_position(&position, EnPassantMode::Legal).to_string();
    Ok(EpdLine { position, fen, operations })
}

/// Splits `opcode operand ... ;` sequences. Quoted operands may hold spaces and semicolons;
/// the last semicolon may be missing.
fn tokenize_operations(text: &str) -> Result<Vec<Operation>, String> {
    let mut operations = Vec::new();
    let mut current: Option<Operation> = None;
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == ';' {
            chars.next();
            match current.take() {
                Some(op) => operations.push(op),
                None => return Err(format!("empty operation at column {}", start + 1)),
            }
        } else if c == '"' {
            chars.next();
            let mut value = String::new();
            let mut closed = false;
            for (_, c) in chars.by_ref() {
                if c == '"' {
                    closed = true;
                    break;
                }
                value.push(c);
            }
            if !closed {
                return Err(format!("unterminated quoted operand starting at column {}", start + 1));
            }
            match current.as_mut() {
                Some(op) => op.operands.push(value),
                None => return Err(format!("quoted operand without an opcode at column {}", start + 1)),
            }
        } else {
            let mut token = String::new();
            while let Some(&(_, c)) = chars.peek() {
                if c.is_whitespace() || c == ';' || c == '"' {
                    break;
                }
                token.push(c);
                chars.next();
            }
            match current.as_mut() {
                Some(op) => op.operands.push(token),
                None => current = Some(Operation { opcode: token, operands: Vec::new() }),
            }
        }
    }
    operations.extend(current);
    Ok(operations)
}

/// Reads a move in SAN (`Nf3`, `exd5+`, `O-O`, with `!`/`?` annotations) or UCI (`g1f3`)
/// notation and checks it is legal in `position`.
pub fn parse_move(position: &Chess, text: &str) -> Result<Move, String> {
    let clean = text.trim_end_matches(['!', '?']);
    if let Ok(san) = clean.parse::<SanPlus>()
        && let Ok(m) = san.san.to_move(position)
    {
        return Ok(m);
    }
    if let Ok(uci) = clean.parse::<UciMove>()
        && let Ok(m) = uci.to_move(position)
    {
        return Ok(m);
    }
    Err(format!("\"{text}\" is not a legal move (SAN or UCI) in this position"))
}

/// Reads a file as numbered non-empty lines, skipping blank lines and `#` comments. A line
/// that is not UTF-8 text is an `Err` naming the first bad byte, for the caller to report
/// and skip as it does other bad lines.
pub fn read_lines(path: &Path) -> std::io::Result<Vec<(usize, Result<String, String>)>> {
    let bytes = std::fs::read(path).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let mut lines = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            Err(e) => {
                let at = e.valid_up_to();
                let message = format!("not UTF-8 text (byte {} of the line is 0x{:02x})", at + 1, raw[at]);
                lines.push((i + 1, Err(message)));
                continue;
            }
        };
        if !text.trim().is_empty() && !text.trim_start().starts_with('#') {
            lines.push((i + 1, Ok(text.to_owned())));
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sts_line_with_quoted_operands() {
        let line = parse_line(
            "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id \"STS(v1.0) Undermine.001\"; \
             c0 \"f5=10, Be5+=2, Bf2=3, Bg4=2\"; c7 \"f5 Be5+ Bf2 Bg4\"; c8 \"10 2 3 2\"; c9 \"f4f5 d4e5 d4f2 f3g4\";",
        )
        .unwrap();
        assert_eq!(line.operands("bm").unwrap(), ["f5"]);
        assert_eq!(line.operands("id").unwrap(), ["STS(v1.0) Undermine.001"]);
        assert_eq!(line.operands("c8").unwrap(), ["10 2 3 2"]);
        assert_eq!(line.fen, "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - 0 1");
    }

    #[test]
    fn unquoted_operands_counters_and_missing_semicolon() {
        let line =
            parse_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3 7 bm e4 d2d4; am Nh3; hmvc 5").unwrap();
        assert_eq!(line.operands("bm").unwrap(), ["e4", "d2d4"]);
        assert_eq!(line.operands("am").unwrap(), ["Nh3"]);
        assert!(line.fen.ends_with(" 5 7"), "{}", line.fen);
        let semicolon_in_quotes = parse_line("8/8/8/8/8/8/k7/2K5 w - - id \"a;b\"; c0 \"x\"").unwrap();
        assert_eq!(semicolon_in_quotes.operands("id").unwrap(), ["a;b"]);
        assert_eq!(semicolon_in_quotes.operands("c0").unwrap(), ["x"]);
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(parse_line("8/8/8 w - -").unwrap_err().contains("bad position"));
        assert!(parse_line("8/8/8/8/8/8/8/8 w").unwrap_err().contains("4 position fields"));
        assert!(parse_line("8/8/8/8/8/8/k7/2K5 w - - id \"open").unwrap_err().contains("unterminated"));
        assert!(parse_line("8/8/8/8/8/8/8/8 w - - bm e4;").unwrap_err().contains("illegal position"));
    }

    #[test]
    fn moves_in_san_and_uci() {
        let pos = Chess::default();
        assert_eq!(parse_move(&pos, "Nf3!").unwrap(), parse_move(&pos, "g1f3").unwrap());
        assert!(parse_move(&pos, "Nf6").unwrap_err().contains("not a legal move"));
        let castle: Chess = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(parse_move(&castle, "O-O").unwrap(), parse_move(&castle, "e1g1").unwrap());
        assert_eq!(parse_move(&castle, "O-O-O+").unwrap(), parse_move(&castle, "e1c1").unwrap());
    }

    #[test]
    fn lines_that_are_not_utf8_are_numbered_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.epd");
        std::fs::write(&path, b"\xef\xbb\xbfa\r\n\n# note\nb \xe9t\xe9\nc\n").unwrap();
        let lines = read_lines(&path).unwrap();
        assert_eq!(lines[0], (1, Ok("a".to_owned())), "byte-order mark and CR dropped");
        assert_eq!(lines[1], (4, Err("not UTF-8 text (byte 3 of the line is 0xe9)".to_owned())));
        assert_eq!(lines[2], (5, Ok("c".to_owned())));
        assert_eq!(lines.len(), 3);
    }
}
