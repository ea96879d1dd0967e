//! Resuming `games.pgn`: it must hold datagen's games and nothing else, as many complete
//! games as the datasets hold (or one more: the PGN is written before the datasets'
//! checkpoint), with at most a partial game at its end, which is cut off.

use std::fs::OpenOptions;
use std::path::Path;

use crate::error::{DatagenError, io_error};

/// The first line of every game datagen writes.
const GAME_START: &[u8] = b"[Event \"deepchess datagen\"]";
/// How every game datagen writes ends: the result token, then a blank line.
const GAME_ENDS: [&[u8]; 3] = [b" 1-0\n\n", b" 0-1\n\n", b" 1/2-1/2\n\n"];

/// The length of the text holding its first `games` complete games. The error says why
/// `text` is not datagen's PGN of `games` games (foreign text, a game cut short before the
/// last one, or a count that does not match, naming both counts).
pub fn keep_length(text: &[u8], games: u64) -> Result<usize, String> {
    // anywhere, not only at a line's start: a game appended after a partial one is found
    let starts: Vec<usize> = (0..text.len()).filter(|&i| text[i..].starts_with(GAME_START)).collect();
    if starts.first().is_some_and(|&s| s > 0) || (starts.is_empty() && !text.is_empty()) {
        return Err("does not start with a game datagen wrote (`[Event \"deepchess datagen\"]`)".into());
    }
    let mut ends = Vec::with_capacity(starts.len());
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(text.len());
        let complete = GAME_ENDS.iter().any(|e| text[start..end].ends_with(e));
        match (complete, k + 1 == starts.len()) {
            (true, _) => ends.push(end),
            (false, true) => {} // a partial game at the end: a killed run's, cut off
            (false, false) => return Err(format!("game {} of {} is incomplete", k + 1, starts.len())),
        }
    }
    let complete = ends.len() as u64;
    if complete < games || complete > games + 1 {
        return Err(format!(
            "holds {complete} complete games where the datasets hold {games}: they do not belong together"
        ));
    }
    Ok(match games {
        0 => 0,
        n => ends[n as usize - 1],
    })
}

/// Cuts `path` to its first `games` complete games (see [`keep_length`]); returns the bytes
/// cut off.
pub fn cut_to(path: &Path, games: u64) -> Result<u64, DatagenError> {
    let text = std::fs::read(path).map_err(io_error(path))?;
    let keep = keep_length(&text, games).map_err(|e| {
        DatagenError::Invalid(format!(
            "{}: {e}; move it away to resume without it, or --force to start afresh",
            path.display()
        ))
    })?;
    let cut = (text.len() - keep) as u64;
    if cut > 0 {
        let file = OpenOptions::new().write(true).open(path).map_err(io_error(path))?;
        file.set_len(keep as u64).map_err(io_error(path))?;
        file.sync_all().map_err(io_error(path))?;
    }
    Ok(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(round: u32, result: &str) -> String {
        format!("[Event \"deepchess datagen\"]\n[Round \"{round}\"]\n\n5. e4 {{[%eval 0.10]}} {result}\n\n")
    }

    #[test]
    fn complete_games_are_kept_and_a_partial_tail_cut() {
        let two = game(1, "1-0") + &game(2, "1/2-1/2");
        assert_eq!(keep_length(two.as_bytes(), 2), Ok(two.len()));
        let partial = two.clone() + "[Event \"deepchess datagen\"]\n[Round \"3\"]\n\n5. e4 {[%ev";
        assert_eq!(keep_length(partial.as_bytes(), 2), Ok(two.len()));
        // written before the datasets' checkpoint: one game more than they hold
        let three = two.clone() + &game(3, "0-1");
        assert_eq!(keep_length(three.as_bytes(), 2), Ok(two.len()));
        assert_eq!(keep_length(b"", 0), Ok(0));
    }

    #[test]
    fn foreign_or_mismatched_files_are_refused() {
        let two = game(1, "1-0") + &game(2, "0-1");
        let e = keep_length(two.as_bytes(), 5).unwrap_err();
        assert!(e.contains("2 complete games") && e.contains("hold 5"), "{e}");
        assert!(keep_length(two.as_bytes(), 0).unwrap_err().contains("hold 0"));
        let foreign = "[Event \"Casual\"]\n\n1. e4 e5 1-0\n\n".to_string() + &two;
        assert!(keep_length(foreign.as_bytes(), 2).unwrap_err().contains("does not start"));
        assert!(keep_length(b"1. e4 e5 1-0\n\n", 0).unwrap_err().contains("does not start"));
        let broken = game(1, "1-0").replace(" 1-0\n\n", "") + &game(2, "0-1");
        assert!(keep_length(broken.as_bytes(), 1).unwrap_err().contains("game 1 of 2 is incomplete"));
    }
}
