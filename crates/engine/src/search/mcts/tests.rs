//! The search's answers: mates found and proven, every kind of limit answered once with
//! a legal move (finished games at the leaves, a single legal move), tree reuse, the
//! memory bound and `MultiPV`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::channel;
use std::time::Duration;

use shakmaty::{Color, Position};

use super::params::Params;
use super::tree::PriorSource;
use super::*;
use crate::search::Limits;
use crate::search::uci_move;

fn run(mcts: &mut Mcts, networks: &Networks, game: &Game, playouts: u64) -> SearchResult {
    let limits = Limits { nodes: Some(playouts), ..Limits::default() };
    let control = Control::new(&limits, game.position().turn(), Duration::ZERO, Default::default());
    mcts.search(networks, game, &control, &mut |_| {})
}

const ALL_LEAVES: [LeafEval; 4] =
    [LeafEval::Value, LeafEval::PredictorRollout, LeafEval::RandomRollout, LeafEval::Puct];

#[test]
fn every_leaf_evaluation_finds_mate_in_one() {
    let networks = Networks::random(8);
    let game = Game::from_uci(Some("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), &[]).unwrap();
    for leaf in ALL_LEAVES {
        for select in [FinalMove::Visits, FinalMove::Value, FinalMove::Both] {
            let mut mcts = Mcts::new(MctsOptions { leaf, select, ..MctsOptions::default() }, 1);
            let result = run(&mut mcts, &networks, &game, 400);
            assert_eq!(uci_move(&result.best), "d1d8", "{leaf:?} {select:?}");
        }
    }
}

#[test]
fn a_proven_mate_is_played_at_once_with_its_distance() {
    let networks = Networks::random(8);
    // Mate in one: proven as soon as the mating move is tried, and the search ends.
    let game = Game::from_uci(Some("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), &[]).unwrap();
    let result = run(&mut Mcts::new(MctsOptions::default(), 1), &networks, &game, 100_000);
    assert_eq!((uci_move(&result.best), result.score), ("d1d8".to_string(), Score::Mate(1)));
    assert!(result.nodes < 2_000, "{} playouts", result.nodes);
    // Mate in two (1. Qg7+? no: 1. Rh8+ Kxh8 2. Qh7#... here a plain ladder mate).
    let game = Game::from_uci(Some("6k1/8/8/8/8/8/R7/1R4K1 w - - 0 1"), &[]).unwrap();
    let result = run(&mut Mcts::new(MctsOptions::default(), 1), &networks, &game, 100_000);
    assert_eq!(result.score, Score::Mate(2), "{:?}", result.pv);
    assert!(result.nodes < 100_000, "proven before the budget: {}", result.nodes);
    let mut after = game.clone();
    after.play(result.best);
    after.play(result.pv[1]);
    assert!(after.position().legal_moves().iter().any(|m| {
        let mut mated = after.position().clone();
        mated.play_unchecked(*m);
        mated.is_checkmate()
    }));
}

/// Runs a search with `threads` threads on the tree, on its own thread, and fails when it
/// does not answer within 20 s (it is then stopped).
fn answers_with_threads(options: MctsOptions, threads: usize, fen: &str, limits: Limits) -> SearchResult {
    let networks = Networks::random(8);
    let game = Game::from_uci(Some(fen), &[]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let control = Control::new(&limits, game.position().turn(), Duration::ZERO, stop.clone());
    let (send, receive) = channel();
    let searched = game.clone();
    std::thread::spawn(move || {
        let mut mcts = Mcts::new(options, 3);
        mcts.set_threads(threads);
        let result = mcts.search(&networks, &searched, &control, &mut |_| {});
        let _ = send.send(result);
    });
    let result = receive.recv_timeout(Duration::from_secs(20));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let result = result.unwrap_or_else(|_| panic!("{options:?} {limits:?} in {fen}: no answer within 20 s"));
    assert!(game.position().is_legal(result.best), "{fen}: {}", uci_move(&result.best));
    result
}

#[test]
fn go_depth_answers_when_the_principal_variation_ends_in_a_finished_game() {
    let positions = [
        // Bare kings: every move draws by insufficient material.
        "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
        // One legal move, into a draw.
        "k7/8/8/8/8/8/1q6/K7 w - - 0 1",
        // Mate in one.
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        // Stalemate in one for the side to move to give.
        "7k/5Q2/5K2/8/8/8/8/8 w - - 0 1",
    ];
    for leaf in ALL_LEAVES {
        for fen in positions {
            for depth in [1, 5, 30] {
                for threads in [1, 2] {
                    answers_with_threads(
                        MctsOptions { leaf, ..MctsOptions::default() },
                        threads,
                        fen,
                        Limits::depth(depth),
                    );
                }
            }
        }
    }
}

#[test]
fn every_kind_of_limit_is_answered_with_a_legal_move() {
    let mut clock = Limits { time: [Some(Duration::from_millis(300)); 2], ..Limits::default() };
    clock.increment = [Duration::from_millis(10); 2];
    let limits = [
        Limits::depth(3),
        Limits { nodes: Some(50), ..Limits::default() },
        Limits::move_time(Duration::from_millis(30)),
        clock,
    ];
    for fen in ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "k7/8/8/8/8/8/1q6/K7 w - - 0 1"] {
        for limits in &limits {
            for threads in [1, 3] {
                answers_with_threads(MctsOptions::default(), threads, fen, limits.clone());
            }
        }
    }
}

#[test]
fn threads_share_one_tree_that_holds_every_playout_and_stays_within_its_memory() {
    let networks = Networks::random(8);
    let game = Game::default();
    let mut mcts = Mcts::new(MctsOptions::default(), 3);
    mcts.set_threads(3);
    mcts.set_memory(1);
    let budget = 20_000;
    let result = run(&mut mcts, &networks, &game, budget);
    assert_eq!(result.nodes, budget, "no thread starts a playout past the budget");
    assert_eq!(u64::from(mcts.tree.nodes[0].visits), result.nodes, "every thread's playouts went through the root");
    let below: u32 = mcts.tree.children(0).map(|c| mcts.tree.nodes[c].visits).sum();
    assert_eq!(u64::from(below), result.nodes, "and through one root move each");
    assert!(mcts.tree_memory() <= 1 << 20, "{} bytes", mcts.tree_memory());
    // A mate in one is found and proven with several threads too.
    let mate = Game::from_uci(Some("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), &[]).unwrap();
    let result = run(&mut mcts, &networks, &mate, 100_000);
    assert_eq!((uci_move(&result.best), result.score), ("d1d8".to_string(), Score::Mate(1)));
    // Back to one thread: the search is deterministic again.
    mcts.set_threads(1);
    let one = run(&mut mcts, &networks, &game, 2000);
    let again = run(&mut Mcts::new(MctsOptions::default(), 3), &networks, &game, 2000);
    assert_eq!((one.best, one.pv), (again.best, again.pv));
}

#[test]
fn tree_is_reused_after_two_plies_and_counts_are_deterministic() {
    let networks = Networks::random(8);
    let mut mcts = Mcts::new(MctsOptions::default(), 7);
    let game = Game::default();
    let first = run(&mut mcts, &networks, &game, 3000);
    assert_eq!(first.nodes, 3000);
    let mut next = game.clone();
    next.play(first.best);
    let Some(&reply) = first.pv.get(1) else { panic!("a principal variation of two plies: {:?}", first.pv) };
    next.play(reply);
    let before = mcts.tree_size();
    mcts.reuse(key(next.position()), &[]);
    let kept = mcts.tree_size();
    assert!(kept > 1 && kept < before, "kept {kept} of {before}");
    assert!(mcts.tree.nodes[0].visits > 0);
    // Same seed, same search.
    let again = run(&mut Mcts::new(MctsOptions::default(), 7), &networks, &game, 3000);
    assert_eq!((again.best, again.pv), (first.best, first.pv));
}

#[test]
fn a_kept_root_gets_the_priors_of_a_new_root() {
    let networks = Networks::random(8);
    let mut mcts = Mcts::new(MctsOptions::default(), 7);
    let mut game = Game::default();
    let first = run(&mut mcts, &networks, &game, 3000);
    game.play(first.best);
    game.play(first.pv[1]);
    run(&mut mcts, &networks, &game, 1);
    let mut fresh = Mcts::new(MctsOptions::default(), 7);
    run(&mut fresh, &networks, &game, 1);
    let by_move = |tree: &Tree| {
        let mut priors: Vec<(String, f32)> = tree.edges(0).iter().map(|e| (uci_move(&e.mv), e.prior)).collect();
        priors.sort_by(|a, b| a.0.cmp(&b.0));
        priors
    };
    let (kept, new) = (by_move(&mcts.tree), by_move(&fresh.tree));
    assert!(mcts.tree.nodes[0].visits > 2, "the root is the kept one");
    assert_eq!(kept.len(), new.len());
    for ((m, a), (n, b)) in kept.iter().zip(&new) {
        assert_eq!(m, n);
        assert!((a - b).abs() <= 1e-5 + 1e-3 * b, "{m}: kept {a}, new {b}");
    }
}

#[test]
fn edges_keep_the_generators_order_and_a_cleared_tree_searches_as_a_new_one() {
    let networks = Networks::random(8);
    let game = Game::from_uci(Some("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"), &[]).unwrap();
    let mut mcts = Mcts::new(MctsOptions::default(), 5);
    let first = run(&mut mcts, &networks, &game, 3000);
    let tree = &mcts.tree;
    let predicted = tree.nodes.iter().filter(|n| n.expanded && n.priors != PriorSource::Cheap).count();
    assert!(predicted > 1, "nodes with the predictors' priors: {predicted}");
    // A node past `value_prior_visits` visits has its priors weighted by value (once).
    let busy: Vec<_> = tree
        .nodes
        .iter()
        .filter(|n| n.expanded && n.proof == 0 && f64::from(n.visits) > Params::DEFAULT.value_prior_visits)
        .collect();
    assert!(busy.len() > 1, "busy nodes: {}", busy.len());
    assert!(busy.iter().all(|n| n.priors == PriorSource::Weighted));
    assert!(
        tree.nodes
            .iter()
            .filter(|n| f64::from(n.visits) < Params::DEFAULT.prior_visits)
            .all(|n| n.priors == PriorSource::Cheap)
    );
    let mut position = game.position().clone();
    for node in std::iter::successors(Some(0), |&n| tree.best_child(n).map(|(_, c)| c)) {
        if tree.nodes[node].expanded {
            let moves: Vec<Move> = tree.edges(node).iter().map(|e| e.mv).collect();
            assert_eq!(moves, position.legal_moves().to_vec(), "node {node}");
        }
        match tree.best_child(node) {
            Some((m, _)) => position.play_unchecked(m),
            None => break,
        }
    }
    mcts.clear();
    let again = run(&mut mcts, &networks, &game, 3000);
    assert_eq!((again.best, again.pv, again.nodes), (first.best, first.pv, first.nodes));
}

#[test]
fn searchmoves_are_kept_and_a_restricted_root_is_not_reused() {
    let networks = Networks::random(8);
    let mut mcts = Mcts::new(MctsOptions::default(), 7);
    let game = Game::default();
    let only: Vec<Move> = game.position().legal_moves().into_iter().filter(|m| uci_move(m) == "a2a3").collect();
    let limits = Limits { nodes: Some(100), search_moves: only.clone(), ..Limits::default() };
    let control = Control::new(&limits, Color::White, Duration::ZERO, Default::default());
    assert_eq!(mcts.search(&networks, &game, &control, &mut |_| {}).best, only[0]);
    let free = run(&mut mcts, &networks, &game, 200);
    assert_eq!(mcts.tree.nodes[0].count, 20, "all moves at the root again");
    assert_eq!(free.nodes, 200);
}

#[test]
fn the_tree_stays_within_its_memory_says_so_once_and_the_search_goes_on() {
    let networks = Networks::random(8);
    let game = Game::default();
    for (leaf, playouts) in [(LeafEval::Puct, 20_000), (LeafEval::Value, 20_000)] {
        let mut mcts = Mcts::new(MctsOptions { leaf, ..MctsOptions::default() }, 3);
        mcts.set_memory(1);
        let limits = Limits { nodes: Some(playouts), ..Limits::default() };
        let control = Control::new(&limits, Color::White, Duration::ZERO, Default::default()).with_multipv(3);
        let (mut messages, mut last) = (Vec::new(), None);
        let result = mcts.search(&networks, &game, &control, &mut |report| match report {
            Report::String(text) => messages.push(text.clone()),
            Report::Info(info) => last = Some(info.clone()),
        });
        assert_eq!(result.nodes, playouts, "{leaf:?}: the search went on to its budget");
        assert!(mcts.tree_memory() <= 1 << 20, "{leaf:?}: {} bytes", mcts.tree_memory());
        assert_eq!(messages.len(), 1, "{leaf:?}: {messages:?}");
        assert!(messages[0].starts_with("MCTS tree full") && messages[0].contains("recycling"), "{}", messages[0]);
        let last = last.expect("a report");
        let permille = (mcts.tree_memory() * 1000 / (1 << 20)) as u32;
        assert!(permille > 50 && last.hashfull == Some(permille), "{leaf:?}: {:?} {permille}", last.hashfull);
        // Recycling kept the root's statistics: every playout went through it.
        assert_eq!(u64::from(mcts.tree.nodes[0].visits), playouts, "{leaf:?}");
        // With a larger bound the same search never fills the tree.
        let mut roomy = Mcts::new(MctsOptions { leaf, ..MctsOptions::default() }, 3);
        roomy.set_memory(64);
        let mut said = false;
        roomy.search(&networks, &game, &control, &mut |report| said |= matches!(report, Report::String(_)));
        assert!(!said && roomy.tree_memory() > mcts.tree_memory(), "{leaf:?}");
    }
}

#[test]
fn multipv_reports_distinct_root_moves_the_played_one_first() {
    let networks = Networks::random(8);
    let game = Game::default();
    let mut mcts = Mcts::new(MctsOptions::default(), 5);
    let limits = Limits { nodes: Some(300), ..Limits::default() };
    let control = Control::new(&limits, Color::White, Duration::ZERO, Default::default()).with_multipv(3);
    let mut lines = Vec::new();
    let result = mcts.search(&networks, &game, &control, &mut |report| {
        if let Report::Info(info) = report {
            lines.push(info.clone());
        }
    });
    let last: Vec<&Info> = lines.iter().rev().take(3).rev().collect();
    assert_eq!(last.iter().map(|i| i.multipv).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(last[0].pv[0], result.best);
    let firsts: Vec<Move> = last.iter().map(|i| i.pv[0]).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{last:?}");
    assert!(last[0].seldepth >= last[0].depth && last[0].seldepth > 1);
}

#[test]
fn a_lead_holds_when_the_playouts_to_come_cannot_undo_it() {
    let (second, tenth) = (Duration::from_secs(1), Duration::from_millis(100));
    // 1,000 playouts in a second: 100 more in the tenth of a second left.
    assert!(lead_holds(101, 1_000, second, tenth));
    assert!(!lead_holds(100, 1_000, second, tenth));
    assert!(lead_holds(1, 1_000, second, Duration::ZERO), "no time left: any lead holds");
    assert!(!lead_holds(u32::MAX, 0, Duration::ZERO, tenth), "nothing spent yet: no rate to judge by");
}

#[test]
fn only_a_clock_lets_a_search_end_before_its_soft_limit() {
    let control = |limits: &Limits| Control::new(limits, Color::White, Duration::ZERO, Arc::default());
    let clock = Limits { time: [Some(Duration::from_secs(10)); 2], ..Limits::default() };
    let (spent, left) = control(&clock).soft_clock().expect("a clock has a soft limit before its hard one");
    assert!(spent < left, "{spent:?} {left:?}");
    let move_time = Limits { move_time: Some(Duration::from_secs(1)), ..Limits::default() };
    assert_eq!(control(&move_time).soft_clock(), None, "a fixed move time is used in full");
    assert_eq!(control(&Limits::default()).soft_clock(), None, "no limit: nothing to save time for");
}
