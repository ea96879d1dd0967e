//! `deepchess match` end to end with scripted fake engines: games end by the rules and by
//! the move limit, the PGN reads back with pgn-reader and replays legally, counts agree,
//! engines that crash, hang or play an illegal move lose their games while the match goes
//! on, an engine that cannot start stops the match before it begins, SPRT tests stop at
//! their decision, `--nodes` reaches both engines, and a seed fixes the shuffled opening
//! order. Where Stockfish and Glaurung are installed, a short real match too.

mod common;

use std::ops::ControlFlow;

use common::{deepchess, fake_engine, find_engine, texts};
use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

/// One game read back from the PGN output.
#[derive(Debug, Default)]
struct Game {
    tags: Vec<(String, String)>,
    plies: usize,
    evals: usize,
    checkmate: bool,
    error: Option<String>,
}

impl Game {
    fn tag(&self, name: &str) -> &str {
        self.tags.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }
}

/// Replays every game with shakmaty: any illegal move is an error.
struct Replay;

impl Visitor for Replay {
    type Tags = Vec<(String, String)>;
    type Movetext = (Game, Chess);
    type Output = Game;

    fn begin_tags(&mut self) -> ControlFlow<Game, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Game> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Game, Self::Movetext> {
        let game = Game { tags, ..Game::default() };
        let start = match game.tags.iter().find(|(k, _)| k == "FEN") {
            Some((_, fen)) => fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap(),
            None => Chess::default(),
        };
        ControlFlow::Continue((game, start))
    }

    fn san(&mut self, (game, pos): &mut Self::Movetext, san: SanPlus) -> ControlFlow<Game> {
        match san.san.to_move(pos) {
            Ok(m) => {
                pos.play_unchecked(m);
                game.plies += 1;
            }
            Err(e) => game.error = Some(format!("{san}: {e}")),
        }
        ControlFlow::Continue(())
    }

    fn comment(&mut self, (game, _): &mut Self::Movetext, comment: pgn_reader::RawComment<'_>) -> ControlFlow<Game> {
        game.evals += usize::from(comment.as_bytes().starts_with(b"[%eval "));
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, (mut game, pos): Self::Movetext) -> Game {
        game.checkmate = pos.is_checkmate();
        game
    }
}

fn read_pgn(path: &std::path::Path) -> Vec<Game> {
    let mut reader = Reader::new(std::fs::File::open(path).unwrap());
    let mut games = Vec::new();
    while let Some(g) = reader.read_game(&mut Replay).unwrap() {
        assert_eq!(g.error, None, "illegal move in the PGN output");
        games.push(g);
    }
    games
}

const FOOLS_MATE: &str = "f2f3,e7e5,g2g4,d8h4";

#[test]
fn round_robin_ends_by_the_rules_with_valid_pgn_and_consistent_counts() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let engine = fake_engine("script", FOOLS_MATE);
    let specs: Vec<String> =
        ["A", "B", "C"].iter().map(|n| format!("--engine=name={n},cmd=\"{engine}\",hash=2")).collect();
    let mut args: Vec<&str> = vec!["match", "--movetime", "50", "--games", "2", "--concurrency", "2"];
    args.extend(specs.iter().map(String::as_str));
    args.extend(["--pgn-out", pgn.to_str().unwrap()]);
    let out = deepchess(&args);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // Every game is Black's fool's mate: each player wins its two games as Black.
    for name in ["A", "B", "C"] {
        let line = stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).unwrap();
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[2..8], ["4", "2", "0", "2", "2.0", "50.0"], "{line}");
    }
    assert!(stdout.contains("A vs B: W/D/L 1/0/1, score 1/2 (50.0%), Elo difference +0"), "{stdout}");
    assert!(stdout.contains("endings: checkmate 6"), "{stdout}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("game ")).count(), 6, "a progress line per game:\n{stderr}");

    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 6);
    for (i, g) in games.iter().enumerate() {
        assert_eq!(g.tag("Round"), (i + 1).to_string());
        assert_eq!(g.tag("Result"), "0-1");
        assert_eq!(g.tag("Termination"), "normal");
        assert_eq!(g.tag("PlyCount"), "4");
        assert!(g.checkmate && g.plies == 4 && g.evals == 4, "{g:?}");
    }
    let mut pairs: Vec<(String, String)> =
        games.iter().map(|g| (g.tag("White").into(), g.tag("Black").into())).collect();
    pairs.sort();
    let expected = [("A", "B"), ("A", "C"), ("B", "A"), ("B", "C"), ("C", "A"), ("C", "B")];
    assert_eq!(pairs, expected.map(|(w, b)| (w.to_owned(), b.to_owned())), "each pair plays both colours");

    let again = deepchess(&args);
    assert!(!again.status.success() && texts(&again).1.contains("--force"), "no overwrite without --force");
}

