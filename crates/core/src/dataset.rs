//! Dataset files: a 64-byte versioned header followed by fixed-size [`Record`]s,
//! written as a stream and read back by memory map with random access.
//!
//! Header layout (little-endian, see `docs/dataset-format.md`):
//!
//! | bytes  | field                                           |
//! |--------|-------------------------------------------------|
//! | 0..8   | magic `DCHSDATA`                                |
//! | 8..12  | format version (1)                              |
//! | 12..16 | record size in bytes (40)                       |
//! | 16..24 | record count                                    |
//! | 24..28 | content: 1 = positions, 2 = moves               |
//! | 28     | split: 0 = training, 1 = validation             |
//! | 29..64 | reserved, zero                                  |

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::record::{RECORD_SIZE, Record};

/// File magic.
pub const MAGIC: [u8; 8] = *b"DCHSDATA";
/// Current format version.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_SIZE: usize = 64;

/// What a dataset's records are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Content {
    /// Positions for the comparator and the evaluation net.
    Positions,
    /// Positions with the move played, for the move predictors.
    Moves,
}

/// Which side of the by-game split a dataset holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Training games.
    Train,
    /// Validation games, never trained on.
    Validation,
}

impl Content {
    /// All contents, in file order.
    pub const ALL: [Content; 2] = [Content::Positions, Content::Moves];

    fn code(self) -> u32 {
        match self {
            Content::Positions => 1,
            Content::Moves => 2,
        }
    }

    /// Lower-case name used in file names.
    pub fn name(self) -> &'static str {
        match self {
            Content::Positions => "positions",
            Content::Moves => "moves",
        }
    }
}

impl Split {
    /// Both splits.
    pub const ALL: [Split; 2] = [Split::Train, Split::Validation];

    /// Name used in file names.
    pub fn name(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Validation => "validation",
        }
    }
}

/// File name of a dataset inside a prepared directory, e.g. `positions-train.bin`.
pub fn file_name(content: Content, split: Split) -> String {
    format!("{}-{}.bin", content.name(), split.name())
}

/// Errors reading or writing dataset files; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a dataset or is damaged.
    #[error("{path}: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DatasetError + '_ {
    move |source| DatasetError::Io { path: path.to_path_buf(), source }
}

fn header(content: Content, split: Split, count: u64) -> [u8; HEADER_SIZE] {
    let mut h = [0u8; HEADER_SIZE];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(RECORD_SIZE as u32).to_le_bytes());
    h[16..24].copy_from_slice(&count.to_le_bytes());
    h[24..28].copy_from_slice(&content.code().to_le_bytes());
    h[28] = match split {
        Split::Train => 0,
        Split::Validation => 1,
    };
    h
}

