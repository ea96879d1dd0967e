//! Cuts a PGN byte stream into batches of whole games, so that batches can be parsed
//! in parallel while the stream is read once, sequentially, in bounded memory.
//!
//! A game starts at a line beginning with `[` (a tag) outside any `{…}` comment, once
//! the previous game has had movetext. Cutting only there never splits a game.
//!
//! The scan also catches the damage that would otherwise swallow games silently: a game
//! longer than a limit, or a comment longer than an eighth of it (the symptom of a `{`
//! never closed, which turns the rest of the file into one comment), is an error, and a
//! comment running over a line that looks like a tag is a warning; both name the game's
//! number in the stream and its line.

use std::io::Read;

/// Bytes requested from the stream at a time.
const READ_CHUNK: u64 = 1 << 18;

/// Default limit of one game's text: far above any real game (a 600-ply game with long
/// engine comments is some 300 KB), far below a file swallowed by an open comment.
pub const DEFAULT_MAX_GAME_BYTES: u64 = 8 << 20;

/// Where a game starts in the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameStart {
    /// Its number in the stream, from 1.
    pub game: u64,
    /// Its first line, from 1.
    pub line: u64,
    /// Its first byte's offset.
    pub offset: u64,
}

/// Scans PGN text for game starts, remembering its state across buffer refills.
#[derive(Default)]
struct BoundaryScanner {
    in_brace_comment: bool,
    in_line_comment: bool,
    at_line_start: bool,
    on_tag_line: bool,
    seen_movetext: bool,
    /// Offset of the next byte, line of the next byte.
    offset: u64,
    line: u64,
    /// The game being read (`game` 0 before the first).
    current: GameStart,
    /// Line and offset of the `{` of the open comment.
    comment_line: u64,
    comment_offset: u64,
    /// Whether the open comment was already reported.
    comment_reported: bool,
    /// Progress through `[Name "` at the start of a line inside a comment: 1 after `[`,
    /// 2 in the name, 3 after the space.
    tag_probe: u8,
    warnings: Vec<String>,
    /// Longest game and longest comment.
    max_game_bytes: u64,
    max_comment_bytes: u64,
    /// The first game or comment found too long.
    too_large: Option<BatchError>,
}

impl BoundaryScanner {
    fn new(max_game_bytes: u64) -> Self {
        BoundaryScanner {
            at_line_start: true,
            line: 1,
            max_game_bytes,
            max_comment_bytes: max_game_bytes / 8,
            ..Default::default()
        }
    }

    fn start_game(&mut self) {
        self.check_game_length();
        self.current = GameStart { game: self.current.game + 1, line: self.line, offset: self.offset };
    }

    /// Records the game being read as too long if it is.
    fn check_game_length(&mut self) {
        let limit = self.max_game_bytes;
        if self.current.game > 0 && self.offset - self.current.offset > limit && self.too_large.is_none() {
            self.too_large = Some(BatchError::GameTooLarge { start: self.current, limit });
        }
    }

    /// Records the open comment as too long if it is.
    fn check_comment_length(&mut self) {
        let limit = self.max_comment_bytes;
        if self.in_brace_comment && self.offset - self.comment_offset > limit && self.too_large.is_none() {
            let comment_line = self.comment_line;
            self.too_large = Some(BatchError::CommentTooLarge { start: self.current, comment_line, limit });
        }
    }

    /// Follows a tag-like line start inside a comment; warns once per comment.
    fn probe(&mut self, b: u8, line_start: bool) {
        self.tag_probe = match (self.tag_probe, b) {
            (_, b'[') if line_start => 1,
            (1 | 2, b) if b.is_ascii_alphanumeric() || b == b'_' => 2,
            (2 | 3, b' ') => 3,
            (3, b'"') => {
                if !self.comment_reported {
                    self.comment_reported = true;
                    self.warnings.push(format!(
                        "game {} (line {}): the comment opened at line {} runs over a tag at line {}: a `{{` never closed? The games inside the comment are lost",
                        self.current.game, self.current.line, self.comment_line, self.line
                    ));
                }
                0
            }
            _ => 0,
        };
    }

