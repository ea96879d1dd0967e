//! Records the git commit of the build in `DEEPCHESS_GIT_COMMIT` ("unknown" outside a git
//! checkout or without git), for the model cards `deepchess train` writes.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DEEPCHESS_GIT_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself (a checkout), the branch it points to (a
    // commit) and packed-refs (a `git pack-refs`). Only files that exist: Cargo runs the
    // script on every build for one that does not.
    let mut watched = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watched.push(PathBuf::from(dir).join("HEAD"));
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(PathBuf::from(&common).join(branch));
        }
        watched.push(PathBuf::from(&common).join("packed-refs"));
    }
    for path in watched.into_iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
