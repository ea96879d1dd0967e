//! Cuts a PGN byte stream into batches of whole games, so that batches can be parsed
//! in parallel while the stream is read once, sequentially, in bounded memory.
//!
//! A game starts at a line beginning with `[` (a tag) outside any `{…}` comment, once
//! the previous game has had movetext. Cutting only there never splits a game.

use std::io::Read;

/// Bytes requested from the stream at a time.
const READ_CHUNK: u64 = 1 << 18;

/// Scans PGN text for game starts, remembering its state across buffer refills.
#[derive(Default)]
struct BoundaryScanner {
    in_brace_comment: bool,
    in_line_comment: bool,
    at_line_start: bool,
    on_tag_line: bool,
    seen_movetext: bool,
}

impl BoundaryScanner {
    fn new() -> Self {
        BoundaryScanner { at_line_start: true, ..Default::default() }
    }

    /// Scans `bytes` and returns the offset of the last game start found in it, if any.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut last = None;
        for (i, &b) in bytes.iter().enumerate() {
            let line_start = self.at_line_start;
            self.at_line_start = b == b'\n';
            if self.in_brace_comment {
                self.in_brace_comment = b != b'}';
                continue;
            }
            if self.in_line_comment {
                self.in_line_comment = b != b'\n';
                continue;
            }
            if line_start {
                self.on_tag_line = b == b'[';
                if self.on_tag_line && self.seen_movetext {
                    last = Some(i);
                    self.seen_movetext = false;
                }
            }
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ if self.on_tag_line => {}
                b'{' => self.in_brace_comment = true,
                b';' => self.in_line_comment = true,
                _ => self.seen_movetext = true,
            }
        }
        last
    }
}

/// Reads a stream and yields batches of whole games of about `target` bytes.
pub struct GameBatches<R> {
    reader: R,
    scanner: BoundaryScanner,
    pending: Vec<u8>,
    scanned: usize,
    target: usize,
    done: bool,
}

impl<R: Read> GameBatches<R> {
    /// Batches of about `target` bytes (a single game larger than that is one batch).
    pub fn new(reader: R, target: usize) -> Self {
        GameBatches { reader, scanner: BoundaryScanner::new(), pending: Vec::new(), scanned: 0, target, done: false }
    }

    /// The next batch; `Ok(None)` at the end of the stream. After an error the stream
    /// is abandoned: bytes of a game that was not complete are never returned.
    pub fn next_batch(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut cut = None;
        while !self.done {
            if self.pending.len() >= self.target {
                // Find the last game start in what has not been scanned yet.
                if let Some(at) = self.scanner.scan(&self.pending[self.scanned..]) {
                    cut = Some(self.scanned + at);
                }
                self.scanned = self.pending.len();
                if let Some(at) = cut.filter(|&at| at > 0) {
                    let rest = self.pending.split_off(at);
                    self.scanned -= at;
                    return Ok(Some(std::mem::replace(&mut self.pending, rest)));
                }
            }
            // `read_to_end` on a `Take` grows the buffer as needed and retries interrupts.
            match (&mut self.reader).take(READ_CHUNK).read_to_end(&mut self.pending) {
                Ok(n) => self.done = n == 0,
                Err(e) => {
                    self.pending.clear();
                    self.done = true;
                    return Err(e);
                }
            }
        }
        if self.pending.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        self.scanned = 0;
        Ok(Some(std::mem::take(&mut self.pending)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(text: &str, target: usize) -> Vec<String> {
        let mut b = GameBatches::new(text.as_bytes(), target);
        let mut out = Vec::new();
        while let Some(batch) = b.next_batch().unwrap() {
            out.push(String::from_utf8(batch).unwrap());
        }
        out
    }

    #[test]
    fn cuts_only_at_game_starts() {
        let game = "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 {a comment\n[not a tag]} e5 1-0\n\n";
        let text = game.repeat(50);
        for target in [1, 7, 64, 200, 10_000] {
            let out = batches(&text, target);
            assert_eq!(out.concat(), text, "target {target}");
            for b in &out {
                assert!(b.starts_with("[Event"), "target {target}: batch starts {:?}", &b[..10]);
                assert_eq!(b.matches("[Event").count() * game.len(), b.len());
            }
        }
    }

    #[test]
    fn games_without_blank_lines_and_line_comments() {
        let text = "[Event \"a\"]\n1. e4 ; {\ne5 1-0\n[Event \"b\"]\n1. d4 d5 0-1\n";
        let out = batches(text, 1);
        assert_eq!(out, vec!["[Event \"a\"]\n1. e4 ; {\ne5 1-0\n", "[Event \"b\"]\n1. d4 d5 0-1\n"]);
    }
}
