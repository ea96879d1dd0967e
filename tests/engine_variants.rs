//! Every search variant returns a legal move from tricky positions: promotions, en
//! passant, castling through check, stalemate traps, a single legal move.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use deepchess_engine::engine::Engine;
use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::Limits;
use shakmaty::Position;

/// FEN and what makes it tricky.
const TRICKY: [(&str, &str); 7] = [
    ("8/P6k/8/8/8/8/8/K7 w - - 0 1", "promotion"),
    ("1n5k/P7/8/8/8/8/8/K7 w - - 0 1", "promotion or capture-promotion"),
    ("4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1", "en passant available"),
    ("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1", "castling king-side through check is illegal"),
    ("7k/8/6Q1/8/8/8/8/6K1 w - - 0 1", "stalemate trap: most queen moves toward h7 stalemate"),
    ("k7/8/2Q5/8/8/8/8/1R5K b - - 0 1", "in check with a single legal move"),
    ("8/8/8/8/8/4k3/6q1/7K w - - 0 1", "in check, the only move captures the checker"),
];

/// The variants: (option settings, go limits).
fn variants() -> Vec<(Vec<(&'static str, &'static str)>, Limits)> {
    let depth = |d| Limits::depth(d);
    let nodes = |n| Limits { nodes: Some(n), ..Limits::default() };
    let mut out = Vec::new();
    for search in ["eval", "compare"] {
        for tt in ["true", "false"] {
            for ordering in ["true", "false"] {
                let limits = if search == "eval" { depth(3) } else { depth(2) };
                out.push((vec![("Search", search), ("TT", tt), ("Ordering", ordering)], limits));
            }
        }
    }
    out.push((
        vec![
            ("Search", "eval"),
            ("PVS", "false"),
            ("NullMove", "false"),
            ("Killers", "false"),
            ("CheckExtensions", "false"),
            ("Aspiration", "false"),
            ("LMR", "false"),
            ("LMP", "false"),
            ("SEE", "false"),
            ("OrderingDepth", "1"),
        ],
        depth(3),
    ));
    out.push((vec![("Search", "eval")], depth(5)));
    out.push((vec![("Search", "eval"), ("Threads", "2")], depth(3)));
    for leaf in ["value", "rollout", "random", "puct"] {
        for select in ["value", "visits", "both"] {
            out.push((vec![("Search", "mcts"), ("MctsLeaf", leaf), ("MctsSelect", select)], nodes(60)));
        }
    }
    for mode in ["joint", "greedy"] {
        out.push((vec![("Search", "policy"), ("PolicyMode", mode)], depth(1)));
    }
    out
}

#[test]
fn every_variant_plays_a_legal_move_in_tricky_positions() {
    let networks = Networks::random(12);
    for (settings, limits) in variants() {
        let mut engine = Engine::new(networks.clone());
        for (name, value) in &settings {
            engine.set_option(name, value).unwrap();
        }
        for (fen, what) in TRICKY {
            let game = Game::from_uci(Some(fen), &[]).unwrap();
            let result = engine.go(&game, &limits, Arc::new(AtomicBool::new(false)), &mut |_| {});
            let result = result.unwrap_or_else(|| panic!("{settings:?}: no move in {fen} ({what})"));
            assert!(game.position().is_legal(result.best), "{settings:?}: illegal {:?} in {fen} ({what})", result.best);
            let mut line = game.position().clone();
            for m in &result.pv {
                assert!(line.is_legal(*m), "{settings:?}: illegal PV {:?} in {fen}", result.pv);
                line.play_unchecked(*m);
            }
        }
    }
}

#[test]
fn castling_through_check_is_never_played() {
    let networks = Networks::random(13);
    let game = Game::from_uci(Some("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1"), &[]).unwrap();
    assert!(!game.position().legal_moves().iter().any(|m| m.castling_side() == Some(shakmaty::CastlingSide::KingSide)));
    let mut engine = Engine::new(networks);
    let result = engine.go(&game, &Limits::depth(3), Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap();
    assert_ne!(result.best.castling_side(), Some(shakmaty::CastlingSide::KingSide));
}

/// Output into a pipe closed early (`deepchess analyse -v | head -2`) ends the process
/// quietly instead of a panic on the broken pipe.
#[cfg(unix)]
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .args([
            "analyse",
            "--fen",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "--depth",
            "8",
            "-v",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("deepchess starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.next().is_some_and(|l| l.is_ok()), "a first line");
    drop(lines);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101), "{stderr}");
}
