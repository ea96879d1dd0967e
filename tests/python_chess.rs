//! python-chess (a widely used Python chess library with a UCI client) drives the
//! `deepchess` binary: MultiPV analysis, win/draw/loss, a Chess960 game with castling and
//! pondering, as `tests/python_chess_client.py` describes. Skips, saying why, when python3
//! or python-chess is missing (`.ci/run` installs python-chess).

use std::path::Path;
use std::process::Command;

#[test]
fn python_chess_analyses_plays_chess960_and_ponders() {
    match Command::new("python3").args(["-c", "import chess.engine"]).output() {
        Err(e) => return println!("skipped: python3 cannot be run ({e})"),
        Ok(out) if !out.status.success() => {
            let why = String::from_utf8_lossy(&out.stderr);
            return println!("skipped: python-chess is not installed (python3 -m pip install chess): {}", why.trim());
        }
        Ok(_) => {}
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python_chess_client.py");
    let out = Command::new("python3").arg(&script).arg(env!("CARGO_BIN_EXE_deepchess")).output().expect("python3 runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.trim_end().ends_with("ok"), "{}\n{stdout}\n{stderr}", out.status);
}
