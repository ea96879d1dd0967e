//! Helpers shared by the integration tests: running the `deepchess`
//! binary, the scripted fake UCI engine (`tests/fake_uci_engine.py`, Python 3), and finding
//! Debian's reference engines (tests that need one skip with a printed reason without it).

#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `deepchess` with `args`.
pub fn deepchess(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deepchess")).args(args).output().expect("run deepchess")
}

/// Standard output and error of a run, as text.
pub fn texts(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The command line of the fake engine in `mode` (see the script's docstring).
pub fn fake_engine(mode: &str, arg: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake_uci_engine.py");
    let mut cmd = format!("python3 '{}' {mode}", script.display());
    if !arg.is_empty() {
        cmd.push_str(&format!(" '{arg}'"));
    }
    cmd
}

/// A reference engine binary on `PATH` or in `/usr/games` (Debian installs them there).
pub fn find_engine(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain([PathBuf::from("/usr/games")]).map(|d| d.join(name)).find(|p| p.is_file())
}
