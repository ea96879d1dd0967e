//! End-to-end tests of `deepchess analyse`: start position and SAN/UCI moves, MultiPV lines,
//! win/draw/loss chances, the move predictors' favourites and PGN annotation.

mod common;

use std::ops::ControlFlow;
use std::path::Path;

use common::{deepchess, texts};
use pgn_reader::{RawComment, Reader, SanPlus, Visitor};
use shakmaty::san::San;
use shakmaty::{Chess, Position};

/// Runs `analyse` with `args`, expecting success; its standard output.
fn analyse(args: &[&str]) -> String {
    let out = deepchess(&[&["analyse"], args].concat());
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "analyse {args:?} failed:\n{stdout}\n{stderr}");
    stdout
}

/// The text after `prefix` on the output's line starting with it.
fn field<'a>(output: &'a str, prefix: &str) -> &'a str {
    output.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("no `{prefix}` in\n{output}")).trim()
}

/// The position after 1. e4 e5 2. Nf3.
fn after_nf3() -> Chess {
    let mut position = Chess::default();
    for san in ["e4", "e5", "Nf3"] {
        let m = san.parse::<San>().unwrap().to_move(&position).unwrap();
        position.play_unchecked(m);
    }
    position
}

#[test]
fn startpos_with_san_moves_is_the_same_as_with_uci_moves() {
    let san = analyse(&["--fen", "startpos", "--moves", "e4", "e5", "Nf3", "--depth", "2"]);
    let uci = analyse(&["--fen", "startpos", "--moves", "e2e4", "e7e5", "g1f3", "--depth", "2"]);
    assert_eq!(san, uci);
    // The same position from its FEN: the best move is Black's.
    let fen = analyse(&["--fen", "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", "--depth", "2"]);
    assert_eq!(field(&san, "best move:"), field(&fen, "best move:"));
    assert!(field(&san, "pv:").starts_with("2... "), "{san}");
}

#[test]
fn multipv_prints_distinct_legal_lines_best_first() {
    let out = analyse(&["--moves", "e4", "e5", "Nf3", "--depth", "2", "--multipv", "3"]);
    let position = after_nf3();
    let firsts: Vec<&str> =
        (1..=3).map(|i| field(&out, &format!("line {i}:")).split_whitespace().next().unwrap()).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{out}");
    for first in &firsts {
        assert!(first.parse::<San>().unwrap().to_move(&position).is_ok(), "{first} in\n{out}");
    }
    assert!(!out.contains("line 4:"), "{out}");
    assert_eq!(firsts[0], field(&out, "best move:"), "{out}");
}

#[test]
fn win_draw_loss_percentages_sum_to_100() {
    let out = analyse(&["--moves", "e4", "--depth", "2"]);
    let wdl = field(&out, "wdl:");
    let numbers: Vec<f64> =
        wdl.split_whitespace().filter_map(|w| w.strip_suffix('%')).map(|n| n.parse().unwrap()).collect();
    assert_eq!(numbers.len(), 3, "{wdl}");
    assert!((numbers.iter().sum::<f64>() - 100.0).abs() < 1e-9, "{wdl}");
    assert!(numbers.iter().all(|n| (0.0..=100.0).contains(n)), "{wdl}");
}

#[test]
fn policy_lists_five_legal_moves_with_probabilities() {
    let out = analyse(&["--moves", "e4", "e5", "Nf3", "--depth", "1"]);
    let position = after_nf3();
    let entries: Vec<&str> = field(&out, "policy:").split(", ").collect();
    assert_eq!(entries.len(), 5, "{out}");
    let mut total = 0.0;
    let mut previous = f64::INFINITY;
    let mut moves = Vec::new();
    for entry in entries {
        let (san, p) = entry.split_once(' ').unwrap();
        let p: f64 = p.strip_suffix('%').unwrap().parse().unwrap();
        assert!(san.parse::<San>().unwrap().to_move(&position).is_ok(), "{entry}");
        assert!((0.0..=previous).contains(&p), "sorted, best first: {out}");
        previous = p;
        total += p;
        moves.push(san);
    }
    assert!(total <= 100.0 + 0.3, "{out}");
    moves.dedup();
    assert_eq!(moves.len(), 5, "{out}");
}

