//! The tables against python-chess's values, root ranking, and the errors of `open`. The
//! tests that need tables read them from `DEEPCHESS_SYZYGY_TEST_PATH` (python-chess's
//! 3- and 4-piece test tables: `.ci/run` fetches them) and skip, saying why, without it.

use std::path::Path;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess};

use super::*;

/// The test tables, or `None` after saying why the test skips.
pub(crate) fn test_tables() -> Option<Tablebases> {
    let path = test_path()?;
    match Tablebases::open(&path) {
        Ok(tables) => Some(tables),
        Err(error) => {
            println!("skipped: {TEST_PATH_VARIABLE}: {error}");
            None
        }
    }
}

pub(crate) fn chess(fen: &str) -> Chess {
    fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
}

fn uci(moves: &[Move]) -> Vec<String> {
    moves.iter().map(|m| UciMove::from_standard(*m).to_string()).collect()
}

#[test]
fn wdl_and_dtz_match_python_chess() {
    let Some(tables) = test_tables() else { return };
    // (FEN, WDL, DTZ) as python-chess's `chess.syzygy` probes them in the same tables.
    let cases = [
        ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", Wdl::Win, 21),
        ("4k3/8/8/8/8/8/8/4K2R b - - 0 1", Wdl::Loss, -28),
        ("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", Wdl::Draw, 0),
        ("4k3/8/8/8/8/8/8/1N2K3 b - - 0 1", Wdl::Draw, 0),
        ("8/8/8/8/8/4k3/4P3/4K3 w - - 0 1", Wdl::Draw, 0),
        ("8/8/8/8/8/2k5/8/KQ4r1 w - - 0 1", Wdl::Win, 1),
        ("8/8/3k4/8/8/3K4/3R4/6r1 w - - 0 1", Wdl::Draw, 0),
        ("8/2k5/8/8/8/8/6P1/4K2N w - - 0 1", Wdl::Win, 1),
        ("8/8/8/8/8/8/2k5/K1q5 w - - 0 1", Wdl::Loss, -2),
        ("8/8/8/8/8/k7/8/KQ6 b - - 0 1", Wdl::Loss, -8),
    ];
    for (fen, wdl, dtz) in cases {
        let position = chess(fen);
        assert_eq!(tables.wdl_after_zeroing(&position), Some(wdl), "{fen}");
        assert_eq!(tables.dtz(&position), Some(dtz), "{fen}");
        assert_eq!(tables.outcome(&position), Some(Outcome::of(wdl, true)), "{fen}");
    }
    assert_eq!(tables.hits(), 3 * cases.len() as u64);
    tables.reset_hits();
    // Castling rights, more pieces than any table, a table that is not there: no answer.
    for fen in [
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        "k7/7p/8/3r4/8/8/8/3Q2K1 w - - 0 1",
    ] {
        assert_eq!(tables.outcome(&chess(fen)), None, "{fen}");
    }
    assert_eq!(tables.hits(), 0);
    assert_eq!(Tablebases::material(&chess("k7/7p/8/3r4/8/8/8/3Q2K1 w - - 0 1")), "KQvKRP");
}

#[test]
fn outcomes_under_and_without_the_fifty_move_rule() {
    assert_eq!(Outcome::of(Wdl::CursedWin, true), Outcome::Draw);
    assert_eq!(Outcome::of(Wdl::CursedWin, false), Outcome::Win);
    assert_eq!(Outcome::of(Wdl::BlessedLoss, true), Outcome::Draw);
    assert_eq!(Outcome::of(Wdl::BlessedLoss, false), Outcome::Loss);
    assert_eq!((Outcome::of(Wdl::Win, true), Outcome::of(Wdl::Loss, true)), (Outcome::Win, Outcome::Loss));
    assert_eq!(winner(Outcome::Loss, Color::White), Some(Color::Black));
    assert_eq!(winner(Outcome::Draw, Color::White), None);
}

