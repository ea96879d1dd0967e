//! Opening PGN files as decompressed byte streams, chosen by extension: `.pgn`,
//! `.pgn.gz`, `.pgn.zst`, `.pgn.bz2`.

use std::fs::File;
use std::io::{BufReader, Read};
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
}

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

/// An opened input: the decompressed stream, the file's size and a counter of the
/// compressed bytes consumed so far.
pub struct PgnInput {
    /// Decompressed PGN bytes.
    pub reader: Box<dyn Read + Send>,
    /// Size of the file on disk.
    pub file_size: u64,
    /// Bytes of the file consumed so far.
    pub consumed: Arc<AtomicU64>,
}

/// Opens `path`, decompressing according to its extension.
pub fn open(path: &Path) -> std::io::Result<PgnInput> {
    let file = File::open(path)?;
    let file_size = file.metadata()?.len();
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = BufReader::with_capacity(1 << 16, CountingReader { inner: file, count: consumed.clone() });
    let reader: Box<dyn Read + Send> = match Compression::from_path(path) {
        Compression::None => Box::new(counted),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(counted)?),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(counted)),
    };
    Ok(PgnInput { reader, file_size, consumed })
}
