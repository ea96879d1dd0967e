//! Evaluation search: mates, order independence of the minimax value, repetition draws,
//! time limits and threads.

use std::time::Duration;

use shakmaty::{Chess, Color, Position};

use super::searcher::POLL_INTERVAL;
use super::*;
use crate::search::{Limits, Score, uci_move};

/// The embedded networks: a random value net is not symmetric between the two sides, so its
/// scores swing by hundreds of centipawns from ply to ply and quiescence explodes (450k nodes
/// at depth 1 in Kiwipete against 226 with the trained net).
fn networks() -> Networks {
    Networks::embedded().expect("the embedded networks load")
}

fn run(networks: &Networks, fen: &str, moves: &[&str], options: EvalOptions, depth: u32) -> SearchResult {
    let game = Game::from_uci(Some(fen), moves).unwrap();
    let tt = Table::new(4);
    search(
        networks,
        &game,
        options,
        &tt,
        &mut Histories::default(),
        &Control::unlimited(Some(depth)),
        1,
        None,
        &mut |_| {},
    )
}

#[test]
fn mate_in_two_is_found() {
    let networks = networks();
    // 1. Ra6! bxa6 2. b7# (depth 5: the random nets order Ra6 late, and the default late
    // move reductions (`lmr_divisor` 145) take a ply of it at depth 4)
    let result = run(&networks, "kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", &[], EvalOptions::DEFAULT, 5);
    assert_eq!(result.score, Score::Mate(2));
    assert_eq!(uci_move(&result.best), "a1a6");
    for options in [EvalOptions::PLAIN, EvalOptions { tt: true, ordering: true, ..EvalOptions::PLAIN }] {
        assert_eq!(run(&networks, "kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", &[], options, 3).score, Score::Mate(2));
    }
    // The side getting mated sees it too: mated in 1 after 1. Ra6 (Black to move).
    let result = run(&networks, "kbK5/pp6/RP6/8/8/8/8/8 b - - 1 1", &[], EvalOptions::DEFAULT, 3);
    assert_eq!(result.score, Score::Mate(-1));
}

#[test]
fn move_ordering_never_changes_the_fixed_depth_value() {
    let networks = networks();
    let fens = [
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ];
    for fen in fens {
        let plain = run(&networks, fen, &[], EvalOptions::PLAIN, 3);
        for options in [
            EvalOptions { ordering: true, ..EvalOptions::PLAIN },
            EvalOptions { killers: true, ..EvalOptions::PLAIN },
            EvalOptions { ordering: true, killers: true, pvs: true, ..EvalOptions::PLAIN },
            // Histories only reorder moves when reductions are off.
            EvalOptions { ordering: true, killers: true, histories: true, ..EvalOptions::PLAIN },
            EvalOptions { histories: true, ..EvalOptions::PLAIN },
            EvalOptions { ordering: true, predictor_depth: 3, ..EvalOptions::PLAIN },
            EvalOptions { ordering: true, predictor_depth: 3, see_ordering: true, ..EvalOptions::PLAIN },
        ] {
            let other = run(&networks, fen, &[], options, 3);
            assert_eq!(other.score, plain.score, "{fen} with {options:?}");
        }
    }
}

#[test]
fn ordering_and_tt_save_nodes() {
    let networks = networks();
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let plain = run(&networks, fen, &[], EvalOptions::PLAIN, 4);
    let full = run(&networks, fen, &[], EvalOptions::DEFAULT, 4);
    assert!(full.nodes < plain.nodes, "full {} vs plain {}", full.nodes, plain.nodes);
    // Deterministic: the same search twice visits the same nodes.
    assert_eq!(run(&networks, fen, &[], EvalOptions::DEFAULT, 4).nodes, full.nodes);
}

#[test]
fn threefold_repetition_is_a_draw() {
    let networks = networks();
    // Knights out and back twice: after 1... Nf6-g8 the start position occurs a third time.
    let moves = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"];
    let game = Game::from_uci(None, &moves).unwrap();
    let back = shakmaty::uci::UciMove::from_ascii(b"f6g8").unwrap().to_move(game.position()).unwrap();
    let tt = Table::new(1);
    let mut control = Control::unlimited(Some(2));
    control.search_moves = vec![back];
    let result =
        search(&networks, &game, EvalOptions::PLAIN, &tt, &mut Histories::default(), &control, 1, None, &mut |_| {});
    assert_eq!((result.best, result.score), (back, Score::Cp(0)));
    // Without that history the same move is scored by the network.
    let fresh = Game::from_uci(
        Some(&shakmaty::fen::Fen::from_position(game.position(), shakmaty::EnPassantMode::Legal).to_string()),
        &[],
    )
    .unwrap();
    let result =
        search(&networks, &fresh, EvalOptions::PLAIN, &tt, &mut Histories::default(), &control, 1, None, &mut |_| {});
    assert_ne!(result.score, Score::Cp(0));
}

