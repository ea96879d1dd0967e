//! End-to-end tests of `deepchess prepare`: the binary on real PGN text, compressed and
//! plain, bad input, the by-game split, the overwrite guards (of `export` too), and the
//! temporaries of interrupted runs.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use deepchess_core::dataset::{Content, Dataset, Split, file_name};
use serde_json::Value;
use shakmaty::san::San;
use shakmaty::{Chess, Color, Position};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/sample.pgn");

fn deepchess(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deepchess")).args(args).output().expect("run deepchess")
}

fn prepare(inputs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["prepare".into(), "--pgn".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    deepchess(&args)
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn compress(plain: &[u8], path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    match path.extension().unwrap().to_str().unwrap() {
        "gz" => {
            let mut w = flate2::write::GzEncoder::new(file, flate2::Compression::default());
            w.write_all(plain).unwrap();
            w.finish().unwrap();
        }
        "zst" => {
            let mut w = zstd::Encoder::new(file, 3).unwrap();
            w.write_all(plain).unwrap();
            w.finish().unwrap();
        }
        "bz2" => {
            let mut w = bzip2::write::BzEncoder::new(file, bzip2::Compression::default());
            w.write_all(plain).unwrap();
            w.finish().unwrap();
        }
        other => panic!("unknown extension {other}"),
    }
}

#[test]
fn sample_summary_matches_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    let o = prepare(&[Path::new(SAMPLE)], &out, &["--verbose"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&out);
    assert_eq!(s["games_read"], 6);
    assert_eq!(s["games_used"], 5);
    assert_eq!(s["skipped"]["illegal_move"], 1);
    assert_eq!((s["white_wins"].as_u64(), s["black_wins"].as_u64(), s["draws"].as_u64()), (Some(3), Some(2), Some(1)));
    // The illegal game is named on stderr with its header.
    let err = stderr(&o);
    assert!(err.contains("game 5 skipped (illegal_move)") && err.contains("I - J"), "numbered from 1: {err}");
    // Moves: every move of every used game. Opera 33, Fool 4, Ruy 20, ep/promo 23, endgame 9.
    let moves = s["moves"]["train"].as_u64().unwrap() + s["moves"]["validation"].as_u64().unwrap();
    assert_eq!(moves, 33 + 4 + 20 + 23 + 9);
    // Positions: decisive games only, ply >= 10, not before a capture, final positions kept.
    let mut positions = 0;
    for split in Split::ALL {
        let d = Dataset::open(&out.join(file_name(Content::Positions, split))).unwrap();
        assert_eq!(d.split(), split);
        for r in d.iter() {
            assert!(r.ply() >= 10);
            assert_ne!(r.result(), 0);
            assert!(!r.played().unwrap().is_some_and(|p| p.capture));
            r.position().expect("stored positions are legal");
            positions += 1;
        }
    }
    let listed = s["positions"]["train"].as_u64().unwrap() + s["positions"]["validation"].as_u64().unwrap();
    assert_eq!(positions, listed);
    assert!(positions > 20);
}

#[test]
fn compressed_inputs_give_identical_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(SAMPLE).unwrap();
    let reference = dir.path().join("plain");
    assert!(prepare(&[Path::new(SAMPLE)], &reference, &[]).status.success());
    for ext in ["pgn.gz", "pgn.zst", "pgn.bz2"] {
        let input = dir.path().join(format!("sample.{ext}"));
        compress(&plain, &input);
        let out = dir.path().join(ext);
        let o = prepare(&[&input], &out, &[]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        for content in Content::ALL {
            for split in Split::ALL {
                let name = file_name(content, split);
                assert_eq!(
                    std::fs::read(out.join(&name)).unwrap(),
                    std::fs::read(reference.join(&name)).unwrap(),
                    "{ext} {name}"
                );
            }
        }
    }
}

#[test]
fn truncated_or_corrupt_streams_name_the_file_and_games_read() {
    let dir = tempfile::tempdir().unwrap();
    let games = random_games(400, 7);
    for ext in ["pgn.gz", "pgn.zst", "pgn.bz2"] {
        let full = dir.path().join(format!("full.{ext}"));
        compress(games.as_bytes(), &full);
        let bytes = std::fs::read(&full).unwrap();
        let cut = dir.path().join(format!("cut.{ext}"));
        std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
        let out = dir.path().join(format!("out-{ext}"));
        let o = prepare(&[&cut], &out, &[]);
        assert!(!o.status.success(), "{ext}: a truncated stream must fail");
        let err = stderr(&o);
        assert!(err.contains(&cut.display().to_string()) && err.contains("complete games"), "{ext}: {err}");
        assert!(!out.exists(), "{ext}: no partial output directory");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{ext}: temporary directory left behind");
        // on request, the complete games before the break are kept, with a warning (a
        // bzip2 stream this small is one block, which breaks as a whole: no game to keep)
        let o = prepare(&[&cut], &out, &["--allow-truncated"]);
        if ext == "pgn.bz2" {
            assert!(
                stderr(&o).contains("no usable game (0 games read before the stream breaks off)"),
                "{}",
                stderr(&o)
            );
            continue;
        }
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        let s = summary(&out);
        assert!(s["games_read"].as_u64().unwrap() > 50 && s["inputs"][0]["truncated"] == true, "{ext}: {s}");
        assert!(stderr(&o).contains("warning: ") && stderr(&o).contains("--allow-truncated"), "{ext}");
        std::fs::remove_dir_all(&out).unwrap();

        let mut corrupt = bytes.clone();
        let mid = corrupt.len() / 2;
        for b in &mut corrupt[mid..mid + 64] {
            *b ^= 0x5a;
        }
        let bad = dir.path().join(format!("bad.{ext}"));
        std::fs::write(&bad, &corrupt).unwrap();
        let o = prepare(&[&bad], &out, &[]);
        assert!(!o.status.success(), "{ext}: a corrupt stream must fail");
        assert!(stderr(&o).contains("bad."), "{ext}: {}", stderr(&o));
    }
}

#[test]
fn missing_file_and_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let o = prepare(&[&dir.path().join("nope.pgn")], &dir.path().join("x"), &[]);
    assert!(!o.status.success() && stderr(&o).contains("nope.pgn"), "{}", stderr(&o));

    let out = dir.path().join("ds");
    assert!(prepare(&[Path::new(SAMPLE)], &out, &[]).status.success());
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let o = prepare(&[Path::new(SAMPLE)], &out, &["--draws"]);
    assert!(!o.status.success() && stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before, "untouched without --force");
    let o = prepare(&[Path::new(SAMPLE)], &out, &["--draws", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(summary(&out)["options"]["draws"], true);
    let o = prepare(&[Path::new(SAMPLE)], &dir.path().join("y"), &["--validation-fraction", "2"]);
    assert!(!o.status.success() && stderr(&o).contains("--validation-fraction"), "{}", stderr(&o));
}

#[test]
fn random_bytes_fail_naming_the_file_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = 0x1234_5678_9abc_def0u64;
    for i in 0..4 {
        let mut bytes = Vec::new();
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push(if i % 2 == 0 { state as u8 } else { b"[]{}()\"\n 1.e4Nf3-0/*;%"[(state % 22) as usize] });
        }
        let input = dir.path().join(format!("noise{i}.pgn"));
        std::fs::write(&input, &bytes).unwrap();
        let o = prepare(&[&input], &dir.path().join(format!("o{i}")), &[]);
        // binary noise is not text; PGN-like noise holds no usable game
        let expected = if i % 2 == 0 { "not PGN text" } else { "no usable game" };
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("noise{i}.pgn: {expected}")), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
        assert!(!dir.path().join(format!("o{i}")).exists());
    }
}