    /// Scans `bytes` and returns the offset of the last game start found in it (after the
    /// first game's), if any.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut last = None;
        for (i, &b) in bytes.iter().enumerate() {
            let line_start = self.at_line_start;
            self.at_line_start = b == b'\n';
            if self.in_brace_comment {
                if b == b'}' {
                    self.check_comment_length();
                }
                self.in_brace_comment = b != b'}';
                self.probe(b, line_start);
            } else if self.in_line_comment {
                self.in_line_comment = b != b'\n';
            } else {
                if line_start {
                    self.on_tag_line = b == b'[';
                    if self.on_tag_line && (self.seen_movetext || self.current.game == 0) {
                        if self.current.game > 0 {
                            last = Some(i);
                        }
                        self.start_game();
                        self.seen_movetext = false;
                    }
                }
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ if self.on_tag_line => {}
                    b'{' => {
                        self.in_brace_comment = true;
                        self.comment_line = self.line;
                        self.comment_offset = self.offset;
                        self.comment_reported = false;
                        self.tag_probe = 0;
                    }
                    b';' => self.in_line_comment = true,
                    _ => {
                        if self.current.game == 0 {
                            self.start_game(); // a game without tags
                        }
                        self.seen_movetext = true;
                    }
                }
            }
            self.offset += 1;
            self.line += u64::from(b == b'\n');
        }
        // the game and the comment still open at the end of the bytes
        self.check_comment_length();
        self.check_game_length();
        last
    }
}

/// Why the stream could not be cut into games.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Reading (decompressing) the stream failed: a truncated or corrupt file.
    #[error("read failed after {complete_games} complete games: {source}")]
    Read {
        /// Games before the one being read when the stream broke off.
        complete_games: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// One comment is longer than the limit.
    #[error(
        "game {} starting at line {}: the comment opened at line {comment_line} runs over {limit} bytes: a `{{` never closed, or a damaged file? (the limit is an eighth of --max-game-bytes)",
        .start.game, .start.line
    )]
    CommentTooLarge {
        /// Where its game starts.
        start: GameStart,
        /// The line of its `{`.
        comment_line: u64,
        /// The limit.
        limit: u64,
    },
    /// One game's text is longer than the limit.
    #[error(
        "game {} starting at line {} runs over {limit} bytes: a `{{` comment never closed, or a damaged file? (--max-game-bytes raises the limit)",
        .start.game, .start.line
    )]
    GameTooLarge {
        /// Where it starts.
        start: GameStart,
        /// The limit.
        limit: u64,
    },
}

/// Reads a stream and yields batches of whole games of about `target` bytes.
pub struct GameBatches<R> {
    reader: R,
    scanner: BoundaryScanner,
    pending: Vec<u8>,
    /// Offset in `pending` of the last game start found there (a place to cut).
    last_start: Option<usize>,
    target: usize,
    done: bool,
    failed: bool,
}

impl<R: Read> GameBatches<R> {
    /// Batches of about `target` bytes (a single game larger than that is one batch), and
    /// no game over [`DEFAULT_MAX_GAME_BYTES`].
    pub fn new(reader: R, target: usize) -> Self {
        GameBatches {
            reader,
            scanner: BoundaryScanner::new(DEFAULT_MAX_GAME_BYTES),
            pending: Vec::new(),
            last_start: None,
            target,
            done: false,
            failed: false,
        }
    }

    /// Sets the limit of one game's text.
    pub fn with_max_game_bytes(mut self, limit: u64) -> Self {
        self.scanner.max_game_bytes = limit;
        self.scanner.max_comment_bytes = limit / 8;
        self
    }

    /// The next batch; `Ok(None)` at the end of the stream. After an error the stream
    /// is abandoned: bytes of a game that was not complete are never returned (the complete
    /// games read before a read error are available from [`salvage`](Self::salvage)).
    pub fn next_batch(&mut self) -> Result<Option<Vec<u8>>, BatchError> {
        if self.failed {
            return Ok(None);
        }
        while !self.done {
            if self.pending.len() >= self.target
                && let Some(at) = self.last_start.take()
            {
                let rest = self.pending.split_off(at);
                return Ok(Some(std::mem::replace(&mut self.pending, rest)));
            }
            let before = self.pending.len();
            // `read_to_end` on a `Take` grows the buffer as needed and retries interrupts.
            let read = (&mut self.reader).take(READ_CHUNK).read_to_end(&mut self.pending);
            if let Some(at) = self.scanner.scan(&self.pending[before..]) {
                self.last_start = Some(before + at);
            }
            if let Some(e) = self.scanner.too_large.take() {
                self.failed = true;
                self.pending.clear();
                return Err(e);
            }
            match read {
                Ok(n) => self.done = n == 0,
                Err(source) => {
                    self.failed = true;
                    let complete_games = self.scanner.current.game.saturating_sub(1);
                    return Err(BatchError::Read { complete_games, source });
                }
            }
        }
        if self.pending.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        self.last_start = None;
        Ok(Some(std::mem::take(&mut self.pending)))
    }