#[test]
fn one_millisecond_still_gives_a_legal_move_and_threads_agree_on_legality() {
    let networks = networks();
    let game =
        Game::from_uci(Some("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"), &[]).unwrap();
    let tt = Table::new(4);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let control = Control::new(&Limits::move_time(Duration::from_millis(1)), Color::White, Duration::ZERO, stop);
    let result =
        search(&networks, &game, EvalOptions::DEFAULT, &tt, &mut Histories::default(), &control, 1, None, &mut |_| {});
    assert!(game.position().is_legal(result.best));
    let result = search(
        &networks,
        &game,
        EvalOptions::DEFAULT,
        &tt,
        &mut Histories::default(),
        &Control::unlimited(Some(3)),
        2,
        None,
        &mut |_| {},
    );
    assert!(game.position().is_legal(result.best));
    assert_eq!(result.depth, 3);
}

#[test]
fn lazy_smp_counts_every_thread_and_reports_the_move_it_plays() {
    let networks = networks();
    let game = Game::from_uci(Some("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQ - 0 9"), &[]).unwrap();
    let limits = Limits { nodes: Some(60_000), ..Limits::default() };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let control = Control::new(&limits, Color::White, Duration::ZERO, stop);
    let mut last: Option<Info> = None;
    let result = search(
        &networks,
        &game,
        EvalOptions::DEFAULT,
        &Table::new(4),
        &mut Histories::default(),
        &control,
        3,
        None,
        &mut |report| {
            if let Report::Info(info) = report {
                last = Some(info.clone());
            }
        },
    );
    assert!(game.position().is_legal(result.best));
    // the node limit counts all three threads, and the result reports all of them
    assert!((60_000..60_000 + 4 * POLL_INTERVAL).contains(&result.nodes), "{}", result.nodes);
    let last = last.expect("an info line");
    assert_eq!(
        (last.pv.first(), last.depth),
        (Some(&result.best), result.depth),
        "the last line shows the move played"
    );
}

#[test]
fn a_helper_outplays_the_main_thread_only_deeper_and_no_worse() {
    let m = Chess::default().legal_moves()[0];
    let at = |depth, score| SearchResult { best: m, score, pv: vec![m], depth, nodes: 0 };
    assert!(outplays(&at(9, Score::Cp(20)), &at(8, Score::Cp(20))));
    assert!(outplays(&at(9, Score::Mate(3)), &at(8, Score::Cp(900))));
    assert!(!outplays(&at(9, Score::Cp(19)), &at(8, Score::Cp(20))));
    assert!(!outplays(&at(8, Score::Cp(90)), &at(8, Score::Cp(20))));
    assert!(!outplays(&at(7, Score::Mate(1)), &at(8, Score::Cp(20))));
}

#[test]
fn helpers_skip_depths_in_phases_and_the_main_thread_never() {
    let searched = |helper, game_ply| (1..=12).filter(|&d| !helper_skips(helper, d, game_ply)).collect::<Vec<i32>>();
    assert_eq!(searched(0, 7), (1..=12).collect::<Vec<_>>());
    // the first helper takes every other depth, the other half at the next ply of the game
    assert_eq!(searched(1, 0), [2, 4, 6, 8, 10, 12]);
    assert_eq!(searched(1, 1), [1, 3, 5, 7, 9, 11]);
    // the third helper goes by pairs of depths
    assert_eq!(searched(3, 0), [1, 4, 5, 8, 9, 12]);
    // the first twenty helpers together leave no depth out, and the pattern repeats after them
    for game_ply in 0..4 {
        for depth in 1..=40 {
            assert!((1..=20).any(|h| !helper_skips(h, depth, game_ply)), "depth {depth} at ply {game_ply}");
            assert_eq!(helper_skips(5, depth, game_ply), helper_skips(25, depth, game_ply));
        }
    }
}

#[test]
fn fifty_move_rule_is_a_draw_but_mate_on_the_last_move_counts() {
    let networks = networks();
    // Rook up, but every move reaches the hundredth half-move without mate.
    let result = run(&networks, "8/8/8/8/8/4k3/8/R3K3 w - - 99 80", &[], EvalOptions::DEFAULT, 3);
    assert_eq!(result.score, Score::Cp(0));
    // Mate in one on the hundredth half-move still wins.
    let result = run(&networks, "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 99 80", &[], EvalOptions::DEFAULT, 3);
    assert_eq!(result.score, Score::Mate(1));
}