/// Reads a header: content, split and record count; an error names `path` and what is wrong.
fn parse_header(bytes: &[u8], path: &Path) -> Result<(Content, Split, u64), DatasetError> {
    let format = |reason: String| DatasetError::Format { path: path.to_path_buf(), reason };
    if bytes.len() < HEADER_SIZE || bytes[0..8] != MAGIC {
        return Err(format("not a deepchess dataset (bad magic)".into()));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version != VERSION {
        return Err(format(format!("dataset format version {version}, this build reads {VERSION}")));
    }
    let size = u32_at(12) as usize;
    if size != RECORD_SIZE {
        return Err(format(format!("record size {size}, expected {RECORD_SIZE}")));
    }
    let count = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let content = match u32_at(24) {
        1 => Content::Positions,
        2 => Content::Moves,
        c => return Err(format(format!("unknown content code {c}"))),
    };
    let split = match bytes[28] {
        0 => Split::Train,
        1 => Split::Validation,
        s => return Err(format(format!("unknown split code {s}"))),
    };
    Ok((content, split, count))
}

/// The file length a header's record count calls for (`None` on overflow).
fn expected_len(count: u64) -> Option<u64> {
    (HEADER_SIZE as u64).checked_add(count.checked_mul(RECORD_SIZE as u64)?)
}

/// Streams records into a dataset file; the count is written by [`finish`](Self::finish)
/// and, for files that grow over a long run, by [`checkpoint`](Self::checkpoint).
pub struct DatasetWriter {
    path: PathBuf,
    out: BufWriter<File>,
    content: Content,
    split: Split,
    count: u64,
}

impl DatasetWriter {
    /// Creates (truncates) `path` and writes a provisional header.
    pub fn create(path: &Path, content: Content, split: Split) -> Result<Self, DatasetError> {
        let file = File::create(path).map_err(io_err(path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&header(content, split, 0)).map_err(io_err(path))?;
        Ok(DatasetWriter { path: path.to_path_buf(), out, content, split, count: 0 })
    }

    /// Continues `path` if it exists (a new file otherwise): its header must say `content`
    /// and `split`, and records beyond the header's count (a killed writer's partial tail)
    /// are cut off, so the file holds exactly the records of its last checkpoint.
    pub fn append(path: &Path, content: Content, split: Split) -> Result<Self, DatasetError> {
        if !path.exists() {
            // the header reaches the disk at once: a reader finds a valid, empty dataset
            let mut writer = DatasetWriter::create(path, content, split)?;
            writer.checkpoint()?;
            return Ok(writer);
        }
        let format = |reason: String| DatasetError::Format { path: path.to_path_buf(), reason };
        let mut file = OpenOptions::new().read(true).write(true).open(path).map_err(io_err(path))?;
        let mut bytes = [0u8; HEADER_SIZE];
        let read = file.read(&mut bytes).map_err(io_err(path))?;
        let (found_content, found_split, count) = parse_header(&bytes[..read], path)?;
        if (found_content, found_split) != (content, split) {
            return Err(format(format!(
                "holds {} {} records, expected {} {}",
                found_split.name(),
                found_content.name(),
                split.name(),
                content.name()
            )));
        }
        let len = file.metadata().map_err(io_err(path))?.len();
        let wanted = expected_len(count).filter(|&w| w <= len).ok_or_else(|| {
            format(format!("header says {count} records but the file has only {len} bytes (truncated)"))
        })?;
        file.set_len(wanted).map_err(io_err(path))?;
        file.seek(SeekFrom::End(0)).map_err(io_err(path))?;
        let out = BufWriter::with_capacity(1 << 20, file);
        Ok(DatasetWriter { path: path.to_path_buf(), out, content, split, count })
    }

    /// Appends one record.
    pub fn push(&mut self, record: &Record) -> Result<(), DatasetError> {
        self.out.write_all(record.as_bytes()).map_err(io_err(&self.path))?;
        self.count += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Writes the records pushed so far and then the header's count (in that order, so a
    /// kill at any point leaves a file [`append`](Self::append) can continue), and goes on.
    pub fn checkpoint(&mut self) -> Result<(), DatasetError> {
        let path = &self.path;
        self.out.flush().map_err(io_err(path))?;
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
        file.write_all(&header(self.content, self.split, self.count)).map_err(io_err(path))?;
        file.seek(SeekFrom::End(0)).map_err(io_err(path))?;
        Ok(())
    }

    /// Writes the final header and flushes the file to disk. Returns the record count.
    pub fn finish(self) -> Result<u64, DatasetError> {
        let DatasetWriter { path, out, content, split, count } = self;
        let mut file = out.into_inner().map_err(|e| io_err(&path)(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io_err(&path))?;
        file.write_all(&header(content, split, count)).map_err(io_err(&path))?;
        file.sync_all().map_err(io_err(&path))?;
        Ok(count)
    }
}

/// A dataset file opened by memory map: random access to every record.
pub struct Dataset {
    map: Mmap,
    content: Content,
    split: Split,
    len: usize,
}

impl Dataset {
    /// Opens and validates a dataset file.
    pub fn open(path: &Path) -> Result<Dataset, DatasetError> {
        let file = File::open(path).map_err(io_err(path))?;
        // SAFETY: the file is opened read-only; datasets are written under a temporary name
        // and renamed, or (datagen) only grow at the end while the header's count, checked
        // against the length below, describes the records already there.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err(path))?;
        let (content, split, count) = parse_header(&map, path)?;
        if expected_len(count) != Some(map.len() as u64) {
            return Err(DatasetError::Format {
                path: path.to_path_buf(),
                reason: format!(
                    "header says {count} records but the file has {} bytes (truncated or unfinished)",
                    map.len()
                ),
            });
        }
        Ok(Dataset { map, content, split, len: count as usize })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the dataset holds no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What the records are for.
    pub fn content(&self) -> Content {
        self.content
    }

    /// Training or validation.
    pub fn split(&self) -> Split {
        self.split
    }

    /// Record `i`; panics when `i >= len()`, like slice indexing.
    pub fn get(&self, i: usize) -> Record {
        let start = HEADER_SIZE + i * RECORD_SIZE;
        Record::from_bytes(self.map[start..start + RECORD_SIZE].try_into().expect("record size"))
    }

    /// All records in file order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Record> + '_ {
        (0..self.len).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{EVAL_NONE, GameInfo};
    use shakmaty::Chess;

    #[test]
    fn write_then_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name(Content::Moves, Split::Validation));
        let mut w = DatasetWriter::create(&path, Content::Moves, Split::Validation).unwrap();
        for game in 0..5 {
            let r = Record::new(&Chess::default(), 0, EVAL_NONE, GameInfo { game, result: 0 }, None);
            w.push(&r.unwrap()).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 5);
        let d = Dataset::open(&path).unwrap();
        assert_eq!((d.len(), d.content(), d.split()), (5, Content::Moves, Split::Validation));
        assert_eq!(d.get(3).game(), 3);
        assert_eq!(d.iter().map(|r| r.game()).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn truncated_and_foreign_files_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let mut w = DatasetWriter::create(&path, Content::Positions, Split::Train).unwrap();
        let r = Record::new(&Chess::default(), 0, EVAL_NONE, GameInfo { game: 0, result: 1 }, None);
        w.push(&r.unwrap()).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let err = Dataset::open(&path).err().unwrap().to_string();
        assert!(err.contains("x.bin") && err.contains("truncated"), "{err}");
        std::fs::write(&path, b"hello world, certainly not a dataset file at all..............").unwrap();
        assert!(Dataset::open(&path).err().unwrap().to_string().contains("bad magic"));
    }

    #[test]
    fn append_continues_after_a_checkpoint_and_cuts_a_partial_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name(Content::Moves, Split::Train));
        let record = |game| Record::new(&Chess::default(), 0, 5, GameInfo { game, result: 0 }, None).unwrap();
        let mut w = DatasetWriter::append(&path, Content::Moves, Split::Train).unwrap();
        w.push(&record(0)).unwrap();
        w.checkpoint().unwrap();
        assert_eq!(Dataset::open(&path).unwrap().len(), 1);
        w.push(&record(1)).unwrap();
        w.checkpoint().unwrap();
        drop(w);
        // A killed writer: one and a half records beyond the checkpoint.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(record(9).as_bytes());
        bytes.extend_from_slice(&record(9).as_bytes()[..20]);
        std::fs::write(&path, &bytes).unwrap();
        let mut w = DatasetWriter::append(&path, Content::Moves, Split::Train).unwrap();
        assert_eq!(w.len(), 2);
        w.push(&record(2)).unwrap();
        assert_eq!(w.finish().unwrap(), 3);
        let d = Dataset::open(&path).unwrap();
        assert_eq!(d.iter().map(|r| r.game()).collect::<Vec<_>>(), vec![0, 1, 2]);
        let err = DatasetWriter::append(&path, Content::Moves, Split::Validation).err().unwrap().to_string();
        assert!(err.contains("moves-train.bin") && err.contains("expected validation"), "{err}");
        std::fs::write(&path, &bytes[..HEADER_SIZE + 10]).unwrap();
        let err = DatasetWriter::append(&path, Content::Moves, Split::Train).err().unwrap().to_string();
        assert!(err.contains("truncated"), "{err}");
    }
}