#[test]
fn repetition_and_move_limit_draw() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("draws.pgn");
    let openings = dir.path().join("openings.pgn");
    // A PGN opening: 1. Nf3 Nf6, then the engines shuffle the knights back and forth.
    std::fs::write(&openings, "[Event \"o\"]\n\n1. Nf3 Nf6 *\n").unwrap();
    let engine = fake_engine("script", "g1f3,g8f6,f3g1,f6g8,g1f3,g8f6,f3g1,f6g8,g1f3,g8f6");
    let (p, q) = (format!("name=P,cmd=\"{engine}\""), format!("name=Q,cmd=\"{engine}\""));
    let run = |extra: &[&str]| {
        let mut args = vec!["match", "--nodes", "10", "--engine", &p];
        args.extend([
            "--engine",
            &q,
            "--openings",
            openings.to_str().unwrap(),
            "--pgn-out",
            pgn.to_str().unwrap(),
            "--force",
        ]);
        args.extend(extra);
        let out = deepchess(&args);
        assert!(out.status.success(), "{}", texts(&out).1);
        (texts(&out).0, read_pgn(&pgn))
    };
    let (stdout, games) = run(&[]);
    assert!(stdout.contains("endings: threefold repetition 2"), "{stdout}");
    // The start position occurs for the third time after 8 plies (2 from the opening).
    assert!(games.iter().all(|g| g.plies == 8 && g.tag("Result") == "1/2-1/2" && g.evals == 6), "{games:?}");
    let (stdout, games) = run(&["--max-moves", "3"]);
    assert!(stdout.contains("endings: draw by move limit 2"), "{stdout}");
    assert!(games.iter().all(|g| g.plies == 6 && g.tag("Termination") == "adjudication"), "{games:?}");
}

#[test]
fn crashing_hanging_and_illegal_engines_lose_and_the_match_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("failures.pgn");
    let specs: Vec<String> = [
        ("Good", fake_engine("script", FOOLS_MATE)),
        ("Crash", fake_engine("crash", "")),
        ("Hang", fake_engine("hang", "")),
        ("Illegal", fake_engine("illegal", "")),
    ]
    .iter()
    .map(|(n, cmd)| format!("name={n},cmd=\"{cmd}\""))
    .collect();
    let mut args =
        vec!["match", "--movetime", "50", "--margin-ms", "800", "--games", "2", "--pgn-out", pgn.to_str().unwrap()];
    for s in &specs {
        args.extend(["--engine", s.as_str()]);
    }
    let out = deepchess(&args);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Good wins all 6 games; between two failing engines, White fails first and loses.
    let record = |name: &str| {
        let line = stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).unwrap();
        line.split_whitespace().skip(2).take(4).collect::<Vec<_>>().join(" ")
    };
    assert_eq!(record("Good"), "6 6 0 0");
    for name in ["Crash", "Hang", "Illegal"] {
        assert_eq!(record(name), "6 2 0 4", "{name}:\n{stdout}");
    }
    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 12);
    let count = |t: &str| games.iter().filter(|g| g.tag("Termination") == t).count();
    assert_eq!((count("abandoned"), count("time forfeit"), count("rules infraction")), (4, 4, 4), "{games:?}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert!(text.contains("engine Crash crashed") && text.contains("engine Hang did not answer"), "{text}");
    assert!(text.contains("Illegal played the illegal move \"a4a5\""), "{text}");
}

/// The fake engine playing `script`, appending every command it receives to `log`.
fn logging_engine(mode: &str, script: &str, log: &std::path::Path) -> String {
    format!("{} '{}'", fake_engine(mode, script), log.display())
}