#[test]
fn pruning_and_reductions_keep_the_mate_in_two() {
    let networks = networks();
    let fen = "kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1";
    let base = EvalOptions { tt: true, ordering: true, pvs: true, killers: true, ..EvalOptions::PLAIN };
    for options in [
        EvalOptions { lmr: true, ..base },
        EvalOptions { lmp: true, ..base },
        EvalOptions { razoring: true, ..base },
        EvalOptions { null_move: true, ..base },
        EvalOptions { singular: true, ..base },
        EvalOptions { lmr: true, lmr_improving: true, ..base },
        EvalOptions { see: true, ..base },
        EvalOptions { predictor_depth: 3, ..base },
        EvalOptions { histories: true, lmr: true, ..base },
        EvalOptions { rfp: true, ..base },
        EvalOptions { iir: true, ..base },
        EvalOptions { qs_tt: true, ..base },
        EvalOptions { see_pruning: true, ..base },
        EvalOptions { see_ordering: true, ..base },
        EvalOptions { pv_table_cuts: false, ..EvalOptions::DEFAULT },
        EvalOptions { staged_tt_move: false, ..EvalOptions::DEFAULT },
        EvalOptions::DEFAULT,
    ] {
        let result = run(&networks, fen, &[], options, 5);
        assert_eq!((result.score, uci_move(&result.best)), (Score::Mate(2), "a1a6".to_string()), "{options:?}");
    }
}

#[test]
fn reductions_and_pruning_save_nodes() {
    let networks = networks();
    let fen = "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7";
    let none = EvalOptions {
        lmr: false,
        lmp: false,
        see: false,
        rfp: false,
        iir: false,
        see_pruning: false,
        histories: false,
        qs_tt: false,
        ..EvalOptions::DEFAULT
    };
    // SEE in quiescence tames the capture sequences (depth 4: 173,588 nodes without it).
    let without = run(&networks, fen, &[], none, 4).nodes;
    let nodes = run(&networks, fen, &[], EvalOptions { see: true, ..none }, 4).nodes;
    assert!(nodes < without, "SEE: {nodes} nodes, {without} without");
    // Each technique on top of that saves nodes at depth 6, summed over four positions (alone
    // one of them may cost nodes in one position: reverse futility pruning did in the first
    // with an earlier net, 95,789 nodes against 78,062).
    let with_see = EvalOptions { see: true, ..none };
    let positions = [
        fen,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
        "8/5pk1/6p1/3R4/5P2/6P1/r5K1/8 w - - 0 40",
    ];
    let total =
        |options: EvalOptions| -> u64 { positions.iter().map(|fen| run(&networks, fen, &[], options, 6).nodes).sum() };
    let without = total(with_see);
    for options in [
        EvalOptions { lmr: true, ..with_see },
        EvalOptions { rfp: true, ..with_see },
        EvalOptions { see_pruning: true, ..with_see },
        EvalOptions::DEFAULT,
    ] {
        let nodes = total(options);
        assert!(nodes < without, "{options:?}: {nodes} nodes, {without} without");
    }
}

#[test]
fn every_pruning_on_still_finds_longer_mates() {
    let networks = networks();
    // Checked with Stockfish: mates in 2, 3 and 4, most of them through a queen sacrifice
    // that pruning by material (SEE, futility) is tempted to skip.
    for (fen, mate, first) in [
        ("r1bq2r1/b4pk1/p1pp1p2/1p2pP2/1P2P1PB/3P4/1PPQ2P1/R3K2R w - - 0 1", 2, "d2h6"),
        ("6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1", 2, "g2g1"),
        ("r1b3kr/ppp1Bp1p/1b6/n2P4/2p3q1/2Q2N2/P4PPP/RN2R1K1 w - - 1 1", 3, "c3h8"),
        ("1r2k1r1/pbppnp1p/1b3P2/8/Q7/B1PB1q2/P4PPP/3R2K1 w - - 1 1", 4, "a4d7"),
    ] {
        let result = run(&networks, fen, &[], EvalOptions::DEFAULT, 2 * mate as u32 + 2);
        assert_eq!((result.score, uci_move(&result.best)), (Score::Mate(mate), first.to_string()), "{fen}");
    }
}

#[test]
fn multipv_cut_short_reports_every_line_it_has() {
    let networks = networks();
    let game = Game::from_uci(None, &["e2e4", "e7e5"]).unwrap();
    let mut cut_short = 0;
    for budget in (3_000..60_000).step_by(1_900) {
        let limits = Limits { nodes: Some(budget), ..Limits::default() };
        let control = Control::new(&limits, game.position().turn(), Duration::ZERO, Default::default()).with_multipv(3);
        let mut infos = Vec::new();
        let tt = Table::new(4);
        let mut histories = Histories::default();
        search(&networks, &game, EvalOptions::DEFAULT, &tt, &mut histories, &control, 1, None, &mut |report| {
            if let Report::Info(info) = report {
                infos.push(info.clone());
            }
        });
        if infos.len() < 3 {
            continue;
        }
        // The last report holds the three lines, numbered in order, with distinct moves,
        // however far the last iteration got.
        let last = &infos[infos.len() - 3..];
        assert_eq!(last.iter().map(|i| i.multipv).collect::<Vec<_>>(), [1, 2, 3], "{budget}: {last:#?}");
        assert!(last[0].pv[0] != last[1].pv[0] && last[1].pv[0] != last[2].pv[0] && last[0].pv[0] != last[2].pv[0]);
        cut_short += usize::from(last[0].depth != last[2].depth);
    }
    assert!(cut_short > 0, "some budget ends an iteration between its lines");
}
