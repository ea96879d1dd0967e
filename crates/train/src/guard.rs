//! What `--out` and `--force` may replace, and what a run read: the checks that keep
//! `prepare` and `train` from overwriting their inputs or unrelated files, the sweep of
//! temporaries left by killed runs, and the fingerprint of the datasets a run trains on.

use std::path::{Path, PathBuf};

use deepchess_core::atomic::sweep_stale_temporaries;
use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Split};

/// `path` made absolute with symbolic links resolved, as far as it exists (a path that
/// does not exist yet: its parent resolved, its name appended).
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            canonical(parent).join(name)
        }
        _ => path.to_path_buf(),
    }
}

/// Whether `a` and `b` name the same file or directory.
pub fn same_path(a: &Path, b: &Path) -> bool {
    canonical(a) == canonical(b)
}

/// Removes the temporaries (`.NAME.tmp-PID`) a killed process left in `dir` for the names
/// `wanted` accepts, and says on standard error what was removed.
pub fn sweep(dir: &Path, wanted: impl Fn(&str) -> bool) -> anyhow::Result<Vec<PathBuf>> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let removed = sweep_stale_temporaries(dir, wanted)
        .map_err(|e| anyhow::anyhow!("{}: cannot sweep the temporaries of interrupted runs: {e}", dir.display()))?;
    for path in &removed {
        eprintln!("removed {}, a temporary left by an interrupted run (its process is gone)", path.display());
    }
    Ok(removed)
}

/// The dataset files of a directory with their sizes in bytes, to tell whether a resumed
/// run reads the data it started on: `{"dir": canonical path, "files": {name: bytes}}`
/// for each directory.
pub fn data_fingerprint(dirs: &[PathBuf]) -> serde_json::Value {
    let entry = |dir: &PathBuf| {
        let mut files = serde_json::Map::new();
        for content in Content::ALL {
            for split in Split::ALL {
                let name = file_name(content, split);
                if let Ok(m) = std::fs::metadata(dir.join(&name)) {
                    files.insert(name, m.len().into());
                }
            }
        }
        serde_json::json!({ "dir": canonical(dir).display().to_string(), "files": files })
    };
    serde_json::Value::Array(dirs.iter().map(entry).collect())
}

/// A fingerprint in words: `DIR (moves-train.bin 1234 bytes, ...)` per directory.
pub fn describe_fingerprint(fingerprint: &serde_json::Value) -> String {
    let Some(dirs) = fingerprint.as_array() else { return fingerprint.to_string() };
    dirs.iter()
        .map(|d| {
            let files = d["files"].as_object().map_or(String::new(), |f| {
                f.iter().map(|(name, bytes)| format!("{name} {bytes} bytes")).collect::<Vec<_>>().join(", ")
            });
            format!("{} ({files})", d["dir"].as_str().unwrap_or("?"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_through_links_and_dots() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.pgn");
        std::fs::write(&file, b"x").unwrap();
        assert!(same_path(&file, &dir.path().join(".").join("a.pgn")));
        assert!(same_path(&dir.path().join("new"), &dir.path().join(".").join("new")), "paths that do not exist yet");
        assert!(!same_path(&file, &dir.path().join("b.pgn")));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.pgn");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(same_path(&file, &link));
        }
    }
}