#[test]
fn bad_moves_are_named_with_their_index() {
    let out = deepchess(&["analyse", "--fen", "startpos", "--moves", "e4", "Qxf7", "--depth", "1"]);
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("move 2 `Qxf7`"), "{stderr}");
    let out = deepchess(&["analyse", "--moves", "e4", "e5", "Zz9", "--depth", "1"]);
    assert!(!out.status.success() && texts(&out).1.contains("move 3 `Zz9`"), "{:?}", texts(&out));
}

/// The main line's moves and its comments, read back with pgn-reader.
#[derive(Default)]
struct Read {
    moves: usize,
    evals: usize,
    comments: usize,
}

struct Reread;

impl Visitor for Reread {
    type Tags = ();
    type Movetext = Read;
    type Output = Read;

    fn begin_tags(&mut self) -> ControlFlow<Read> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: ()) -> ControlFlow<Read, Read> {
        ControlFlow::Continue(Read::default())
    }

    fn san(&mut self, read: &mut Read, _san: SanPlus) -> ControlFlow<Read> {
        read.moves += 1;
        ControlFlow::Continue(())
    }

    fn comment(&mut self, read: &mut Read, comment: RawComment<'_>) -> ControlFlow<Read> {
        read.comments += 1;
        read.evals += usize::from(String::from_utf8_lossy(comment.as_bytes()).contains("[%eval "));
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, read: Read) -> Read {
        read
    }
}

fn reread(path: &Path) -> Vec<Read> {
    let mut reader = Reader::new(std::fs::File::open(path).unwrap());
    let mut games = Vec::new();
    while let Some(read) = reader.read_game(&mut Reread).unwrap() {
        games.push(read);
    }
    games
}

#[test]
fn pgn_games_are_annotated_with_evals_and_reparse() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    std::fs::write(
        &pgn,
        "[Event \"mate\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 {a comment} Nf6 (3... g6) 4. Qxf7# 1-0\n\n\
         [Event \"ending\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 Kd7 2. Kd2 *\n",
    )
    .unwrap();
    let pgn_arg = pgn.to_str().unwrap();
    for (game, plies, result) in [("1", 7, "1-0"), ("2", 3, "*")] {
        let out = dir.path().join(format!("out{game}.pgn"));
        let out_arg = out.to_str().unwrap();
        let stdout = analyse(&["--pgn", pgn_arg, "--game", game, "--depth", "2", "--out", out_arg]);
        assert!(stdout.is_empty(), "{stdout}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.trim_end().ends_with(result), "{text}");
        let games = reread(&out);
        assert_eq!(games.len(), 1, "{text}");
        assert_eq!(games[0].moves, plies, "the main line, unchanged: {text}");
        // One `[%eval]` after every move of the main line (the reader skips variations),
        // and one in each variation (the engine's choice where it differs).
        assert_eq!((games[0].evals, games[0].comments), (plies, plies), "{text}");
        assert_eq!(text.matches("[%eval ").count(), plies + text.matches('(').count(), "{text}");
        // Standard output gives the same text; --out refuses to overwrite without --force.
        assert_eq!(analyse(&["--pgn", pgn_arg, "--game", game, "--depth", "2"]), text);
        let again = deepchess(&["analyse", "--pgn", pgn_arg, "--game", game, "--depth", "1", "--out", out_arg]);
        assert!(!again.status.success() && texts(&again).1.contains("exists"), "{:?}", texts(&again));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
        analyse(&["--pgn", pgn_arg, "--game", game, "--depth", "1", "--out", out_arg, "--force"]);
    }
    let text = std::fs::read_to_string(dir.path().join("out1.pgn")).unwrap();
    assert!(text.contains("4. Qxf7# { [%eval #0] }") && text.contains("[Event \"mate\"]"), "{text}");
    assert!(!text.contains("a comment"), "{text}");
    let text = std::fs::read_to_string(dir.path().join("out2.pgn")).unwrap();
    assert!(text.contains("[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]"), "{text}");
}

#[test]
fn pgn_errors_name_the_file_and_game() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("bad.pgn");
    std::fs::write(&pgn, "1. e4 e5 *\n\n1. e4 e5 2. Ke3 *\n").unwrap();
    let pgn_arg = pgn.to_str().unwrap();
    let run = |game: &str| texts(&deepchess(&["analyse", "--pgn", pgn_arg, "--game", game, "--depth", "1"])).1;
    let stderr = run("2");
    assert!(stderr.contains("bad.pgn: game 2") && stderr.contains("Ke3"), "{stderr}");
    let stderr = run("3");
    assert!(stderr.contains("bad.pgn: no game 3: the file has 2"), "{stderr}");
    let missing = dir.path().join("missing.pgn");
    let out = deepchess(&["analyse", "--pgn", missing.to_str().unwrap()]);
    assert!(!out.status.success() && texts(&out).1.contains("missing.pgn"), "{:?}", texts(&out));
}

