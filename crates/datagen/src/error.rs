//! Errors of a datagen run; each names the option or the file at fault.

use deepchess_core::dataset::DatasetError;

/// What can go wrong in a datagen run or an export.
#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    /// A bad option or an unusable input (named in the message).
    #[error("{0}")]
    Invalid(String),
    /// A dataset file could not be read or written.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// Another file could not be read or written (the message names it).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// An I/O error with `path` in its message.
pub fn io_error(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> DatagenError + '_ {
    move |e| DatagenError::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
