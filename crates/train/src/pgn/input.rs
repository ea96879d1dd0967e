//! Opening PGN files as decompressed byte streams. The compression is told by the file's
//! first bytes, not its name (gzip `1f 8b`, Zstandard `28 b5 2f fd`, bzip2 `BZh`), and
//! the first 64 KiB of text are checked: a UTF-16 or UTF-32 byte-order mark, many NUL or
//! control bytes, or another archive format (xz, zip, 7z) is an error, as no PGN reads
//! from it. Packed self-play games (`*.dcpg.zst`) open as the PGN text they unpack to.

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Compression of an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip.
    Gzip,
    /// Zstandard.
    Zstd,
    /// bzip2.
    Bzip2,
}

impl Compression {
    /// Compression named by the file's extension (plain text when none matches).
    pub fn from_path(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("gz") => Compression::Gzip,
            Some("zst" | "zstd") => Compression::Zstd,
            Some("bz2") => Compression::Bzip2,
            _ => Compression::None,
        }
    }

    /// Compression told by a file's first bytes (plain text when none matches).
    pub fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// Lower-case name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "plain text",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Bzip2 => "bzip2",
        }
    }
}

/// Archive formats read by nothing here, by their first bytes.
const UNSUPPORTED: [(&[u8], &str); 4] = [
    (&[0xfd, b'7', b'z', b'X', b'Z', 0x00], "xz"),
    (b"PK\x03\x04", "zip"),
    (&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c], "7z"),
    (&[0x04, 0x22, 0x4d, 0x18], "lz4"),
];

/// Bytes of decompressed text checked before parsing starts.
pub const SNIFF_BYTES: usize = 1 << 16;

/// Counts the bytes read from the underlying (compressed) file, for progress and ETA.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The bytes read ahead to check them, then the rest of the stream; an error met while
/// reading ahead is returned once the bytes before it are consumed.
struct ReadAhead<R> {
    head: Cursor<Vec<u8>>,
    error: Option<std::io::Error>,
    rest: R,
}

impl<R: Read> Read for ReadAhead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.head.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.rest.read(buf)
    }
}

/// Reads up to `limit` bytes of `reader` (fewer at its end), keeping a read error for later.
fn read_ahead<R: Read>(mut reader: R, limit: usize) -> ReadAhead<R> {
    let mut head = Vec::with_capacity(limit.min(1 << 16));
    let error = (&mut reader).take(limit as u64).read_to_end(&mut head).err();
    ReadAhead { head: Cursor::new(head), error, rest: reader }
}

/// An opened input: the decompressed stream, the file's size and a counter of the
/// compressed bytes consumed so far.
pub struct PgnInput {
    /// Decompressed PGN bytes.
    pub reader: Box<dyn Read + Send>,
    /// Size of the file on disk.
    pub file_size: u64,
    /// Bytes of the file consumed so far.
    pub consumed: Arc<AtomicU64>,
    /// The compression found.
    pub compression: Compression,
}

fn not_pgn(reason: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
}

/// Why the start of a decompressed stream cannot be PGN text, if it cannot.
pub fn check_text(head: &[u8]) -> Result<(), String> {
    let boms: [(&[u8], &str); 4] = [
        (&[0x00, 0x00, 0xfe, 0xff], "UTF-32 (big-endian)"),
        (&[0xff, 0xfe, 0x00, 0x00], "UTF-32 (little-endian)"),
        (&[0xfe, 0xff], "UTF-16 (big-endian)"),
        (&[0xff, 0xfe], "UTF-16 (little-endian)"),
    ];
    if let Some((_, name)) = boms.iter().find(|(bom, _)| head.starts_with(bom)) {
        return Err(format!("{name} text (byte-order mark at the start): PGN is read as UTF-8; convert the file"));
    }
    if head.is_empty() {
        return Ok(());
    }
    let nul = head.iter().filter(|&&b| b == 0).count();
    let control = head.iter().filter(|&&b| matches!(b, 0x01..=0x08 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f)).count();
    // UTF-16 without a mark has a NUL in every other byte of ASCII text; binary data a NUL
    // in 1 of 256 bytes and a control byte in 1 of 10; PGN text neither
    if nul * 100 > head.len() || (nul + control) * 20 > head.len() {
        return Err(format!(
            "not PGN text: {nul} NUL and {control} other control bytes in its first {} bytes (binary data, UTF-16 without a byte-order mark, or an unknown compression)",
            head.len()
        ));
    }
    Ok(())
}