#[test]
fn the_root_keeps_the_winning_moves_shortest_first() {
    let Some(tables) = test_tables() else { return };
    // KQvK: 20 of 27 moves win (python-chess); Qh8 mates, Qb8+ hangs the queen, Ka6 stalemates.
    let game = Game::from_uci(Some("k7/8/1K6/8/8/8/7Q/8 w - - 0 1"), &[]).unwrap();
    let ranking = tables.rank_root(&game, 7, true).unwrap();
    assert!(ranking.by_dtz);
    assert_eq!(ranking.score, TB_WIN);
    let moves = uci(&ranking.moves);
    assert_eq!((moves.len(), moves[0].as_str()), (20, "h2h8"), "{moves:?}");
    assert!(!moves.contains(&"h2b8".to_owned()) && !moves.contains(&"b6a6".to_owned()), "{moves:?}");
    // Above the probe limit the root is not ranked.
    assert_eq!(tables.rank_root(&game, 2, true), None);
}

#[test]
fn the_fifty_move_rule_narrows_the_root_to_the_fastest_wins() {
    let Some(tables) = test_tables() else { return };
    // KRvK: every move wins, Ra5 and Ke2 in 27 plies to zeroing, the rest in 29 or 31.
    let fresh = Game::from_uci(Some("8/8/8/4k3/8/8/8/R3K3 w - - 0 1"), &[]).unwrap();
    let ranking = tables.rank_root(&fresh, 7, true).unwrap();
    assert_eq!((ranking.moves.len(), ranking.score), (15, TB_WIN));
    assert!(["a1a5", "e1e2"].contains(&uci(&ranking.moves)[0].as_str()), "{ranking:?}");
    // 95 plies since the last capture: no win is certain; the fastest come nearest.
    let late = Game::from_uci(Some("8/8/8/4k3/8/8/8/R3K3 w - - 95 80"), &[]).unwrap();
    let ranking = tables.rank_root(&late, 7, true).unwrap();
    let mut moves = uci(&ranking.moves);
    moves.sort();
    assert_eq!(moves, ["a1a5", "e1e2"]);
    assert!((1..50).contains(&ranking.score), "a spoilt win scores a few centipawns: {}", ranking.score);
    assert_eq!(tables.rank_root(&late, 7, false).unwrap().score, TB_WIN, "a win without the rule");
}

#[test]
fn without_dtz_tables_the_root_is_ranked_by_wdl() {
    let Some(tables) = test_tables() else { return };
    let game = Game::from_uci(Some("k7/8/1K6/8/8/8/7Q/8 w - - 0 1"), &[]).unwrap();
    let by_dtz = tables.rank_root(&game, 7, true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = test_path().unwrap();
    std::fs::copy(Path::new(&source).join("KQvK.rtbw"), dir.path().join("KQvK.rtbw")).unwrap();
    let wdl_only = Tablebases::open(dir.path().to_str().unwrap()).unwrap();
    assert!(wdl_only.summary().starts_with("Syzygy: 1 WDL and 0 DTZ tables (up to 3 pieces) from "));
    let by_wdl = wdl_only.rank_root(&game, 7, true).unwrap();
    assert!(!by_wdl.by_dtz);
    assert_eq!(by_wdl.score, TB_WIN);
    let (mut dtz_moves, mut wdl_moves) = (uci(&by_dtz.moves), uci(&by_wdl.moves));
    dtz_moves.sort();
    wdl_moves.sort();
    assert_eq!(wdl_moves, dtz_moves, "the same winning moves");
}

#[test]
fn open_names_what_it_cannot_use() {
    let error = Tablebases::open("/nonexistent/syzygy").unwrap_err();
    assert!(error.starts_with("cannot read the directory `/nonexistent/syzygy`: "), "{error}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_owned();
    std::fs::write(dir.path().join("README.txt"), "not a table").unwrap();
    assert_eq!(Tablebases::open(&path).unwrap_err(), format!("no Syzygy tables (.rtbw, .rtbz) in `{path}`"));
    // A table whose size cannot be a table's.
    let table = dir.path().join("KQvK.rtbw");
    std::fs::write(&table, [0u8; 100]).unwrap();
    let error = Tablebases::open(&format!("{path}{PATH_SEPARATOR}")).unwrap_err();
    assert!(error.starts_with(&format!("cannot use the table `{}`: ", table.display())), "{error}");
    // A later directory that fails fails the whole path.
    let error = Tablebases::open(&format!("{path}{PATH_SEPARATOR}/nonexistent")).unwrap_err();
    assert!(error.contains(&format!("`{}`", table.display())), "{error}");
}
