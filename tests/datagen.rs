//! `deepchess datagen` and `deepchess export` end to end: consistent records, a SIGKILL and
//! a resume, the options guard, `--force`, the text round trip, and bad options; OpenBench's
//! `genfens` request as its worker sends it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{deepchess, texts};
use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Dataset, Record, Split};
use shakmaty::{Color, Position};

/// Small, fast games: few nodes, short games.
const FAST: [&str; 8] = ["--nodes", "200", "--opening-nodes", "100", "--max-plies", "40", "--seed", "7"];

fn datagen(dir: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["datagen", "--out", dir.to_str().unwrap()];
    args.extend(FAST);
    args.extend(extra);
    let out = deepchess(&args);
    let (stdout, stderr) = texts(&out);
    (out.status.success(), stdout, stderr)
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Both splits' records, train first.
fn records(dir: &Path) -> Vec<Record> {
    Split::ALL
        .iter()
        .flat_map(|&split| {
            Dataset::open(&dir.join(file_name(Content::Moves, split))).unwrap().iter().collect::<Vec<_>>()
        })
        .collect()
}

/// Records grouped by game, checking that each game's records are contiguous and appear once.
fn games(records: &[Record]) -> BTreeMap<u32, Vec<Record>> {
    let mut games: BTreeMap<u32, Vec<Record>> = BTreeMap::new();
    let mut previous = None;
    for r in records {
        if previous != Some(r.game()) {
            assert!(!games.contains_key(&r.game()), "game {} appears twice", r.game());
        }
        games.entry(r.game()).or_default().push(*r);
        previous = Some(r.game());
    }
    games
}

/// Counts in the summary match the datasets.
fn check_counts(dir: &Path) -> BTreeMap<u32, Vec<Record>> {
    let s = summary(dir);
    let records = records(dir);
    let games = games(&records);
    assert_eq!(s["positions"], records.len() as u64);
    assert_eq!(s["games"], games.len() as u64);
    let results: Vec<i8> = games.values().map(|g| g[0].result()).collect();
    let count = |r| results.iter().filter(|&&x| x == r).count() as u64;
    assert_eq!(
        (s["white_wins"].as_u64(), s["draws"].as_u64(), s["black_wins"].as_u64()),
        (Some(count(1)), Some(count(0)), Some(count(-1)))
    );
    games
}

/// `[Round]` (game number + 1) → `[Termination]` of every game in `games.pgn`.
fn terminations(dir: &Path) -> BTreeMap<u32, String> {
    let text = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    let tag = |game: &str, name: &str| {
        let start = game.find(&format!("[{name} \"")).unwrap() + name.len() + 3;
        game[start..].split('"').next().unwrap().to_string()
    };
    text.split("[Event ")
        .skip(1)
        .map(|g| (tag(g, "Round").parse::<u32>().unwrap() - 1, tag(g, "Termination")))
        .collect()
}

#[test]
fn games_give_valid_consistent_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let (ok, stdout, stderr) =
        datagen(&out, &["--games", "6", "--threads", "2", "--pgn", "--validation-fraction", "0.3"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("positions/hour/thread="), "{stdout}");
    let games = check_counts(&out);
    assert_eq!(games.len(), 6);
    let terminations = terminations(&out);
    for (number, records) in &games {
        let result = records[0].result();
        for pair in records.windows(2) {
            assert_eq!(pair[1].ply(), pair[0].ply() + 1, "game {number}: plies increment");
            let mut position = pair[0].position().unwrap();
            position.play_unchecked(pair[0].played().unwrap().unwrap().to_move(&position).unwrap());
            assert_eq!(position.board(), pair[1].position().unwrap().board(), "game {number}: moves link the records");
        }
        for r in records {
            assert_eq!((r.game(), r.result()), (*number, result));
            let eval = r.eval().expect("every record has the search's score");
            assert!(eval.abs() <= 20_000 || eval.abs() > 29_000, "{eval}");
        }
        let last = records.last().unwrap();
        let mut end = last.position().unwrap();
        end.play_unchecked(last.played().unwrap().unwrap().to_move(&end).unwrap());
        if end.is_checkmate() {
            let winner = if end.turn() == Color::White { -1 } else { 1 };
            assert_eq!(result, winner, "game {number}: checkmate decides the result");
        } else if result != 0 {
            assert_eq!(terminations[number], "adjudication", "game {number}: decisive without mate");
            // The adjudicated winner is the side the last score favoured.
            assert_eq!(i8::try_from(last.eval().unwrap().signum()).unwrap(), result, "game {number}");
        }
    }
    let s = summary(&out);
    assert_eq!(
        s["train_positions"].as_u64().unwrap() + s["validation_positions"].as_u64().unwrap(),
        s["positions"].as_u64().unwrap()
    );
}

#[test]
fn a_killed_run_resumes_without_repeating_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let mut args =
        vec!["datagen".to_string(), "--out".into(), out.to_str().unwrap().into(), "--games".into(), "1000".into()];
    args.extend(FAST.iter().map(|s| s.to_string()));
    args.extend(["--threads".into(), "2".into()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_deepchess"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !out.join("summary.json").exists() || summary(&out)["games"].as_u64().unwrap() < 2 {
        assert!(started.elapsed() < Duration::from_secs(300), "no games written");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = summary(&out)["games"].as_u64().unwrap();
    let target = (written + 2).to_string();
    let (ok, stdout, stderr) = datagen(&out, &["--games", &target, "--threads", "2"]);
    assert!(ok, "{stdout}{stderr}");
    let games = check_counts(&out);
    assert!(games.len() as u64 >= written + 2, "{} games after resuming from {written}", games.len());
    // Done already: a rerun plays nothing.
    let (ok, _, stderr) = datagen(&out, &["--games", &target]);
    assert!(ok, "{stderr}");
    assert_eq!(check_counts(&out).len(), games.len());
}

#[test]
fn resuming_plays_the_games_a_single_run_would() {
    let dir = tempfile::tempdir().unwrap();
    let (once, twice) = (dir.path().join("once"), dir.path().join("twice"));
    assert!(datagen(&once, &["--games", "3"]).0);
    assert!(datagen(&twice, &["--games", "1"]).0);
    assert!(datagen(&twice, &["--games", "3"]).0);
    assert_eq!(records(&once), records(&twice));
    assert_eq!(games(&records(&twice)).keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn other_options_need_force_and_force_deletes_only_datagen_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    assert!(datagen(&out, &["--games", "1"]).0);
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let (ok, _, stderr) = datagen(&out, &["--games", "2", "--random-plies", "6"]);
    assert!(!ok && stderr.contains("random-plies") && stderr.contains("--force"), "{stderr}");
    assert_eq!(summary(&out)["games"], 1);
    let (ok, _, stderr) = datagen(&out, &["--games", "1", "--random-plies", "6", "--force"]);
    assert!(ok, "{stderr}");
    assert_eq!(summary(&out)["options"]["random_plies"], 6);
    assert_eq!(summary(&out)["games"], 1);
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
    // A directory of datasets from elsewhere is never touched, --force or not.
    let other = dir.path().join("prepared");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(out.join("moves-train.bin"), other.join("moves-train.bin")).unwrap();
    let (ok, _, stderr) = datagen(&other, &["--games", "1", "--force"]);
    assert!(!ok && stderr.contains("not touching"), "{stderr}");
}

#[test]
fn export_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    assert!(datagen(&out, &["--games", "2", "--validation-fraction", "0.5"]).0);
    let text = dir.path().join("d.txt");
    let result = deepchess(&["export", "--data", out.to_str().unwrap(), "--out", text.to_str().unwrap()]);
    assert!(result.status.success(), "{:?}", texts(&result));
    let lines: Vec<String> = std::fs::read_to_string(&text).unwrap().lines().map(String::from).collect();
    let records = records(&out);
    assert_eq!(lines.len(), records.len());
    for (line, record) in lines.iter().zip(&records) {
        let back = deepchess_datagen::export::from_line(line).unwrap();
        assert_eq!(back.position().unwrap(), record.position().unwrap(), "{line}");
        assert_eq!((back.eval(), back.result()), (record.eval(), record.result()), "{line}");
    }
    let again = deepchess(&["export", "--data", out.to_str().unwrap(), "--out", text.to_str().unwrap()]);
    assert!(texts(&again).1.contains("--force"));
    let split = deepchess(&[
        "export",
        "--data",
        out.to_str().unwrap(),
        "--out",
        text.to_str().unwrap(),
        "--split",
        "validation",
        "--force",
    ]);
    assert!(split.status.success());
}

#[test]
fn bad_options_name_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (extra, option) in [
        (vec!["--threads", "0"], "--threads"),
        (vec!["--opening-bound", "-5"], "--opening-bound"),
        (vec!["--draw-score", "-1"], "--draw-score"),
        (vec!["--book", "/nonexistent/book.epd"], "--book"),
        (vec!["--models", empty.to_str().unwrap()], "--models"),
        (vec!["--hard-nodes", "100"], "--hard-nodes"),
    ] {
        let mut args = vec!["--games", "1"];
        args.extend(&extra);
        let (ok, _, stderr) = datagen(&out, &args);
        assert!(!ok && stderr.contains(option), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!out.join("summary.json").exists(), "nothing written for bad options");
}

/// Game count of a `games.pgn` (its `[Event` lines).
fn pgn_games(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("games.pgn")).unwrap().matches("[Event ").count()
}

#[test]
fn an_input_or_a_foreign_pgn_is_never_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/sample.pgn")).unwrap();
    let out = dir.path().join("d");
    std::fs::create_dir(&out).unwrap();
    let games = out.join("games.pgn");
    std::fs::write(&games, &sample).unwrap();
    for force in [&[][..], &["--force"]] {
        let mut args = vec!["--games", "1", "--pgn", "--book", games.to_str().unwrap()];
        args.extend(force);
        let (ok, _, stderr) = datagen(&out, &args);
        assert!(!ok && stderr.contains("--book") && stderr.contains("a file datagen writes"), "{force:?}: {stderr}");
        let (ok, _, stderr) =
            datagen(&out, &["--games", "1", "--pgn"].iter().chain(force).copied().collect::<Vec<_>>());
        assert!(!ok && stderr.contains("without a datagen summary.json"), "{force:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&games).unwrap(), sample, "the input is untouched");
    assert!(!out.join("summary.json").exists());
}

#[test]
fn a_resume_cuts_a_partial_pgn_tail_and_refuses_what_does_not_match() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    assert!(datagen(&out, &["--games", "2", "--pgn"]).0);
    let pgn = out.join("games.pgn");
    let mut text = std::fs::read_to_string(&pgn).unwrap();
    text.push_str("[Event \"deepchess datagen\"]\n[Round \"3\"]\n\n5. e4 {[%eval 0.1");
    std::fs::write(&pgn, &text).unwrap();
    let (ok, _, stderr) = datagen(&out, &["--games", "3", "--pgn"]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(pgn_games(&out), 3);
    assert!(!text.contains("0.1[Event") && !text.contains("0.1\n[Event"), "the partial game was cut");
    assert_eq!(check_counts(&out).len(), 3);
    // without --pgn the PGN would fall behind
    let (ok, _, stderr) = datagen(&out, &["--games", "4"]);
    assert!(!ok && stderr.contains("resume with --pgn"), "{stderr}");
    // a PGN with fewer games than the datasets
    let first_two = text.match_indices("[Event ").nth(2).unwrap().0;
    std::fs::write(&pgn, &text[..first_two]).unwrap();
    let (ok, _, stderr) = datagen(&out, &["--games", "4", "--pgn"]);
    assert!(!ok && stderr.contains("holds 2 complete games") && stderr.contains("hold 3"), "{stderr}");
    std::fs::write(&pgn, &text).unwrap();
    // a dataset missing
    std::fs::remove_file(out.join("moves-train.bin")).unwrap();
    let (ok, _, stderr) = datagen(&out, &["--games", "4", "--pgn"]);
    assert!(!ok && stderr.contains("moves-train.bin is missing") && stderr.contains("3 games"), "{stderr}");
    assert_eq!(pgn_games(&out), 3, "nothing appended");
}

#[test]
fn runs_with_the_same_seed_write_the_same_games_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<Vec<Record>> = [("a", "1"), ("b", "1"), ("c", "2")]
        .iter()
        .map(|(name, threads)| {
            let out = dir.path().join(name);
            let (ok, _, stderr) = datagen(&out, &["--positions", "300", "--threads", threads, "--pgn"]);
            assert!(ok, "{stderr}");
            check_counts(&out);
            records(&out)
        })
        .collect();
    assert_eq!(runs[0], runs[1], "two fresh runs");
    assert_eq!(runs[0], runs[2], "one thread and two");
    let games = games(&runs[0]);
    let positions_before_last = runs[0].len() - games.values().last().unwrap().len();
    assert!(positions_before_last < 300 && runs[0].len() >= 300, "the games the target needs, no more");
    assert_eq!(games.keys().copied().collect::<Vec<_>>(), (0..games.len() as u32).collect::<Vec<_>>());
    let pgn = |name: &str| std::fs::read_to_string(dir.path().join(name).join("games.pgn")).unwrap();
    assert_eq!(pgn("a"), pgn("c"));
}

#[test]
fn compressed_pgn_reads_back_as_the_datasets_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let (ok, _, stderr) = datagen(&out, &["--games", "4", "--threads", "2", "--pgn", "--validation-fraction", "0.5"]);
    assert!(ok, "{stderr}");
    let compressed = dir.path().join("games.pgn.zst");
    let text = std::fs::read(out.join("games.pgn")).unwrap();
    std::fs::write(&compressed, zstd::encode_all(&text[..], 19).unwrap()).unwrap();
    let mut reader = deepchess_train::mix::GameReader::open(&compressed).unwrap();
    let mut read = Vec::new();
    while let Some(game) = reader.next_game().unwrap() {
        read.push(deepchess_train::mix::searched(&game).unwrap());
    }
    let written = games(&records(&out));
    assert_eq!(read.len(), written.len());
    for (back, (number, records)) in read.iter().zip(&written) {
        assert_eq!(back.len(), records.len(), "game {number}");
        for (b, r) in back.iter().zip(records) {
            assert_eq!(b.position().unwrap(), r.position().unwrap(), "game {number}");
            assert_eq!((b.ply(), b.eval(), b.result()), (r.ply(), r.eval(), r.result()), "game {number}");
            assert_eq!(b.played().unwrap(), r.played().unwrap(), "game {number}");
        }
    }
}

