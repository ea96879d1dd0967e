//! The repository speaks of the project alone: no file under `docs/` or `crates/`, nor
//! `README.md` or `Cargo.toml`, names a folder of the machine it was written on, a numbered
//! stage of the work, or the sittings the work was done in. Commands in the docs are relative
//! to the repository (`../shared/data/sts.epd`, `target/release/deepchess`, `$DATA/gen8`).
//!
//! What counts as a finding:
//! - an absolute path under the machine's work or temporary folder (the two roots are spelt
//!   out in `MACHINE_ROOTS`);
//! - the word "stop" or "stops" followed by a number (a numbered stage of the work; the UCI
//!   command `stop` is never followed by one);
//! - the word for a sitting of the work (`SITTING`, singular or plural, any case), except in
//!   a file whose name contains `uci` or in a paragraph that names UCI: there it is the UCI
//!   protocol's word for one engine process's conversation with its client.

use std::path::{Path, PathBuf};

/// The absolute folders of a development machine that must not appear.
const MACHINE_ROOTS: [&str; 2] = [concat!("/wo", "rk/"), concat!("/t", "mp/")];

/// The word for a sitting of the work (written in two halves so that this file passes).
const SITTING: &str = concat!("ses", "sion");

/// The scanned parts of the repository, relative to its root.
const SCANNED: [&str; 4] = ["docs", "crates", "README.md", "Cargo.toml"];

/// One offending line.
#[derive(Debug)]
struct Finding {
    file: PathBuf,
    line: usize,
    what: String,
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every text file under `path` (the file itself if it is one), build outputs left out.
fn text_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for entry in entries {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if entry.is_dir() && (name == "target" || name.starts_with('.')) {
            continue;
        }
        text_files(&entry, out);
    }
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Byte offsets where `word` starts as a whole word in `text` (ASCII case-insensitive).
fn word_starts(text: &str, word: &str) -> Vec<usize> {
    let (hay, needle) = (text.as_bytes(), word.as_bytes());
    (0..hay.len().saturating_sub(needle.len() - 1))
        .filter(|&i| hay[i..i + needle.len()].eq_ignore_ascii_case(needle))
        .filter(|&i| i == 0 || !is_word_byte(hay[i - 1]))
        .filter(|&i| hay.get(i + needle.len()).is_none_or(|&b| !is_word_byte(b)))
        .collect()
}

/// Whether a line separates paragraphs: empty once comment markers are taken away.
fn is_blank(line: &str) -> bool {
    line.trim().trim_start_matches(['/', '!', '#', '*', '>']).trim().is_empty()
}

/// "stop" or "stops" as a word, then white space (line breaks included), then a digit.
fn numbered_stages(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    ["stop", "stops"]
        .into_iter()
        .flat_map(|word| word_starts(text, word).into_iter().map(move |at| (at, at + word.len())))
        .filter(|&(_, end)| {
            let gap = bytes[end..].iter().take_while(|b| b.is_ascii_whitespace()).count();
            gap > 0 && bytes.get(end + gap).is_some_and(u8::is_ascii_digit)
        })
        .map(|(at, _)| at)
        .collect()
}

/// The findings of one file's text.
fn findings(file: &Path, text: &str) -> Vec<Finding> {
    let line_of = |at: usize| text[..at].matches('\n').count();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut add = |line: usize, what: String| found.push(Finding { file: file.to_path_buf(), line: line + 1, what });
    // The finding's text: its first `words` words from `at` (a path, or the word and its number).
    let quote = |at: usize, words: usize| -> String {
        let rest = text[at..].lines().next().unwrap_or_default();
        rest.split_whitespace().take(words).collect::<Vec<_>>().join(" ")
    };
    for root in MACHINE_ROOTS {
        for (at, _) in text.match_indices(root) {
            add(line_of(at), format!("machine path `{}`", quote(at, 1)));
        }
    }
    for at in numbered_stages(text) {
        add(line_of(at), format!("numbered stage of the work `{}`", quote(at, 2)));
    }
    let uci_file = file.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.to_ascii_lowercase().contains("uci"));
    if !uci_file {
        let plural = format!("{SITTING}s");
        for at in word_starts(text, SITTING).into_iter().chain(word_starts(text, &plural)) {
            let line = line_of(at);
            let first = (0..=line).rev().find(|&l| is_blank(lines[l])).map_or(0, |l| l + 1);
            let last = (line..lines.len()).find(|&l| is_blank(lines[l])).unwrap_or(lines.len());
            if !lines[first..last].iter().any(|l| !word_starts(l, "uci").is_empty()) {
                add(line, format!("the word \"{SITTING}\" outside a paragraph about UCI"));
            }
        }
    }
    found.sort_by_key(|f| f.line);
    found
}

#[test]
fn docs_code_and_manifests_name_no_machine_folder_stage_or_sitting_of_the_work() {
    let root = repository_root();
    let mut files = Vec::new();
    for part in SCANNED {
        text_files(&root.join(part), &mut files);
    }
    assert!(files.len() > 50, "only {} files found under {}", files.len(), root.display());
    let mut all = Vec::new();
    for file in &files {
        // Binary files (model weights, compressed test data) hold no words.
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let relative = file.strip_prefix(&root).unwrap_or(file);
        all.extend(findings(relative, &text));
    }
    let report: Vec<String> = all.iter().map(|f| format!("{}:{}: {}", f.file.display(), f.line, f.what)).collect();
    assert!(report.is_empty(), "{} findings:\n{}", report.len(), report.join("\n"));
}

#[test]
fn the_rules_catch_what_they_name_and_pass_the_uci_words() {
    let caught = |text: &str| findings(Path::new("notes.md"), text).len();
    assert_eq!(caught(&format!("see {}data/gen8", MACHINE_ROOTS[0])), 1);
    assert_eq!(caught(&format!("--out {}dg", MACHINE_ROOTS[1])), 1);
    assert_eq!(caught(&format!("measured in {} 31 and\n{}s\n32–33", "Stop", "stop")), 2);
    assert_eq!(caught(&format!("This {SITTING} ran on a new machine.")), 1);
    assert_eq!(caught(&format!("Two {SITTING}s later.")), 1);
    assert_eq!(caught(&format!("The UCI {SITTING} goes on after a bad FEN.")), 0);
    assert_eq!(caught(&format!("`deepchess uci` reads commands.\nThe {SITTING} ends at `quit`.")), 0);
    assert_eq!(caught(&format!("UCI options.\n\nThe {SITTING} ended.")), 1);
    assert_eq!(caught(&format!("send `stop`, then `ucinewgame`; non{} 5; stop_3 and stopped 4", "stop")), 0);
    assert_eq!(findings(Path::new("uci_server.rs"), &format!("struct {SITTING} {{}}")).len(), 0);
}
