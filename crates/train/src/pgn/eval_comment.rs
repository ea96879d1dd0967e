//! Reads `[%eval …]` annotations from PGN comments, as lichess and TCEC write them:
//! `[%eval 0.47]` (pawns, White's view) or `[%eval #-5]` (mate in 5 for Black).

use deepchess_core::record::{EVAL_CP_LIMIT, MATE_BASE};

/// The evaluation in a comment, as stored in records: centipawns clamped to
/// ±[`EVAL_CP_LIMIT`], mate in `n` as `±(MATE_BASE − n)`. `None` when the comment has no
/// readable `[%eval]`.
pub fn parse_eval(comment: &[u8]) -> Option<i16> {
    const TAG: &[u8] = b"[%eval";
    let start = comment.windows(TAG.len()).position(|w| w == TAG)? + TAG.len();
    let rest = &comment[start..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace())?..];
    let end = rest.iter().position(|&b| b == b']' || b == b',' || b.is_ascii_whitespace()).unwrap_or(rest.len());
    let token = std::str::from_utf8(&rest[..end]).ok()?;
    if let Some(mate) = token.strip_prefix('#') {
        let n: i32 = mate.parse().ok()?;
        let distance = n.unsigned_abs().min((MATE_BASE - EVAL_CP_LIMIT - 1) as u32) as i16;
        return match n.signum() {
            0 => None,
            s => Some(s as i16 * (MATE_BASE - distance)),
        };
    }
    let pawns: f64 = token.parse().ok()?;
    if !pawns.is_finite() {
        return None;
    }
    let cp = (pawns * 100.0).round().clamp(-f64::from(EVAL_CP_LIMIT), f64::from(EVAL_CP_LIMIT));
    Some(cp as i16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pawns_and_mates() {
        assert_eq!(parse_eval(b"[%eval 0.47]"), Some(47));
        assert_eq!(parse_eval(b" [%eval -1.234] [%clk 0:01:00] "), Some(-123));
        assert_eq!(parse_eval(b"[%eval #12]"), Some(MATE_BASE - 12));
        assert_eq!(parse_eval(b"[%eval #-5]"), Some(-(MATE_BASE - 5)));
        assert_eq!(parse_eval(b"[%eval 999.0]"), Some(EVAL_CP_LIMIT));
        assert_eq!(parse_eval(b"[%eval 0.3,12]"), Some(30));
    }

    #[test]
    fn ignores_what_is_not_an_eval() {
        for c in [&b"book"[..], b"[%eval]", b"[%eval x]", b"[%eval #0]", b"[%eval NaN]", b"[%clk 0:00:01]", b"[%eval"] {
            assert_eq!(parse_eval(c), None, "{}", String::from_utf8_lossy(c));
        }
    }
}