#[test]
fn packed_games_read_back_as_their_pgn_and_unpack_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    let (ok, _, stderr) = datagen(&out, &["--games", "4", "--threads", "2", "--pgn"]);
    assert!(ok, "{stderr}");
    let (pgn, packed, back) = (out.join("games.pgn"), dir.path().join("g.dcpg.zst"), dir.path().join("back.pgn"));
    let run = |args: &[&Path]| {
        let args: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
        let result = deepchess(&args);
        let (stdout, stderr) = texts(&result);
        (result.status.success(), stdout + &stderr)
    };
    let (ok, said) = run(&[Path::new("pack"), &pgn, Path::new("--out"), &packed]);
    assert!(ok && said.contains(" 4 games, "), "{said}");
    let read = |path: &Path| {
        let mut reader = deepchess_train::mix::GameReader::open(path).unwrap();
        let mut games = Vec::new();
        while let Some(game) = reader.next_game().unwrap() {
            games.push((game.hash, deepchess_train::mix::searched(&game).unwrap()));
        }
        games
    };
    let from_pgn = read(&pgn);
    assert_eq!(from_pgn.len(), 4);
    assert_eq!(read(&packed), from_pgn, "the same records and hashes (so the same splits)");
    let (ok, said) = run(&[Path::new("unpack"), &packed, Path::new("--out"), &back]);
    assert!(ok, "{said}");
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&pgn).unwrap(), "byte for byte");
    // outputs: never the input, replaced only with --force and only when of their kind
    let (ok, said) = run(&[Path::new("pack"), &packed, Path::new("--out"), &packed, Path::new("--force")]);
    assert!(!ok && said.contains("is the input"), "{said}");
    let (ok, said) = run(&[Path::new("pack"), &pgn, Path::new("--out"), &back]);
    assert!(!ok && said.contains("already exists (use --force"), "{said}");
    let (ok, said) = run(&[Path::new("pack"), &pgn, Path::new("--out"), &back, Path::new("--force")]);
    assert!(!ok && said.contains("is not packed games"), "{said}");
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&pgn).unwrap(), "left as it was");
    let (ok, said) = run(&[Path::new("unpack"), &packed, Path::new("--out"), &back, Path::new("--force")]);
    assert!(ok, "{said}");
    // PGN that datagen did not write is refused, naming the file, the game and its line
    let foreign = dir.path().join("foreign.pgn");
    let text = std::fs::read_to_string(&pgn).unwrap();
    std::fs::write(&foreign, text.replacen("[Black", "[Site \"?\"]\n[Black", 2)).unwrap();
    let (ok, said) = run(&[Path::new("pack"), &foreign, Path::new("--out"), &dir.path().join("f.dcpg.zst")]);
    assert!(!ok && said.contains("foreign.pgn: game 1 (line 4): the file has"), "{said}");
    assert!(!dir.path().join("f.dcpg.zst").exists());
}

