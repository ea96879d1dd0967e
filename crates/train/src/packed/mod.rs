//! Packed self-play games on disk: [`deepchess_core::packed_games`] compressed with zstd
//! (`NAME.dcpg.zst`, about a third of the same games' compressed PGN). Reading and writing
//! them, and packing the PGN text of `deepchess datagen --pgn` so that it unpacks byte for byte.

pub mod from_pgn;

use std::io::Read;
use std::path::Path;

use anyhow::Context;
use deepchess_core::packed_games::{self, MAGIC};
use deepchess_core::selfplay_game::SelfPlayGame;

use crate::pgn::input::Compression;

/// The file name ending of packed games.
pub const EXTENSION: &str = ".dcpg.zst";
/// The zstd level they are compressed at.
const LEVEL: i32 = 19;

/// Whether `path` holds packed games (compressed with zstd or not), by its first bytes.
pub fn is_packed(path: &Path) -> anyhow::Result<bool> {
    let mut head = Vec::with_capacity(4);
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    file.take(4).read_to_end(&mut head).with_context(|| path.display().to_string())?;
    if Compression::from_magic(&head) != Compression::Zstd {
        return Ok(head == MAGIC);
    }
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let decoder = zstd::stream::read::Decoder::new(file).with_context(|| path.display().to_string())?;
    let mut head = Vec::with_capacity(4);
    // a damaged frame is not told here: the reader of its format says what is wrong
    Ok(decoder.take(4).read_to_end(&mut head).is_ok() && head == MAGIC)
}

/// The games of a packed file (zstd-compressed or not).
pub fn read(path: &Path) -> anyhow::Result<Vec<SelfPlayGame>> {
    let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
    decode(&bytes).with_context(|| path.display().to_string())
}

/// The games of a packed file's bytes (zstd-compressed or not).
pub fn decode(bytes: &[u8]) -> anyhow::Result<Vec<SelfPlayGame>> {
    let raw;
    let bytes = match Compression::from_magic(bytes) == Compression::Zstd {
        true => {
            raw = zstd::stream::decode_all(bytes).context("cannot decompress it (zstd)")?;
            &raw[..]
        }
        false => bytes,
    };
    packed_games::decode(bytes).context("not readable as packed games")
}

/// `games` packed and compressed, as [`read`] reads them.
pub fn compress(games: &[SelfPlayGame]) -> anyhow::Result<Vec<u8>> {
    let raw = packed_games::encode(games)?;
    Ok(zstd::bulk::compress(&raw, LEVEL)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::selfplay_game::TERMINATIONS;
    use shakmaty::{Chess, Position};

    #[test]
    fn files_are_told_by_content_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let start = Chess::default();
        let moves = vec![start.legal_moves()[3]];
        let game = SelfPlayGame { round: 9, start, moves, evals: vec![-12], result: -1, termination: TERMINATIONS[2] };
        let packed = dir.path().join("a.dcpg.zst");
        std::fs::write(&packed, compress(std::slice::from_ref(&game)).unwrap()).unwrap();
        let plain = dir.path().join("a.dcpg");
        std::fs::write(&plain, packed_games::encode(std::slice::from_ref(&game)).unwrap()).unwrap();
        let pgn = dir.path().join("a.pgn.zst");
        std::fs::write(&pgn, zstd::encode_all(game.pgn().as_bytes(), 3).unwrap()).unwrap();
        assert!(is_packed(&packed).unwrap() && is_packed(&plain).unwrap() && !is_packed(&pgn).unwrap());
        for path in [&packed, &plain] {
            assert_eq!(read(path).unwrap()[0].pgn(), game.pgn());
        }
        let error = format!("{:#}", read(&pgn).unwrap_err());
        assert!(error.contains("a.pgn.zst: not readable as packed games"), "{error}");
        std::fs::write(&packed, &std::fs::read(&packed).unwrap()[..10]).unwrap();
        assert!(format!("{:#}", read(&packed).unwrap_err()).contains("cannot decompress"));
    }
}
