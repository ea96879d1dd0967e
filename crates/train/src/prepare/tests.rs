//! Tests of `prepare`: splits, counts, skipped games, bad input named, outputs guarded.

use super::*;
use std::io::Write;

const SAMPLE: &[u8] = include_bytes!("../../../../tests/data/sample.pgn");
const DECISIVE: &[u8] = include_bytes!("../../../../tests/data/decisive.pgn");

fn run(options: &PrepareOptions) -> (Result<Summary, PrepareError>, Vec<String>) {
    let mut lines = Vec::new();
    let result = prepare(options, &mut |_| {}, &mut |l| lines.push(l));
    (result, lines)
}

fn compress(plain: &[u8], how: u8) -> Vec<u8> {
    match how {
        0 => plain.to_vec(),
        1 => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            w.write_all(plain).unwrap();
            w.finish().unwrap()
        }
        2 => zstd::encode_all(plain, 1).unwrap(),
        _ => {
            let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            w.write_all(plain).unwrap();
            w.finish().unwrap()
        }
    }
}

/// `n` short legal games (the same opening, told apart by their tags).
fn games(n: usize) -> Vec<u8> {
    let mut pgn = String::new();
    for g in 0..n {
        pgn += &format!("[Event \"g{g}\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n");
    }
    pgn.into_bytes()
}

#[test]
fn compression_is_read_from_the_content_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    for (how, name) in [(2, "games.pgn"), (1, "games.pgn.zst"), (3, "games.txt"), (0, "games.pgn.gz")] {
        let input = dir.path().join(name);
        std::fs::write(&input, compress(SAMPLE, how)).unwrap();
        let options = PrepareOptions::new(vec![input], dir.path().join(format!("out-{name}")));
        let summary = run(&options).0.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((summary.games_read, summary.games_used), (6, 5), "{name}");
        assert_eq!(summary.inputs[0].compression, ["plain text", "gzip", "zstd", "bzip2"][how as usize]);
    }
}

#[test]
fn text_that_is_no_pgn_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let utf16: Vec<u8> = [0xff, 0xfe].into_iter().chain(SAMPLE.iter().flat_map(|&b| [b, 0])).collect();
    let xz = [&[0xfd, b'7', b'z', b'X', b'Z', 0x00][..], &[1; 200]].concat();
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("utf16.pgn", utf16, "UTF-16"),
        ("nul.pgn", SAMPLE.iter().flat_map(|&b| [0, b]).collect(), "NUL"),
        ("archive.pgn", xz, "xz-compressed"),
        (
            "prose.pgn",
            b"Dear diary,\nno chess today.\n".to_vec(),
            "no usable game (1 games read, skipped: no_result 1)",
        ),
        ("empty.pgn", Vec::new(), "no usable game (0 games read)"),
    ];
    for (name, bytes, expected) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, bytes).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        let err = run(&PrepareOptions::new(vec![input.clone()], out.clone())).0.unwrap_err().to_string();
        assert!(err.contains(&input.display().to_string()) && err.contains(expected), "{name}: {err}");
        assert!(!out.exists());
    }
    // a second file without games fails the run even when the first has some
    let good = dir.path().join("good.pgn");
    std::fs::write(&good, SAMPLE).unwrap();
    let options = PrepareOptions::new(vec![good, dir.path().join("empty.pgn")], dir.path().join("two"));
    assert!(run(&options).0.unwrap_err().to_string().contains("empty.pgn: no usable game"));
}

#[test]
fn a_stray_brace_fails_or_warns_naming_the_game_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // game 3 (line 11) opens a comment that is never closed: the 3000 games after it
    // would be one comment and the run would succeed with 2 games
    let mut text = games(2);
    text.extend_from_slice(b"[Event \"stray\"]\n[Result \"1-0\"]\n\n1. e4 { e5 1-0\n\n");
    text.extend(games(3000));
    let input = dir.path().join("stray.pgn");
    std::fs::write(&input, &text).unwrap();
    let mut options = PrepareOptions::new(vec![input.clone()], dir.path().join("out"));
    options.max_game_bytes = 64 << 10;
    let err = run(&options).0.unwrap_err().to_string();
    assert!(err.contains("stray.pgn: game 3 starting at line 11: the comment opened at line 14"), "{err}");
    // near the end, the comment swallows a few games only: a warning, in the summary too
    let mut text = games(3000);
    text.extend_from_slice(b"[Event \"stray\"]\n[Result \"1-0\"]\n\n1. e4 { e5 1-0\n\n");
    text.extend(games(2));
    std::fs::write(&input, &text).unwrap();
    let (summary, lines) = run(&options);
    let summary = summary.unwrap();
    assert_eq!(summary.games_read, 3001, "the 2 games inside the comment are lost");
    assert_eq!(summary.warnings.len(), 1, "{:?}", summary.warnings);
    let w = &summary.warnings[0];
    assert!(w.contains("stray.pgn: game 3001 (line 15001): the comment opened at line 15004"), "{w}");
    assert!(lines.iter().any(|l| l.starts_with("warning: ") && l.contains("game 3001")), "{lines:?}");
}

