//! Writing files without ever leaving a half-written one behind: write a temporary file
//! next to the target, sync it, then rename it over the target.
//!
//! Temporaries are named `.NAME.tmp-PID` (PID: the writing process). While one exists it is
//! *registered*: [`install_interrupt_handler`] makes SIGINT and SIGTERM remove every
//! registered temporary before the process exits, and [`sweep_stale_temporaries`] removes
//! those an earlier process left behind when it was killed outright (its PID no longer
//! running).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary name a file or directory is written under before it is renamed to `path`.
pub fn temporary_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// [`temporary_path`] with `path`'s extension repeated at the end (`.plot.png.tmp-PID.png`),
/// for writers that choose the format by extension.
pub fn temporary_path_keeping_extension(path: &Path) -> PathBuf {
    let tmp = temporary_path(path);
    match path.extension() {
        Some(ext) => {
            let mut name = tmp.file_name().expect("temporary names have a file name").to_os_string();
            name.push(".");
            name.push(ext);
            tmp.with_file_name(name)
        }
        None => tmp,
    }
}

/// The target name and the PID of a temporary's file name (`.NAME.tmp-PID`, optionally
/// followed by `.EXT` as [`temporary_path_keeping_extension`] writes), or `None` for any
/// other name.
pub fn parse_temporary_name(file_name: &str) -> Option<(&str, u32)> {
    let rest = file_name.strip_prefix('.')?;
    let at = rest.rfind(".tmp-")?;
    let (target, tail) = (&rest[..at], &rest[at + 5..]);
    let digits = tail.split_once('.').map_or(tail, |(pid, _)| pid);
    if target.is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((target, digits.parse().ok()?))
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

/// Temporaries of this process that exist right now (see [`register_temporary`]).
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records that `path` (a file or a directory) is a temporary of this process, to be
/// removed if the process is interrupted before it is renamed or removed.
pub fn register_temporary(path: &Path) {
    temporaries().push(path.to_path_buf());
}

/// Forgets a temporary recorded by [`register_temporary`] (it was renamed or removed).
pub fn unregister_temporary(path: &Path) {
    let mut list = temporaries();
    if let Some(i) = list.iter().rposition(|p| p == path) {
        list.swap_remove(i);
    }
}

/// Runs `f` (renames that publish a temporary) so that an interruption waits until it is
/// done: the interrupt handler never sees a half-published output.
pub fn publishing<T>(f: impl FnOnce() -> T) -> T {
    let _guard = temporaries();
    f()
}

/// Renames the registered temporary `tmp` to `path` and forgets it, as one step with
/// respect to interruptions.
pub fn publish(tmp: &Path, path: &Path) -> std::io::Result<()> {
    let mut list = temporaries();
    std::fs::rename(tmp, path)?;
    if let Some(i) = list.iter().rposition(|p| p == tmp) {
        list.swap_remove(i);
    }
    Ok(())
}

/// Removes a file or a directory tree; a path that is already gone is not an error.
fn remove_any(path: &Path) -> std::io::Result<()> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) => Err(e),
    };
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Removes a temporary and forgets it.
pub fn remove_temporary(path: &Path) {
    let _ = remove_any(path);
    unregister_temporary(path);
}

/// Writes `contents` to `path` atomically: a reader sees either the old file or the new one.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let tmp = temporary_path(path);
    register_temporary(&tmp);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        publish(&tmp, path)
    })();
    if result.is_err() {
        remove_temporary(&tmp);
    }
    result.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Whether process `pid` is running: `Some` where that can be told (Linux, by `/proc`),
/// `None` elsewhere.
pub fn process_alive(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if cfg!(target_os = "linux") && proc.join("self").exists() {
        Some(proc.join(pid.to_string()).exists())
    } else {
        None
    }
}

/// Removes the temporaries in `dir` (`.NAME.tmp-PID`, files or directories) whose NAME
/// `wanted` accepts and whose process is no longer running: what a killed run left behind.
/// Returns the paths removed. Nothing is removed where liveness cannot be told (see
/// [`process_alive`]) or for this process's own PID.
pub fn sweep_stale_temporaries(dir: &Path, wanted: impl Fn(&str) -> bool) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some((target, pid)) = name.to_str().and_then(parse_temporary_name) else { continue };
        if pid == std::process::id() || !wanted(target) || process_alive(pid) != Some(false) {
            continue;
        }
        let path = entry.path();
        remove_any(&path)?;
        removed.push(path);
    }
    removed.sort();
    Ok(removed)
}

