//! Where `prepare` writes: the checks on `--out` (never an input, `--force` only over an
//! earlier `prepare` output, no input given twice) and the rename that publishes the
//! finished directory.

use std::path::{Path, PathBuf};

use deepchess_core::atomic::{self, check_overwrite, temporary_path};
use deepchess_core::dataset::{Content, Split, file_name};

use super::{PrepareError, PrepareOptions};
use crate::guard;

/// Files a `prepare` output directory holds.
fn output_files() -> Vec<String> {
    let mut names = vec!["summary.json".to_string()];
    names.extend(Content::ALL.iter().flat_map(|&c| Split::ALL.map(|s| file_name(c, s))));
    names
}

/// What makes `dir` other than an earlier `prepare` output, if anything.
fn not_a_prepare_output(dir: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Some("it is a file, not a directory".into());
    }
    let known = output_files();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return Some(format!("it cannot be listed ({e})")),
    };
    let mut others: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !known.contains(n))
        .collect();
    others.sort();
    if let Some(first) = others.first() {
        return Some(format!(
            "it holds `{first}`{}, which prepare does not write",
            if others.len() > 1 { " and more" } else { "" }
        ));
    }
    let summary: Option<serde_json::Value> =
        std::fs::read(dir.join("summary.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    match summary {
        None => Some("it has no readable summary.json".into()),
        Some(s) if ["games_read", "games_used", "skipped", "options"].iter().all(|k| s.get(k).is_some()) => None,
        Some(_) => Some("its summary.json is not a prepare summary".into()),
    }
}

/// Refuses a file given twice as `--pgn` (under any spelling or link): its games would
/// count twice.
pub(super) fn check_distinct_inputs(inputs: &[PathBuf]) -> Result<(), PrepareError> {
    for (i, later) in inputs.iter().enumerate() {
        if let Some(first) = inputs[..i].iter().find(|earlier| guard::same_path(earlier, later)) {
            let also = if first == later { String::new() } else { format!(" (as {})", first.display()) };
            return Err(PrepareError::Option(format!(
                "--pgn {} is given twice{also}: its games would be counted twice",
                later.display()
            )));
        }
    }
    Ok(())
}

/// Refuses an `--out` that is an input or holds one, and, without `--force`, one that
/// exists; with `--force`, one that is not an earlier `prepare` output.
pub(super) fn check_output(options: &PrepareOptions) -> Result<(), PrepareError> {
    let out = &options.out;
    let out_canonical = guard::canonical(out);
    for input in &options.inputs {
        let input_canonical = guard::canonical(input);
        if input_canonical == out_canonical {
            return Err(PrepareError::Output(format!(
                "--out {} is the input --pgn {}: give the datasets a directory of their own",
                out.display(),
                input.display()
            )));
        }
        if input_canonical.starts_with(&out_canonical) {
            return Err(PrepareError::Output(format!(
                "--out {} holds the input --pgn {}: replacing it would delete the input",
                out.display(),
                input.display()
            )));
        }
    }
    if std::fs::symlink_metadata(out).is_err() {
        return Ok(());
    }
    check_overwrite(out, options.force).map_err(|source| PrepareError::Io { path: out.clone(), source })?;
    match not_a_prepare_output(out) {
        None => Ok(()),
        Some(why) => Err(PrepareError::Output(format!(
            "--force: {} is not the output of an earlier `deepchess prepare` ({why}); --force replaces only those: choose another --out",
            out.display()
        ))),
    }
}

/// Moves the finished temporary directory to `out`, replacing an old one only after the
/// new one is complete; an interruption waits until this is done.
pub(super) fn publish(tmp: &Path, out: &Path) -> std::io::Result<()> {
    atomic::publishing(|| {
        if out.exists() {
            let old = temporary_path(&out.with_file_name(format!(
                "{}-old",
                out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            )));
            std::fs::rename(out, &old)?;
            std::fs::rename(tmp, out)?;
            std::fs::remove_dir_all(&old)
        } else {
            std::fs::rename(tmp, out)
        }
    })
}