#[test]
fn train_value_streams_a_directory_of_compressed_generations() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d");
    // Twelve games, a third of them for validation by their hashes: both splits hold
    // games whatever the embedded nets play.
    assert!(datagen(&out, &["--games", "12", "--threads", "2", "--pgn"]).0);
    let generations = dir.path().join("selfplay");
    std::fs::create_dir(&generations).unwrap();
    let text = std::fs::read(out.join("games.pgn")).unwrap();
    std::fs::write(generations.join("a.pgn.zst"), zstd::encode_all(&text[..], 19).unwrap()).unwrap();
    let packed = generations.join("b.dcpg.zst");
    assert!(
        deepchess(&["pack", out.join("games.pgn").to_str().unwrap(), "--out", packed.to_str().unwrap()])
            .status
            .success()
    );
    let run = dir.path().join("run");
    let train = |data: &Path, extra: &[&str]| {
        let mut args = vec!["train", "value", "--data", data.to_str().unwrap(), "--out", run.to_str().unwrap()];
        args.extend(["--epochs", "1", "--width", "16", "--batch", "32", "--output-buckets", "1", "--force"]);
        args.extend(["--mix-validation-fraction", "0.34", "--shuffle-buffer", "50"]);
        args.extend(extra);
        let result = deepchess(&args);
        (result.status.success(), texts(&result).1)
    };
    let (ok, stderr) = train(&generations, &[]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("a.pgn.zst (weight 1): "), "{stderr}");
    // the packed copy of the same games: the same counts
    let counts =
        |name: &str| stderr.lines().find(|l| l.contains(name)).unwrap().split_once(": ").unwrap().1.to_string();
    assert_eq!(counts("a.pgn.zst (weight 1)"), counts("b.dcpg.zst (weight 1)"), "{stderr}");
    assert!(run.join("value.safetensors").exists());
    // a prepared dataset is not streamed
    let (ok, stderr) = train(&out, &["--mix", generations.join("a.pgn.zst").to_str().unwrap()]);
    assert!(!ok && stderr.contains("--mix streams PGN files"), "{stderr}");
    let (ok, stderr) = train(&generations, &["--mix", "x.pgn:-2"]);
    assert!(!ok && stderr.contains("≥ 0"), "{stderr}");
}

