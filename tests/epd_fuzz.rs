//! EPD input fuzzed (seeded, bounded): random text and damaged real suite lines go through
//! the public EPD API of the arena (`epd::parse_line`, `epd::parse_move`,
//! `suite::SuitePosition::from_epd`, `suite::Suite::read`). Nothing may panic; a bad line is
//! an error (a suite file's error names the line), a bad file an error naming the file.

use deepchess_arena::epd::{parse_line, parse_move};
use deepchess_arena::suite::{Suite, SuitePosition};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Real suite lines: STS with points, a counter-carrying line, `am`, UCI moves.
const LINES: [&str; 5] = [
    "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id \"STS(v1.0) Undermine.001\"; c0 \"f5=10, Be5+=2, Bf2=3, Bg4=2\"; c7 \"f5 Be5+ Bf2 Bg4\"; c8 \"10 2 3 2\"; c9 \"f4f5 d4e5 d4f2 f3g4\";",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 bm Bb5; id \"ruy\";",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - bm Rd8#; am Kf1; id \"WAC.001\";",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - bm e1g1 O-O-O; hmvc 3; fmvn 20; id \"castles\";",
    "8/8/8/3pP3/8/8/8/k1K5 w - d6 bm exd6; id \"ep\";",
];

fn runner(seed: u8, cases: u32) -> TestRunner {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]))
}

/// Parses `text` as every user of EPD lines does; returns whether it made a suite position.
fn exercise(text: &str, line: usize) -> bool {
    match parse_line(text) {
        Err(message) => {
            assert!(!message.is_empty());
            false
        }
        Ok(epd) => {
            for op in &epd.operations {
                for operand in &op.operands {
                    for token in operand.split_whitespace() {
                        let _ = parse_move(&epd.position, token);
                    }
                }
            }
            SuitePosition::from_epd(line, epd).is_ok()
        }
    }
}

#[test]
fn damaged_and_random_epd_lines_never_panic() {
    let edits = proptest::collection::vec((any::<usize>(), 0..5u8, any::<char>()), 0..12);
    let strategy = (0..LINES.len(), any::<bool>(), ".{0,120}", edits);
    let good = std::cell::Cell::new(0);
    runner(21, 400)
        .run(&strategy, |(base, random, noise, edits)| {
            let mut text: Vec<char> = if random { noise.chars().collect() } else { LINES[base].chars().collect() };
            for &(at, kind, c) in &edits {
                let at = at % (text.len() + 1);
                match kind {
                    0 if at < text.len() => text[at] = c,
                    1 => text.insert(at, ['"', ';', ' ', '/', '-'][at % 5]),
                    2 if at < text.len() => {
                        text.remove(at);
                    }
                    3 => text.insert(at, c),
                    _ => text.truncate(at),
                }
            }
            let text: String = text.into_iter().collect();
            good.set(good.get() + usize::from(exercise(&text, 1)));
            Ok(())
        })
        .unwrap();
    // unedited lines (about a fifth of the real-line cases) and harmless edits make positions
    assert!(good.get() > 20, "{} suite positions", good.get());
    for line in LINES {
        assert!(exercise(line, 1), "{line}");
    }
}

#[test]
fn damaged_suite_files_report_lines_or_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let strategy = (proptest::collection::vec((0..LINES.len(), any::<bool>(), any::<usize>()), 1..20), any::<u8>());
    runner(22, 60)
        .run(&strategy, |(lines, junk)| {
            let mut bytes = Vec::new();
            for &(i, cut, at) in &lines {
                let line = LINES[i].as_bytes();
                bytes.extend_from_slice(if cut { &line[..at % line.len()] } else { line });
                bytes.push(b'\n');
            }
            if junk > 200 {
                bytes.insert(bytes.len() / 2, junk); // not UTF-8
            }
            let path = dir.path().join("suite.epd");
            std::fs::write(&path, &bytes).unwrap();
            match Suite::read(&path) {
                Ok(suite) => {
                    let count = bytes.iter().filter(|&&b| b == b'\n').count();
                    prop_assert!(suite.errors.iter().all(|e| (1..=count).contains(&e.line)));
                    prop_assert!(suite.positions.len() + suite.errors.len() <= lines.len());
                }
                Err(e) => prop_assert!(e.to_string().contains("suite.epd"), "{}", e),
            }
            Ok(())
        })
        .unwrap();
}