/// Two short games as PGN text.
const TWO_GAMES: &str = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
                         [Event \"b\"]\n[Result \"*\"]\n\n1. d4 d5 2. c4 *\n";

#[test]
fn an_out_that_is_the_input_is_refused_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("three.pgn");
    let annotated = "[Event \"a\"]\n\n1. e4 { [%eval 0.30] } e5 { [%eval 0.25] } *\n";
    std::fs::write(&pgn, annotated).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let link = dir.path().join("link.pgn");
    std::os::unix::fs::symlink(&pgn, &link).unwrap();
    let pgn_arg = pgn.to_str().unwrap();
    let other_spelling = dir.path().join("sub/../three.pgn");
    for out in [pgn.clone(), other_spelling, link] {
        let out_arg = out.to_str().unwrap();
        let run = deepchess(&["analyse", "--pgn", pgn_arg, "--depth", "1", "--out", out_arg, "--force"]);
        let stderr = texts(&run).1;
        assert!(!run.status.success(), "--out {out_arg}: {stderr}");
        assert!(stderr.contains(out_arg) && stderr.contains(pgn_arg) && stderr.contains("is the input"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&pgn).unwrap(), annotated, "the input is untouched");
    }
}

#[test]
fn compressed_pgn_is_read_as_prepare_reads_it() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("games.pgn");
    std::fs::write(&plain, TWO_GAMES).unwrap();
    let zst = dir.path().join("games.pgn.zst");
    std::fs::write(&zst, zstd::encode_all(TWO_GAMES.as_bytes(), 3).unwrap()).unwrap();
    let gz = dir.path().join("games.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(TWO_GAMES.as_bytes()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let bz2 = dir.path().join("games.pgn.bz2");
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    encoder.write_all(TWO_GAMES.as_bytes()).unwrap();
    std::fs::write(&bz2, encoder.finish().unwrap()).unwrap();
    let expected = analyse(&["--pgn", plain.to_str().unwrap(), "--game", "2", "--depth", "1"]);
    assert!(expected.contains("1. d4 ") && expected.contains("2. c4 "), "{expected}");
    for path in [&zst, &gz, &bz2] {
        assert_eq!(analyse(&["--pgn", path.to_str().unwrap(), "--game", "2", "--depth", "1"]), expected, "{path:?}");
        let beyond = deepchess(&["analyse", "--pgn", path.to_str().unwrap(), "--game", "5", "--depth", "1"]);
        let stderr = texts(&beyond).1;
        assert!(!beyond.status.success() && stderr.contains("no game 5: the file has 2"), "{path:?}: {stderr}");
    }
}

#[test]
fn garbage_and_truncated_pgn_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Binary data: every byte value, NUL and control bytes included.
    let noise: Vec<u8> = (0..4000u32).map(|i| (i * 37 % 256) as u8).collect();
    let garbage = dir.path().join("garbage.pgn");
    std::fs::write(&garbage, &noise).unwrap();
    let words = dir.path().join("words.pgn");
    std::fs::write(&words, "this is not a chess game at all\n").unwrap();
    // A zstd stream cut in half: the games before the cut are read, then the error.
    let many = TWO_GAMES.repeat(40);
    let compressed = zstd::encode_all(many.as_bytes(), 3).unwrap();
    let truncated = dir.path().join("cut.pgn.zst");
    std::fs::write(&truncated, &compressed[..compressed.len() / 2]).unwrap();
    for (path, game, expected) in [
        (&garbage, "1", "not PGN text"),
        (&words, "1", "game 1: neither tags nor moves"),
        (&truncated, "80", "reading game"),
    ] {
        let run = deepchess(&["analyse", "--pgn", path.to_str().unwrap(), "--game", game, "--depth", "1"]);
        let (stdout, stderr) = texts(&run);
        assert!(!run.status.success() && stdout.is_empty(), "{path:?}: {stdout}");
        assert!(stderr.contains(path.to_str().unwrap()) && stderr.contains(expected), "{path:?}: {stderr}");
        assert!(!stderr.contains("the file has"), "{stderr}");
    }
}