/// Removes every registered temporary (holding the registry, so that nothing is published
/// meanwhile), says so on standard error and ends the process with `code`.
fn remove_temporaries_and_exit(signal: &str, code: i32) -> ! {
    let list = temporaries();
    for path in list.iter() {
        // a writer may still be adding files to a temporary directory: try again
        let removed = (0..20).any(|_| remove_any(path).is_ok() || !path.exists());
        if removed {
            eprintln!("interrupted ({signal}): removed the temporary {}", path.display());
        } else {
            eprintln!("interrupted ({signal}): could not remove the temporary {}", path.display());
        }
    }
    if list.is_empty() {
        eprintln!("interrupted ({signal})");
    }
    std::process::exit(code)
}

#[cfg(unix)]
mod signals {
    use std::sync::Once;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::time::Duration;

    /// The signal received, 0 until then.
    static RECEIVED: AtomicI32 = AtomicI32::new(0);
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;

    extern "C" fn on_signal(signal: i32) {
        // async-signal-safe: one atomic store
        RECEIVED.store(signal, Ordering::SeqCst);
    }

    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }

    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: the handler only stores into an atomic.
            unsafe {
                signal(SIGINT, on_signal);
                signal(SIGTERM, on_signal);
            }
            // The removal runs on this thread, outside the handler, where file system
            // calls and allocation are allowed.
            let spawned = std::thread::Builder::new().name("interrupt".into()).spawn(|| {
                loop {
                    match RECEIVED.load(Ordering::SeqCst) {
                        0 => std::thread::sleep(Duration::from_millis(20)),
                        SIGINT => super::remove_temporaries_and_exit("SIGINT", 130),
                        s => super::remove_temporaries_and_exit("SIGTERM", 128 + s),
                    }
                }
            });
            if spawned.is_err() {
                eprintln!("warning: no interrupt handler thread: temporaries are not removed on Ctrl-C");
            }
        });
    }
}

/// Makes SIGINT (Ctrl-C) and SIGTERM remove this process's registered temporaries (see
/// [`register_temporary`]) and end it with status 130 or 143. Without a handler the
/// temporaries of a killed run stay behind until [`sweep_stale_temporaries`] finds them.
/// Nothing on platforms other than Unix.
pub fn install_interrupt_handler() {
    #[cfg(unix)]
    signals::install();
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
        assert!(!temporaries().contains(&temporary_path(&path)), "and none registered");
    }

    #[test]
    fn temporary_names_parse_back() {
        let tmp = temporary_path(Path::new("/x/data.bin"));
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert_eq!(parse_temporary_name(name), Some(("data.bin", std::process::id())));
        let png = temporary_path_keeping_extension(Path::new("metrics.png"));
        assert_eq!(png.extension().unwrap(), "png");
        assert_eq!(parse_temporary_name(png.to_str().unwrap()), Some(("metrics.png", std::process::id())));
        for other in ["data.bin", ".data.bin", ".data.tmp-", ".data.tmp-12x", "..tmp-5", ".a.tmp-99999999999999"] {
            assert_eq!(parse_temporary_name(other), None, "{other}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn stale_temporaries_of_dead_processes_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        // a PID above the kernel's maximum (2^22) is never running
        let dead = dir.path().join(".ds.tmp-4999999");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("positions-train.bin"), b"partial").unwrap();
        let dead_file = dir.path().join(".ds-old.tmp-4999998");
        std::fs::write(&dead_file, b"x").unwrap();
        let other_name = dir.path().join(".other.tmp-4999999");
        std::fs::write(&other_name, b"x").unwrap();
        let parent = std::os::unix::process::parent_id();
        let live = dir.path().join(format!(".ds.tmp-{parent}"));
        std::fs::write(&live, b"x").unwrap();
        let mine = temporary_path(&dir.path().join("ds"));
        std::fs::write(&mine, b"x").unwrap();
        let removed = sweep_stale_temporaries(dir.path(), |name| name == "ds" || name == "ds-old").unwrap();
        assert_eq!(removed, vec![dead_file.clone(), dead.clone()]);
        assert!(!dead.exists() && !dead_file.exists());
        assert!(other_name.exists() && live.exists() && mine.exists(), "others, live processes' and ours stay");
        assert!(sweep_stale_temporaries(&dir.path().join("none"), |_| true).unwrap().is_empty());
    }
}