/// Random legal games (seeded), as PGN with results and evals.
fn random_games(count: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut pgn = String::new();
    for g in 0..count {
        let result = ["1-0", "0-1", "1/2-1/2"][(next() % 3) as usize];
        pgn += &format!("[Event \"random {g}\"]\n[White \"w{g}\"]\n[Black \"b{g}\"]\n[Result \"{result}\"]\n\n");
        let mut pos = Chess::default();
        for ply in 0..(20 + next() % 60) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[(next() % moves.len() as u64) as usize];
            if pos.turn() == Color::White {
                pgn += &format!("{}. ", ply / 2 + 1);
            }
            pgn += &format!("{} {{[%eval {:.2}]}} ", San::from_move(&pos, m), (next() % 200) as f64 / 100.0 - 1.0);
            pos.play_unchecked(m);
        }
        pgn += &format!("{result}\n\n");
    }
    pgn
}

#[test]
fn split_is_by_game_deterministic_and_about_ten_percent() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("random.pgn");
    std::fs::write(&input, random_games(600, 1)).unwrap();
    let run = |name: &str, extra: &[&str]| -> PathBuf {
        let out = dir.path().join(name);
        let o = prepare(&[&input], &out, extra);
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let a = run("a", &["--draws", "--keep-captures", "--skip-moves", "0"]);
    let mut games_of: HashMap<Split, BTreeSet<u32>> = HashMap::new();
    for content in Content::ALL {
        for split in Split::ALL {
            let d = Dataset::open(&a.join(file_name(content, split))).unwrap();
            games_of.entry(split).or_default().extend(d.iter().map(|r| r.game()));
        }
    }
    let (train, val) = (&games_of[&Split::Train], &games_of[&Split::Validation]);
    assert!(train.is_disjoint(val), "a game on both sides of the split");
    assert_eq!(train.len() + val.len(), 600);
    assert!((35..=90).contains(&val.len()), "validation games: {}", val.len());
    // With every position kept, positions and moves hold the same games per split.
    let s = summary(&a);
    assert_eq!(s["games"]["validation"].as_u64().unwrap() as usize, val.len());
    // Deterministic: a second run gives identical files; another seed another split.
    let b = run("b", &["--draws", "--keep-captures", "--skip-moves", "0", "--threads", "1"]);
    let c = run("c", &["--draws", "--keep-captures", "--skip-moves", "0", "--split-seed", "9"]);
    let name = file_name(Content::Moves, Split::Validation);
    assert_eq!(std::fs::read(a.join(&name)).unwrap(), std::fs::read(b.join(&name)).unwrap());
    assert_ne!(std::fs::read(a.join(&name)).unwrap(), std::fs::read(c.join(&name)).unwrap());
    // Every eval comment was read: random games carry one per move.
    let d = Dataset::open(&a.join(file_name(Content::Positions, Split::Train))).unwrap();
    assert!(d.iter().filter(|r| r.ply() > 0).all(|r| r.eval().is_some()));
}