    /// After a read error: the complete games read and not yet returned (everything before
    /// the last game start), if any.
    pub fn salvage(&mut self) -> Option<Vec<u8>> {
        if !self.failed {
            return None;
        }
        let at = self.last_start.take()?;
        self.pending.truncate(at);
        Some(std::mem::take(&mut self.pending))
    }

    /// Warnings found so far (a comment running over a tag), each naming the game and its
    /// lines; they are returned once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.scanner.warnings)
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
        assert!(b.take_warnings().is_empty());
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

    /// `n` small games, numbered from 1 in their Event tag.
    fn games(n: usize) -> String {
        (1..=n).map(|g| format!("[Event \"{g}\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n")).collect()
    }

    #[test]
    fn an_unclosed_comment_is_an_error_naming_the_game_and_line() {
        // game 3 opens a comment that never closes: the rest of the text is inside it
        let text = games(2) + "[Event \"3\"]\n[Result \"1-0\"]\n\n1. e4 { stray\n" + &games(400);
        let mut b = GameBatches::new(text.as_bytes(), 64).with_max_game_bytes(8 * 4096);
        let err = loop {
            match b.next_batch() {
                Ok(Some(batch)) => assert!(!String::from_utf8(batch).unwrap().contains("stray")),
                Ok(None) => panic!("the open comment went unnoticed"),
                Err(e) => break e,
            }
        };
        let err = err.to_string();
        assert!(err.contains("game 3 starting at line 11") && err.contains("opened at line 14"), "{err}");
        assert!(err.contains("over 4096 bytes"), "{err}");
        let warnings = b.take_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("game 3 (line 11)") && warnings[0].contains("opened at line 14"), "{warnings:?}");
        assert!(warnings[0].contains("tag at line 15"), "{warnings:?}");
    }

    #[test]
    fn a_game_too_long_is_an_error_naming_it() {
        // game 2 has 400 games' movetext glued on: no comment, just far too long
        let moves = "1. e4 e5 2. Nf3 Nc6 ".repeat(400);
        let text = games(1) + "[Event \"2\"]\n[Result \"1-0\"]\n\n" + &moves + "1-0\n\n" + &games(3);
        let mut b = GameBatches::new(text.as_bytes(), 1 << 20).with_max_game_bytes(4000);
        let err = match b.next_batch() {
            Err(e) => e.to_string(),
            Ok(batch) => panic!("no error; a batch of {:?} bytes", batch.map(|b| b.len())),
        };
        assert!(err.contains("game 2 starting at line 6 runs over 4000 bytes"), "{err}");
        let mut b = GameBatches::new(text.as_bytes(), 1 << 20).with_max_game_bytes(10_000);
        assert!(b.next_batch().unwrap().unwrap() == text.as_bytes(), "within the limit");
    }

    /// A reader that fails after `ok` bytes, like a truncated compressed stream.
    struct Broken<'a> {
        text: &'a [u8],
        ok: usize,
    }

    impl Read for Broken<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.ok == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "stream cut"));
            }
            let n = buf.len().min(self.ok).min(self.text.len());
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            self.ok -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_broken_stream_keeps_its_complete_games_for_salvage() {
        let text = games(10);
        let cut = text.find("[Event \"8\"]").unwrap() + 30; // inside game 8
        let mut b = GameBatches::new(Broken { text: text.as_bytes(), ok: cut }, 1 << 20);
        match b.next_batch() {
            Err(BatchError::Read { complete_games: 7, .. }) => {}
            other => panic!("{other:?}"),
        }
        let kept = String::from_utf8(b.salvage().unwrap()).unwrap();
        assert_eq!(kept, text[..text.find("[Event \"8\"]").unwrap()]);
        assert!(b.salvage().is_none() && b.next_batch().unwrap().is_none());
    }
}
