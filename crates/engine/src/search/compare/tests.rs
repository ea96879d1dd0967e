//! The comparison search: mates with both comparators and every variant, draws, the
//! reported score, legal moves.

use super::*;
use crate::search::uci_move;

fn run(fen: &str, options: CompareOptions, depth: u32) -> SearchResult {
    let networks = Networks::random(6);
    let game = Game::from_uci(Some(fen), &[]).unwrap();
    let mut table = CompareTable::new(8);
    search(&networks, &game, options, &mut table, &Control::unlimited(Some(depth)), &mut |_| {})
}

#[test]
fn all_four_variants_find_mate_in_one_and_two() {
    for tt in [false, true] {
        for ordering in [false, true] {
            let options = CompareOptions { tt, ordering, student: false, selective: false };
            let result = run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", options, 1);
            assert_eq!((uci_move(&result.best), result.score), ("d1d8".to_string(), Score::Mate(1)), "{options:?}");
            let result = run("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", options, 3);
            assert_eq!((uci_move(&result.best), result.score), ("a1a6".to_string(), Score::Mate(2)), "{options:?}");
        }
    }
}

#[test]
fn hashfull_reports_the_table_in_use() {
    let networks = Networks::random(6);
    let game = Game::default();
    let mut table = CompareTable::new(1);
    assert_eq!(table.hashfull(), 0);
    let mut reported = Vec::new();
    let options = CompareOptions { tt: true, ordering: false, student: false, selective: false };
    let control = Control::unlimited(Some(2));
    search(&networks, &game, options, &mut table, &control, &mut |report| {
        if let Report::Info(info) = report {
            reported.push(info.hashfull);
        }
    });
    let full = table.hashfull();
    assert!(full > 0 && reported.last() == Some(&Some(full)), "{full} {reported:?}");
    table.clear();
    assert_eq!(table.hashfull(), 0);
    let options = CompareOptions { tt: false, ordering: false, student: false, selective: false };
    search(&networks, &game, options, &mut table, &Control::unlimited(Some(1)), &mut |report| {
        assert!(matches!(report, Report::Info(Info { hashfull: None, .. })), "{report:?}");
    });
}

#[test]
fn fifty_move_rule_is_a_draw() {
    let result = run(
        "8/8/8/8/8/4k3/8/R3K3 w - - 99 80",
        CompareOptions { tt: true, ordering: true, student: true, selective: true },
        2,
    );
    assert_eq!(result.score, Score::Cp(0));
}

#[test]
fn score_is_the_value_net_score_of_the_pv_leaf() {
    let networks = Networks::random(6);
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let game = Game::from_uci(Some(fen), &[]).unwrap();
    let mut table = CompareTable::new(8);
    let options = CompareOptions { tt: false, ordering: true, student: false, selective: false };
    let result = search(&networks, &game, options, &mut table, &Control::unlimited(Some(2)), &mut |_| {});
    let mut leaf = game.position().clone();
    for m in &result.pv {
        assert!(leaf.is_legal(*m));
        leaf.play_unchecked(*m);
    }
    let cp = networks.value.evaluate_centipawns(&FeatureBits::from_position(&leaf));
    assert_eq!(result.score, Score::Cp(cp_for(cp, Color::White)));
}

/// The variants the product plays: the student with and without the selective techniques.
const STUDENT_VARIANTS: [CompareOptions; 2] = [
    CompareOptions { tt: true, ordering: false, student: true, selective: true },
    CompareOptions { tt: true, ordering: true, student: true, selective: false },
];

#[test]
fn the_student_search_finds_mates_in_two_and_three() {
    let networks = Networks::embedded().unwrap();
    // (position, the moves that mate soonest, mate in n)
    let cases: [(&str, &[&str], u32); 2] =
        [("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", &["a1a6"], 2), ("5k2/8/8/5K2/8/8/8/R7 w - - 0 1", &["f5f6"], 3)];
    for options in STUDENT_VARIANTS {
        for (fen, best, n) in cases {
            let game = Game::from_uci(Some(fen), &[]).unwrap();
            let mut table = CompareTable::new(8);
            // late move reductions may need two plies more than the mate's length
            let extra = if options.selective { 2 } else { 0 };
            let control = Control::unlimited(Some(2 * n - 1 + extra));
            let result = search(&networks, &game, options, &mut table, &control, &mut |_| {});
            assert!(best.contains(&uci_move(&result.best).as_str()), "{fen} {options:?}: {result:?}");
            assert_eq!(result.score, Score::Mate(n as i32), "{fen} {options:?}");
        }
    }
}

#[test]
fn the_student_search_plays_legal_moves_along_random_games() {
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};
    let networks = Networks::random(4);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let mut table = CompareTable::new(1);
    for _ in 0..3 {
        let mut game = Game::default();
        for _ in 0..24 {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                break;
            }
            let result =
                search(&networks, &game, STUDENT_VARIANTS[0], &mut table, &Control::unlimited(Some(3)), &mut |_| {});
            assert!(game.position().is_legal(result.best), "{result:?}");
            let mut after = game.position().clone();
            for m in &result.pv {
                assert!(after.is_legal(*m), "pv {:?}", result.pv);
                after.play_unchecked(*m);
            }
            game.play(moves[rng.random_range(0..moves.len())]);
        }
    }
}