#[test]
fn min_elo_and_keep_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("elo");
    let o = prepare(&[Path::new(SAMPLE)], &out, &["--min-elo", "2000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&out);
    // Only the Ruy Lopez (2500/2450) has both ratings at 2000 or more; Morphy's opponent is 1900.
    assert_eq!(s["games_below_min_elo"], 4);
    assert_eq!(s["moves"]["train"].as_u64().unwrap() + s["moves"]["validation"].as_u64().unwrap(), 20);

    let out = dir.path().join("trunc");
    let o = prepare(&[Path::new(SAMPLE)], &out, &["--keep-truncated", "--skip-moves", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&out);
    assert_eq!(
        (s["truncated"].as_u64(), s["skipped"]["illegal_move"].as_u64(), s["games_used"].as_u64()),
        (Some(1), Some(0), Some(6))
    );
    // The illegal game (game 4) keeps its four legal moves.
    let moves: usize = Split::ALL
        .iter()
        .map(|&split| {
            Dataset::open(&out.join(file_name(Content::Moves, split))).unwrap().iter().filter(|r| r.game() == 4).count()
        })
        .sum();
    assert_eq!(moves, 4);
}

#[test]
fn out_never_replaces_an_input_or_a_directory_prepare_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.pgn");
    std::fs::copy(SAMPLE, &games).unwrap();
    let listing = || {
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        names
    };
    // the input as the output, with --force: refused, the input where it was
    let o = prepare(&[&games], &games, &["--force"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("is the input --pgn"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&games).unwrap(), std::fs::read(SAMPLE).unwrap());
    assert_eq!(listing(), ["games.pgn"], "nothing moved or left behind");
    // a directory holding the input
    let inside = dir.path().join("in");
    std::fs::create_dir(&inside).unwrap();
    std::fs::copy(SAMPLE, inside.join("g.pgn")).unwrap();
    let o = prepare(&[&inside.join("g.pgn")], &inside, &["--force"]);
    assert!(!o.status.success() && stderr(&o).contains("holds the input"), "{}", stderr(&o));
    assert!(inside.join("g.pgn").exists());
    // a directory of someone else's, and a file
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), b"keep me").unwrap();
    let o = prepare(&[&games], &mine, &["--force"]);
    assert!(!o.status.success() && stderr(&o).contains("holds `notes.txt`"), "{}", stderr(&o));
    assert_eq!(std::fs::read(mine.join("notes.txt")).unwrap(), b"keep me");
    let o = prepare(&[&games], &mine.join("notes.txt"), &["--force"]);
    assert!(!o.status.success() && stderr(&o).contains("not a directory"), "{}", stderr(&o));
    assert_eq!(std::fs::read(mine.join("notes.txt")).unwrap(), b"keep me");
    // an earlier output is replaced
    let out = dir.path().join("ds");
    assert!(prepare(&[&games], &out, &[]).status.success());
    let o = prepare(&[&games], &out, &["--force", "--draws"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(summary(&out)["options"]["draws"], true);
}

#[test]
fn the_same_input_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("a.pgn");
    std::fs::copy(SAMPLE, &games).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let out = dir.path().join("ds");
    for again in [games.clone(), dir.path().join("sub/../a.pgn")] {
        let o = prepare(&[&games, &again], &out, &[]);
        assert!(!o.status.success() && stderr(&o).contains("is given twice"), "{}", stderr(&o));
        assert!(stderr(&o).contains(&again.display().to_string()), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

#[test]
fn plies_beyond_the_record_are_skipped_with_a_warning_and_long_games_counted_in_plies() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("long.pgn");
    let shuffle = "Nf3 Nf6 Ng1 Ng8 ".repeat(501);
    let text = format!(
        "[Event \"ok\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
         [Event \"far\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 40000\"]\n[Result \"1-0\"]\n\n40000. e4 Kd7 1-0\n\n\
         [Event \"long\"]\n[Result \"1/2-1/2\"]\n\n{shuffle}1/2-1/2\n"
    );
    std::fs::write(&pgn, text).unwrap();
    let out = dir.path().join("ds");
    let o = prepare(&[&pgn], &out, &["--draws"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("long.pgn: game 2 skipped: the FEN tag's move number 40000 is ply 79998"), "{err}");
    assert!(err.contains("long.pgn: game 3 has 2004 plies"), "plies, numbered from 1: {err}");
    let s = summary(&out);
    assert_eq!((s["games_read"].as_u64(), s["skipped"]["ply_out_of_range"].as_u64()), (Some(3), Some(1)), "{s}");
    // No record carries a cut ply: every exported position's move number is its own.
    let text = dir.path().join("positions.txt");
    let data = out.display().to_string();
    let args = ["export", "--data", &data, "--out", text.to_str().unwrap(), "--content", "positions"];
    let o = deepchess(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!std::fs::read_to_string(&text).unwrap().contains(" 32768"), "no saturated ply");
}

#[test]
fn export_force_replaces_only_an_earlier_export() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("ds");
    assert!(prepare(&[Path::new(SAMPLE)], &data, &["--draws"]).status.success());
    let export = |out: &Path, force: bool| {
        let out = out.display().to_string();
        let data = data.display().to_string();
        let mut args = vec!["export", "--data", &data, "--out", &out, "--content", "positions"];
        if force {
            args.push("--force");
        }
        deepchess(&args)
    };
    let dataset = data.join("positions-train.bin");
    let before = std::fs::read(&dataset).unwrap();
    let o = export(&dataset, true);
    assert!(!o.status.success() && stderr(&o).contains("is the input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&dataset).unwrap(), before);
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"my notes\n").unwrap();
    let o = export(&notes, true);
    assert!(!o.status.success() && stderr(&o).contains("not an earlier `deepchess export`"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes\n");
    // an earlier export (one line of it here) is replaced with --force only
    let text = dir.path().join("positions.txt");
    let line = "8/8/8/8/8/8/8/K1k5 w - - 0 1 | 12 | 0.5\n";
    std::fs::write(&text, line).unwrap();
    let o = export(&text, false);
    assert!(!o.status.success() && stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = export(&text, true);
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(&text).unwrap();
    assert!(written != line && written.lines().all(|l| l.split(" | ").count() == 3), "{written}");
    std::fs::write(&text, b"").unwrap();
    assert!(export(&text, true).status.success(), "an empty export is an export");
}

/// A prepare writing into a FIFO's reader, stopped by SIGTERM while its temporary output
/// directory exists: the directory is removed and the exit status is 143. A temporary of a
/// process that no longer runs is swept by the next run, which says so.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_removes_the_temporary_output_and_later_runs_sweep_stale_ones() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("games.pgn");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let out = dir.path().join("ds");
    let child = Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .args(["prepare", "--pgn", fifo.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // opening the FIFO waits for prepare to open it, which it does after creating its
    // temporary directory; then it waits for more text
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(&std::fs::read(SAMPLE).unwrap()).unwrap();
    let tmp = dir.path().join(format!(".ds.tmp-{}", child.id()));
    assert!(tmp.is_dir(), "the temporary output exists while prepare reads");
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    drop(writer);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted (SIGTERM): removed the temporary"), "{}", stderr(&o));
    assert!(!tmp.exists() && !out.exists());

    // what a killed run leaves (a PID above the kernel's limit is never running)
    let stale = dir.path().join(".ds.tmp-4999999");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("moves-train.bin"), b"partial").unwrap();
    let o = prepare(&[Path::new(SAMPLE)], &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(".ds.tmp-4999999, a temporary left by an interrupted run"), "{}", stderr(&o));
    assert!(!stale.exists());
}