#[test]
fn sprt_accepts_h1_and_stops_with_fixed_nodes_for_both() {
    let dir = tempfile::tempdir().unwrap();
    let (pgn, log_a, log_b) = (dir.path().join("sprt.pgn"), dir.path().join("a.log"), dir.path().join("b.log"));
    // A mates with either colour (1. e4 f6 2. d4 g5 3. Qh5# as White, fool's mate as Black):
    // the scripts hold A's and B's moves by ply for both colours.
    let a = format!("name=A,cmd=\"{}\"", logging_engine("script", "e2e4,e7e5,d2d4,d8h4,d1h5", &log_a));
    let b = format!("name=B,cmd=\"{}\"", logging_engine("script", "f2f3,f7f6,g2g4,g7g5", &log_b));
    let out = deepchess(&[
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--nodes",
        "7",
        "--games",
        "200",
        "--sprt",
        "elo0=0,elo1=100,alpha=0.05,beta=0.05",
        "--pgn-out",
        pgn.to_str().unwrap(),
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Ten won pairs reach ln(0.95/0.05) = 2.94 in normalized Elo (nine give 2.68; fishtest's
    // LLR_normalized, see crates/arena/src/sprt.rs); the match stops there, one game at a time.
    assert!(stdout.contains("A vs B: SPRT H0 0 vs H1 100 (normalized Elo), alpha 0.05, beta 0.05"), "{stdout}");
    assert!(stdout.contains("[-2.94, 2.94]: H1 accepted after 10 pairs"), "{stdout}");
    assert!(stdout.contains("pentanomial [LL, LD, DD+WL, WD, WW]: [0, 0, 0, 0, 10] (10 pairs)"), "{stdout}");
    assert!(stdout.contains("W/D/L 20/0/0 (20 games), Elo +"), "{stdout}");
    assert!(stdout.contains("LOS 100.0%"), "{stdout}");
    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 20, "no game after the decision");
    assert!(games.iter().all(|g| g.checkmate), "{games:?}");
    for log in [&log_a, &log_b] {
        let text = std::fs::read_to_string(log).unwrap();
        let go: Vec<&str> = text.lines().filter(|l| l.starts_with("go")).collect();
        assert!(!go.is_empty() && go.iter().all(|l| *l == "go nodes 7"), "{}: {go:?}", log.display());
    }
}

#[test]
fn sprt_accepts_h0_with_games_in_flight_and_an_odd_cap() {
    // Black mates in every game: each pair is a win and a loss, evidence of equal strength.
    let engine = fake_engine("script", FOOLS_MATE);
    let (a, b) = (format!("name=A,cmd=\"{engine}\""), format!("name=B,cmd=\"{engine}\""));
    let out = deepchess(&[
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--movetime",
        "20",
        "--games",
        "41",
        "--concurrency",
        "2",
        "--sprt",
        "elo0=0,elo1=100,model=logistic",
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("--games 41 is odd"), "{stderr}");
    // Nine such pairs take the logistic LLR to -2.95 (fishtest's LLR_logistic).
    assert!(stdout.contains("H0 accepted after 9 pairs"), "{stdout}");
    let games = stderr.lines().filter(|l| l.starts_with("game ")).count();
    assert!(
        (18..=20).contains(&games),
        "the decision stops new games; the other worker's game is finished: {games}\n{stderr}"
    );
    assert!(stdout.contains(&format!("({games} games)")), "{stdout}");
}

#[test]
fn an_engine_that_cannot_start_aborts_the_match() {
    let good = format!("name=Good,cmd=\"{}\"", fake_engine("script", FOOLS_MATE));
    let started = std::time::Instant::now();
    let out = deepchess(&[
        "match",
        "--engine",
        &good,
        "--engine",
        "name=Ghost,cmd=\"/nonexistent/engine --flag\"",
        "--nodes",
        "1",
        "--games",
        "10",
    ]);
    let stderr = texts(&out).1;
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("the match cannot begin: engine Ghost: cannot start `/nonexistent/engine`"), "{stderr}");
    assert!(stderr.contains("(command: /nonexistent/engine --flag)"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("game ")), "no game is played:\n{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "at once");

    let silent = format!("name=Silent,cmd=\"{}\"", fake_engine("silent", ""));
    // Long enough for the good engine (a Python script) to start on a loaded machine.
    let out = deepchess(&["match", "--engine", &good, "--engine", &silent, "--nodes", "1", "--hang-timeout-s", "5"]);
    let stderr = texts(&out).1;
    assert!(!out.status.success() && stderr.contains("engine Silent did not answer to `uci` (handshake)"), "{stderr}");
    assert!(stderr.contains("fake_uci_engine.py silent"), "the command is named:\n{stderr}");
}

#[test]
fn shuffled_openings_follow_the_seed_and_pairs_share_them() {
    let dir = tempfile::tempdir().unwrap();
    let (epd, pgn) = (dir.path().join("o.epd"), dir.path().join("shuffled.pgn"));
    let fens = [
        "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/3P4/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/2P5/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/1P6/4K3 w - - 0 1",
    ];
    std::fs::write(&epd, fens.join("\n")).unwrap();
    // Each side moves its king once, then the move limit draws the game.
    let engine = fake_engine("script", "e1f1,e8f8");
    let (a, b) = (format!("name=A,cmd=\"{engine}\""), format!("name=B,cmd=\"{engine}\""));
    let order = |extra: &[&str]| {
        let mut args =
            vec!["match", "--engine", &a, "--engine", &b, "--nodes", "1", "--max-moves", "1", "--games", "8"];
        args.extend(["--openings", epd.to_str().unwrap()]);
        args.extend(["--pgn-out", pgn.to_str().unwrap(), "--force"]);
        args.extend(extra);
        let out = deepchess(&args);
        assert!(out.status.success(), "{}", texts(&out).1);
        read_pgn(&pgn).iter().map(|g| g.tag("FEN").to_owned()).collect::<Vec<_>>()
    };
    let in_order = order(&[]);
    assert_eq!(in_order, fens.iter().flat_map(|f| [f.to_string(), f.to_string()]).collect::<Vec<_>>());
    let shuffled = order(&["--shuffle-openings", "--seed", "3"]);
    assert_eq!(shuffled, order(&["--shuffle-openings", "--seed", "3"]), "a seed names an order");
    assert_ne!(shuffled, in_order);
    assert!(shuffled.chunks(2).all(|pair| pair[0] == pair[1]), "both games of a pair play one opening: {shuffled:?}");
    let mut sorted = shuffled.clone();
    sorted.sort();
    let mut expected = in_order.clone();
    expected.sort();
    assert_eq!(sorted, expected, "every opening once per pair");
    let out = deepchess(&["match", "--engine", &a, "--engine", &b, "--nodes", "1", "--seed", "3"]);
    assert!(
        !out.status.success() && texts(&out).1.contains("--shuffle-openings"),
        "a seed without shuffling is refused"
    );
}

#[test]
fn bad_openings_are_skipped_with_the_line_they_are_on() {
    let dir = tempfile::tempdir().unwrap();
    let engine = fake_engine("script", "e1f1,e8f8");
    let (a, b) = (format!("name=A,cmd=\"{engine}\""), format!("name=B,cmd=\"{engine}\""));
    let run = |openings: &std::path::Path| {
        let args = ["match", "--engine", &a, "--engine", &b, "--nodes", "1", "--max-moves", "1", "--games", "2"];
        let out = deepchess(&[&args[..], &["--openings", openings.to_str().unwrap()]].concat());
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        stderr
    };
    // Game 2's FEN tag stands on line 8 of the file.
    let pgn = dir.path().join("illegalfen.pgn");
    std::fs::write(
        &pgn,
        "[Event \"a\"]\n[Site \"?\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n[Site \"?\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n",
    )
    .unwrap();
    let stderr = run(&pgn);
    assert!(stderr.contains("illegalfen.pgn: line 8: game 2: FEN"), "{stderr}");
    // A line that is not UTF-8 is skipped like any other bad line, with its number.
    let epd = dir.path().join("latin1.epd");
    std::fs::write(&epd, b"4k3/8/8/8/8/8/4P3/4K3 w - -\n4k3/8/8/8/8/8/3P4/4K3 w - - c0 \"\xe9\";\n").unwrap();
    let stderr = run(&epd);
    assert!(stderr.contains("latin1.epd: line 2: not UTF-8 text") && stderr.contains("(skipped)"), "{stderr}");
}

#[test]
fn bad_sprt_settings_are_refused_by_name() {
    let engine = fake_engine("script", FOOLS_MATE);
    let players: Vec<String> = ["A", "B", "C"].iter().map(|n| format!("name={n},cmd=\"{engine}\"")).collect();
    let run = |sprt: &str, n: usize| {
        let mut args = vec!["match", "--nodes", "1", "--sprt", sprt];
        for p in &players[..n] {
            args.extend(["--engine", p.as_str()]);
        }
        texts(&deepchess(&args)).1
    };
    let stderr = run("elo0=5,elo1=0", 2);
    assert!(stderr.contains("--sprt") && stderr.contains("elo0 (5) must be less than elo1 (0)"), "{stderr}");
    assert!(run("elo0=0,elo1=5,alpha=2", 2).contains("alpha must lie between 0 and 1"));
    assert!(run("elo0=0,elo1=5", 3).contains("--sprt: a test is between two players, got 3"));
    let stderr = run("elo0=0,elo1=10,elo1=20", 2);
    assert!(stderr.contains("--sprt") && stderr.contains("elo1 is given twice"), "{stderr}");
    let stderr = run("elo0=0,elo1=1e308", 2);
    assert!(stderr.contains("--sprt") && stderr.contains("elo1") && stderr.len() < 200, "{stderr}");
    assert!(!stderr.contains("00000000"), "no 300-digit number: {stderr}");
}

#[test]
fn stockfish_against_glaurung() {
    let (Some(sf), Some(gl)) = (find_engine("stockfish"), find_engine("glaurung")) else {
        println!("skipped: needs Debian's stockfish and glaurung packages");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("real.pgn");
    let (a, b) = (format!("name=SF,cmd={},threads=1", sf.display()), format!("name=Glaurung,cmd={}", gl.display()));
    let out = deepchess(&[
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--depth",
        "4",
        "--games",
        "2",
        "--max-moves",
        "60",
        "--pgn-out",
        pgn.to_str().unwrap(),
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 2);
    assert!(
        games.iter().all(|g| g.tag("Termination") == "normal" || g.tag("Termination") == "adjudication"),
        "{stdout}"
    );
    assert!(stdout.contains("SF vs Glaurung: W/D/L"), "{stdout}");
}

/// Whether `deepchess uci` answers the handshake (it comes from the engine issue).
fn own_engine_available() -> bool {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .arg("uci")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"uci\nquit\n");
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == "uciok")
}

#[test]
fn two_of_our_searches_at_fixed_nodes() {
    if !own_engine_available() {
        println!("skipped: `deepchess uci` does not answer the UCI handshake in this build");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("ours.pgn");
    let out = deepchess(&[
        "match",
        "--engine",
        "name=Eval,search=eval",
        "--engine",
        "name=Policy,search=policy",
        "--nodes",
        "200",
        "--games",
        "2",
        "--max-moves",
        "30",
        "--pgn-out",
        pgn.to_str().unwrap(),
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("has no option"), "our engine declares its options:\n{stderr}");
    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 2);
    assert!(games.iter().all(|g| ["normal", "adjudication"].contains(&g.tag("Termination"))), "{stdout}\n{games:?}");
    assert!(stdout.contains("Eval vs Policy: W/D/L"), "{stdout}");
}

#[test]
fn syzygy_tables_adjudicate_a_game_once_it_reaches_them() {
    let out = deepchess(&[
        "match",
        "--movetime",
        "50",
        "--engine=name=A,cmd=true",
        "--engine=name=B,cmd=true",
        "--syzygy-path",
        "/nonexistent/syzygy",
    ]);
    let (_, stderr) = texts(&out);
    assert!(
        !out.status.success() && stderr.contains("--syzygy-path: cannot read the directory `/nonexistent/syzygy`"),
        "{stderr}"
    );
    let Some(tables) = deepchess_engine::tablebase::test_path() else { return };
    let dir = tempfile::tempdir().unwrap();
    // KQvKRP (no table here); after Qxd5+ KQvKP is lost for Black.
    let openings = dir.path().join("openings.epd");
    std::fs::write(&openings, "k7/7p/8/3r4/8/8/8/3Q2K1 w - -\n").unwrap();
    let pgn = dir.path().join("games.pgn");
    let engine = fake_engine("script", "d1d5");
    let (a, b) = (format!("--engine=name=A,cmd=\"{engine}\""), format!("--engine=name=B,cmd=\"{engine}\""));
    let out = deepchess(&[
        "match",
        "--movetime",
        "50",
        &a,
        &b,
        "--openings",
        openings.to_str().unwrap(),
        "--syzygy-path",
        &tables,
        "--pgn-out",
        pgn.to_str().unwrap(),
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("adjudicating with Syzygy: 35 WDL and 35 DTZ tables (up to 4 pieces)"), "{stderr}");
    let games = read_pgn(&pgn);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!((g.tag("Result"), g.tag("Termination"), g.plies), ("1-0", "adjudication", 1), "{g:?}");
    }
    assert!(std::fs::read_to_string(&pgn).unwrap().contains("tablebase: KQvKP win for White"));
}