/// Opens `path`, decompressing by the file's first bytes, and checks that the start of the
/// text can be PGN (see [`check_text`]); the errors say what the file is instead.
pub fn open(path: &Path) -> std::io::Result<PgnInput> {
    let file = File::open(path)?;
    let metadata = file.metadata()?;
    if metadata.is_dir() {
        return Err(not_pgn("is a directory, not a PGN file".into()));
    }
    let file_size = metadata.len();
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = BufReader::with_capacity(1 << 16, CountingReader { inner: file, count: consumed.clone() });
    let mut magic = read_ahead(counted, 8);
    if let Some(e) = magic.error.take() {
        return Err(e);
    }
    let head = magic.head.get_ref().clone();
    if let Some((_, name)) = UNSUPPORTED.iter().find(|(m, _)| head.starts_with(m)) {
        return Err(not_pgn(format!(
            "{name}-compressed, which is not read here: decompress it, or recompress it with gzip, zstd or bzip2"
        )));
    }
    let compression = Compression::from_magic(&head);
    let decoded: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(magic),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(magic)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(magic)?),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(magic)),
    };
    let mut text = read_ahead(decoded, SNIFF_BYTES);
    if text.head.get_ref().starts_with(deepchess_core::packed_games::MAGIC) {
        let mut bytes = Vec::new();
        text.read_to_end(&mut bytes)?;
        let games = deepchess_core::packed_games::decode(&bytes)
            .map_err(|e| not_pgn(format!("packed games that cannot be read: {e}")))?;
        let pgn: String = games.iter().map(deepchess_core::selfplay_game::SelfPlayGame::pgn).collect();
        return Ok(PgnInput { reader: Box::new(Cursor::new(pgn.into_bytes())), file_size, consumed, compression });
    }
    check_text(text.head.get_ref()).map_err(not_pgn)?;
    if text.head.get_ref().starts_with(&[0xef, 0xbb, 0xbf]) {
        text.head.set_position(3); // a UTF-8 byte-order mark
    }
    Ok(PgnInput { reader: Box::new(text), file_size, consumed, compression })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_is_told_by_content() {
        assert_eq!(Compression::from_magic(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(Compression::from_magic(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Compression::Zstd);
        assert_eq!(Compression::from_magic(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::from_magic(b"[Event \"x\"]"), Compression::None);
        assert_eq!(Compression::from_magic(b""), Compression::None);
    }

    #[test]
    fn packed_games_open_as_their_pgn() {
        use deepchess_core::selfplay_game::{SelfPlayGame, TERMINATIONS};
        use shakmaty::{Chess, Position};
        let start = Chess::default();
        let moves = vec![start.legal_moves()[5]];
        let game = SelfPlayGame { round: 2, start, moves, evals: vec![40], result: 1, termination: TERMINATIONS[0] };
        let path = std::env::temp_dir().join(format!("deepchess-input-{}.dcpg.zst", std::process::id()));
        std::fs::write(&path, crate::packed::compress(std::slice::from_ref(&game)).unwrap()).unwrap();
        let mut text = String::new();
        open(&path).unwrap().reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, game.pgn());
        std::fs::write(&path, &deepchess_core::packed_games::encode(&[game]).unwrap()[..20]).unwrap();
        let error = open(&path).err().unwrap().to_string();
        assert!(error.contains("packed games that cannot be read: the data ends inside"), "{error}");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn text_checks() {
        let pgn = b"[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n".repeat(20);
        assert_eq!(check_text(&pgn), Ok(()));
        assert_eq!(check_text(b""), Ok(()));
        let latin1: Vec<u8> = pgn.iter().map(|&b| if b == b'a' { 0xe9 } else { b }).collect();
        assert_eq!(check_text(&latin1), Ok(()), "bytes above 127 are text");
        let utf16: Vec<u8> = [0xff, 0xfe].into_iter().chain(pgn.iter().flat_map(|&b| [b, 0])).collect();
        assert!(check_text(&utf16).unwrap_err().contains("UTF-16 (little-endian)"));
        let bare: Vec<u8> = pgn.iter().flat_map(|&b| [0, b]).collect();
        assert!(check_text(&bare).unwrap_err().contains("NUL"));
        let mut state = 7u64;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect();
        assert!(check_text(&noise).unwrap_err().contains("not PGN text"));
    }
}
