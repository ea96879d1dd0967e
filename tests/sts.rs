//! `deepchess sts` end to end: a hand-made suite with every operand form and bad lines,
//! scored through a scripted fake engine that also crashes, hangs and plays an illegal
//! move; and, where Debian's reference engines are installed, a real run on mates in one.

mod common;

use common::{deepchess, fake_engine, find_engine, texts};

/// Positions with every operand form, each with the action of the fake engine.
const SUITE: &[(&str, &str)] = &[
    (
        "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id \"STS(v1.0) Undermine.001\"; c8 \"10 2 3 2\"; c9 \"f4f5 d4e5 d4f2 f3g4\";",
        "f4f5", // best: 10
    ),
    (
        "1n5k/3q3p/pp1p2pB/5r2/1PP1Qp2/P6P/6P1/2R3K1 w - - bm c5; id \"STS(v1.0) Undermine.002\"; c7 \"c5 Qd4+ b5 g4\"; c8 \"10 4 4 3\";",
        "b4b5", // 4 of 10
    ),
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"Custom.1\";", "a1a8"), // bm in SAN: 1
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 am g2g4; id \"Custom.2\";", "g2g4"), // am hit: 0
    ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id \"Custom.3\";", "crash"),
    ("4k3/8/8/8/8/8/4P3/4K3 w - - bm e4 ; id Custom.4", "hang"), // unquoted id, no final semicolon
    ("4k3/8/8/8/8/8/3P4/4K3 w - - bm d2d4; id \"Custom.5\";", "d2d5"), // illegal
    ("4k3/8/8/8/8/8/2P5/4K3 w - - hmvc 0; fmvn 1; bm c4; id \"Custom.6\";", "c2c4"), // after a restart: 1
];

const BAD_LINES: &[&str] =
    &["8/8/8 w - - bm e4;", "4k3/8/8/8/8/8/4P3/4K3 w - - bm Nf3;", "4k3/8/8/8/8/8/4P3/4K3 w - - id \"no solution\";"];

fn write_suite(dir: &std::path::Path) -> (String, String) {
    let mut epd = String::from("# hand-made suite\n\n");
    let mut table = String::new();
    for (i, (line, action)) in SUITE.iter().enumerate() {
        epd.push_str(line);
        epd.push('\n');
        if i == 3 {
            BAD_LINES.iter().for_each(|b| epd.push_str(&format!("{b}\n")));
        }
        table.push_str(&format!("{}|{action}\n", line.split_whitespace().take(4).collect::<Vec<_>>().join(" ")));
    }
    let (epd_path, table_path) = (dir.join("suite.epd"), dir.join("table.txt"));
    std::fs::write(&epd_path, epd).unwrap();
    std::fs::write(&table_path, table).unwrap();
    (epd_path.display().to_string(), table_path.display().to_string())
}