#[test]
fn genfens_answers_openbench_as_its_worker_asks() {
    // The worker's command line: the request in one argument (with its trailing space when
    // the test has no custom arguments), then `quit`; it keeps the lines after the prefix.
    let out = deepchess(&["genfens 3 seed 5 book None ", "quit"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    let fens: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("info string genfens ")).collect();
    assert_eq!(fens.len(), 3, "{stdout}");
    for fen in &fens {
        let position: shakmaty::Chess =
            fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
        assert!(!position.is_game_over(), "{fen}");
    }
    let shell = deepchess(&["genfens", "3", "seed", "5", "book", "None"]);
    assert_eq!(texts(&shell).0, stdout, "the same request from a shell gets the same openings");
    let bad = deepchess(&["genfens 3 seed 5 book None depth 4", "quit"]);
    let (_, stderr) = texts(&bad);
    assert!(!bad.status.success() && stderr.contains("unknown argument `depth`"), "{stderr}");
}

#[test]
fn siblings_are_groups_of_scored_children_of_one_parent() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d");
    let (ok, _, stderr) = datagen(&data, &["--games", "3", "--validation-fraction", "0.34"]);
    assert!(ok, "{stderr}");
    let out = dir.path().join("s");
    let args = |force: bool| {
        let mut a = vec!["siblings", "--data", data.to_str().unwrap(), "--out", out.to_str().unwrap()];
        a.extend(["--every", "3", "--min-ply", "0", "--nodes", "50", "--threads", "2", "--children", "3"]);
        if force {
            a.push("--force");
        }
        a
    };
    let run = deepchess(&args(false));
    assert!(run.status.success(), "{}", texts(&run).1);
    let parents: Vec<Record> = records(&data);
    let children = records(&out);
    let groups = games(&children);
    assert!(groups.len() >= 5, "{} groups", groups.len());
    for (number, group) in &groups {
        assert!((2..=3).contains(&group.len()), "group {number}: {} children", group.len());
        let first = &group[0];
        for child in group {
            assert_eq!((child.ply(), child.result()), (first.ply(), first.result()), "group {number}");
            assert!(child.eval().is_some(), "group {number}: scored");
            assert_eq!(child.turn(), first.turn(), "siblings have the same side to move");
        }
        // Some parent of the input has each child one move away.
        let child = first.position().unwrap();
        assert!(
            parents.iter().any(|p| p.ply() + 1 == first.ply()
                && p.position().unwrap().legal_moves().iter().any(|&m| {
                    let mut after = p.position().unwrap();
                    after.play_unchecked(m);
                    after.board() == child.board()
                })),
            "group {number}: a child of an input position"
        );
    }
    // The output is not overwritten without --force, and never the input.
    let again = deepchess(&args(false));
    assert!(!again.status.success() && texts(&again).1.contains("--force"), "{}", texts(&again).1);
    assert!(deepchess(&args(true)).status.success());
    assert_eq!(records(&out), children, "the same siblings again");
    let into_input = deepchess(&["siblings", "--data", data.to_str().unwrap(), "--out", data.to_str().unwrap()]);
    assert!(!into_input.status.success() && texts(&into_input).1.contains("is the input"), "{}", texts(&into_input).1);
}
