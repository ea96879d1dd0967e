//! deepchess training side: PGN ingestion into datasets.

pub mod pgn;
pub mod prepare;
