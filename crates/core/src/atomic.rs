//! Writing files without ever leaving a half-written one behind: write a temporary file
//! next to the target, sync it, then rename it over the target.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name a file or directory is written under before it is renamed to `path`.
pub fn temporary_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Fails when `path` exists and `force` is not set, naming the path and the flag.
pub fn check_overwrite(path: &Path, force: bool) -> std::io::Result<()> {
    if !force && path.exists() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} already exists (use --force to overwrite)", path.display()),
        ));
    }
    Ok(())
}

/// Writes `contents` to `path` atomically: a reader sees either the old file or the new one.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let tmp = temporary_path(path);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_and_overwrite_guard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"one").unwrap();
        let err = check_overwrite(&path, false).unwrap_err().to_string();
        assert!(err.contains("a.json") && err.contains("--force"), "{err}");
        check_overwrite(&path, true).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary left behind");
    }
}