#[test]
fn allow_truncated_keeps_the_complete_games_before_the_break() {
    let dir = tempfile::tempdir().unwrap();
    let plain = games(4000);
    for how in [1, 2, 3] {
        let full = compress(&plain, how);
        let input = dir.path().join(format!("cut{how}.pgn"));
        std::fs::write(&input, &full[..full.len() * 2 / 3]).unwrap();
        let mut options = PrepareOptions::new(vec![input.clone()], dir.path().join(format!("out{how}")));
        let err = run(&options).0.unwrap_err().to_string();
        assert!(err.contains(&input.display().to_string()) && err.contains("complete games"), "{how}: {err}");
        options.allow_truncated = true;
        let summary = run(&options).0.unwrap_or_else(|e| panic!("{how}: {e}"));
        assert!((1000..4000).contains(&summary.games_used), "{how}: {} games", summary.games_used);
        assert_eq!(summary.games_used, summary.games_read, "{how}: no partial game");
        assert!(summary.inputs[0].truncated && summary.warnings[0].contains("--allow-truncated"), "{how}");
    }
}

/// Random bytes and damaged real PGN (bytes flipped, braces, brackets and NULs
/// inserted, cut short; plain and compressed), seeded: `prepare` never panics, and it
/// either succeeds with usable games or fails naming the file; no temporary stays.
#[test]
fn fuzzed_inputs_never_panic_and_errors_name_the_file() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    // in memory where there is such a file system: each run syncs five files to disk
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let base = [SAMPLE, DECISIVE].concat();
    let config = Config { cases: 300, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    let strategy = (
        0..4u8,
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..600),
        proptest::collection::vec((any::<usize>(), 0..6u8, any::<u8>()), 0..30),
        any::<usize>(),
    );
    let outcomes = std::cell::Cell::new((0, 0));
    runner
        .run(&strategy, |(how, random, noise, edits, cut)| {
            let mut text = if random { noise } else { base.clone() };
            for &(at, kind, byte) in &edits {
                let at = at % (text.len() + 1);
                match kind {
                    0 if at < text.len() => text[at] = byte,
                    1 => text.insert(at, b'{'),
                    2 => text.insert(at, b'}'),
                    3 => text.insert(at, b'['),
                    4 => text.insert(at, 0),
                    _ => text.truncate(at),
                }
            }
            let mut bytes = compress(&text, how);
            if cut % 4 == 0 && !bytes.is_empty() {
                bytes.truncate(cut % bytes.len());
            }
            let input = dir.path().join("fuzz.pgn");
            std::fs::write(&input, &bytes).unwrap();
            let out = dir.path().join("out");
            let mut options = PrepareOptions::new(vec![input.clone()], out.clone());
            options.force = true;
            options.keep_truncated = cut % 3 == 0;
            options.allow_truncated = cut % 5 == 0;
            let (ok, failed) = outcomes.get();
            match run(&options).0 {
                Ok(summary) => {
                    outcomes.set((ok + 1, failed));
                    prop_assert!(summary.games_used > 0 && out.join("summary.json").exists());
                }
                Err(e) => {
                    outcomes.set((ok, failed + 1));
                    let e = e.to_string();
                    prop_assert!(e.contains(&input.display().to_string()), "{}", e);
                }
            }
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
                .collect();
            prop_assert!(left.is_empty(), "temporaries left: {:?}", left);
            Ok(())
        })
        .unwrap();
    let (ok, failed) = outcomes.get();
    assert!(ok > 30 && failed > 30, "{ok} succeeded, {failed} failed");
}