#[test]
fn scores_a_hand_made_suite_and_survives_engine_failures() {
    let dir = tempfile::tempdir().unwrap();
    let (epd, table) = write_suite(dir.path());
    let json = dir.path().join("results.json");
    let engine = fake_engine("table", &table);
    let args = ["sts", "--epd", &epd, "--uci", &engine, "--movetime", "50", "--margin-ms", "400", "--concurrency", "2"];
    let out = deepchess(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // Bad lines: reported with their line numbers (3 comment/blank lines, 4 good ones first).
    for (n, what) in [(7, "bad position"), (8, "bm: \"Nf3\""), (9, "no solution")] {
        assert!(stderr.contains(&format!("line {n}: ")) && stderr.contains(what), "line {n} ({what}) in:\n{stderr}");
    }
    // 10 + 4 + 1 + 0 + 0 (crash) + 0 (hang) + 0 (illegal) + 1 of 10 + 10 + 6 × 1.
    let rating = 44.523 * 100.0 * 16.0 / 26.0 - 242.85;
    assert_eq!(stdout.lines().last().unwrap(), format!("score=16/26 best=3 rating={rating:.0}"), "{stdout}");
    let row = |name: &str| {
        stdout.lines().find(|l| l.starts_with(name)).unwrap().split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    };
    assert_eq!(row("Undermine"), "2 14 20 1 70.0");
    assert_eq!(row("Custom"), "6 2 6 2 33.3");
    assert!(stdout.contains("engine failures (no legal move): 3"), "{stdout}");

    let results: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let positions = results["positions"].as_array().unwrap();
    assert_eq!(positions.len(), SUITE.len());
    let by_id = |id: &str| positions.iter().find(|p| p["id"] == id).unwrap();
    assert_eq!(by_id("STS(v1.0) Undermine.002")["chosen_san"], "b5");
    assert_eq!(by_id("STS(v1.0) Undermine.002")["points"], 4);
    assert_eq!(by_id("STS(v1.0) Undermine.001")["nodes"], 100);
    assert!(by_id("Custom.3")["error"].as_str().unwrap().contains("crashed"));
    assert!(by_id("Custom.4")["error"].as_str().unwrap().contains("did not answer"));
    assert!(by_id("Custom.5")["error"].as_str().unwrap().contains("illegal move \"d2d5\""));
    assert_eq!(by_id("Custom.6")["points"], 1, "the engine is restarted after a failure");
    assert_eq!(results["report"]["total"]["points"], 16);

    // The JSON file is not overwritten without --force.
    let again = deepchess(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    assert!(!again.status.success());
    assert!(texts(&again).1.contains("--force"));
}

#[test]
fn an_engine_that_cannot_start_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (epd, _) = write_suite(dir.path());
    let out = deepchess(&["sts", "--epd", &epd, "--uci", "/nonexistent/engine --flag"]);
    assert!(!out.status.success());
    assert!(texts(&out).1.contains("cannot start `/nonexistent/engine`"), "{}", texts(&out).1);
    let silent = deepchess(&["sts", "--epd", &epd, "--uci", &fake_engine("silent", ""), "--hang-timeout-s", "1"]);
    assert!(!silent.status.success());
    assert!(texts(&silent).1.contains("did not answer to `uci` (handshake)"), "{}", texts(&silent).1);
}

#[test]
fn reference_engines_solve_mates_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("mates.epd");
    std::fs::write(
        &epd,
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"mate.1\";\n\
         rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - bm Qh4#; id \"mate.2\";\n",
    )
    .unwrap();
    for name in ["stockfish", "ethereal-chess", "toga2", "glaurung"] {
        let Some(path) = find_engine(name) else {
            println!("skipped {name}: not installed (Debian package {name})");
            continue;
        };
        let out = deepchess(&["sts", "--epd", epd.to_str().unwrap(), "--uci", path.to_str().unwrap(), "--depth", "4"]);
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{name}: {stderr}");
        assert!(stdout.ends_with("score=2/2 best=2 rating=4209\n"), "{name}: {stdout}");
    }
}

#[test]
fn an_option_value_our_engine_rejects_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (epd, _) = write_suite(dir.path());
    let out = deepchess(&["sts", "--epd", &epd, "--search", "policy", "--tt", "on", "--limit", "1"]);
    assert!(!out.status.success(), "a rejected option must not run with the defaults");
    let err = texts(&out).1;
    assert!(err.contains("rejected an option") && err.contains("TT") && err.contains("`on`"), "{err}");
    let ok = deepchess(&["sts", "--epd", &epd, "--search", "policy", "--tt", "true", "--limit", "1"]);
    assert!(ok.status.success(), "{}", texts(&ok).1);
}

#[test]
fn a_run_where_every_position_fails_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (epd, _) = write_suite(dir.path());
    for mode in ["illegal", "crash"] {
        let out = deepchess(&["sts", "--epd", &epd, "--uci", &fake_engine(mode, ""), "--limit", "3", "--depth", "1"]);
        let (stdout, stderr) = texts(&out);
        assert!(!out.status.success(), "{mode}: {stdout}\n{stderr}");
        assert!(stderr.contains("all 3 positions failed"), "{mode}: {stderr}");
    }
}

#[test]
fn a_line_that_is_not_utf8_is_skipped_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("latin1.epd");
    let mut text = b"6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"mate.1\";\n".to_vec();
    text.extend_from_slice(b"6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"caf\xe9\";\n");
    text.extend_from_slice(b"rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - bm Qh4#; id \"mate.2\";\n");
    std::fs::write(&epd, text).unwrap();
    let table = dir.path().join("table.txt");
    std::fs::write(&table, "6k1/5ppp/8/8/8/8/8/R5K1 w - -|a1a8\n").unwrap();
    let engine = fake_engine("table", table.to_str().unwrap());
    let out = deepchess(&["sts", "--epd", epd.to_str().unwrap(), "--uci", &engine, "--depth", "1"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("line 2: not UTF-8 text (byte 47 of the line is 0xe9) (skipped)"), "{stderr}");
    assert!(stdout.contains("score=1/2"), "two positions read, one solved: {stdout}");
    assert!(stderr.contains("1 of 2 positions failed"), "{stderr}");
}
