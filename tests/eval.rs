//! `deepchess eval` end to end: the embedded default models measured on a small PGN, and
//! clear errors for a bad `--models` directory and an unavailable `--device`.

mod common;

use common::{deepchess, texts};

/// Two short games, one won by each colour (comparator pairs need both).
fn sample_pgn() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/decisive.pgn").to_string()
}

/// The `key=value` fields of the last line of standard output.
fn last_line_fields(stdout: &str) -> Vec<(String, f64)> {
    let line = stdout.lines().last().unwrap_or_default();
    line.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("not key=value: {kv:?} in {line:?}"));
            (k.to_string(), v.parse().unwrap_or_else(|_| panic!("not a number: {kv:?}")))
        })
        .collect()
}

#[test]
fn embedded_models_are_the_default() {
    let pgn = sample_pgn();
    for (network, extra, keys) in [
        ("comparator", vec!["--pairs", "50"], vec!["accuracy", "pairs"]),
        ("value", vec!["--pairs", "50"], vec!["pair_accuracy", "pairs"]),
        ("movepred", vec![], vec!["joint_top1", "joint_top3", "joint_top5", "positions"]),
    ] {
        let mut args = vec!["eval", network, "--pgn", &pgn];
        args.extend(extra);
        let out = deepchess(&args);
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "eval {network}: {stderr}");
        let fields = last_line_fields(&stdout);
        assert_eq!(fields.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), keys, "{stdout}");
        let (_, first) = &fields[0];
        assert!((0.0..=1.0).contains(first), "{stdout}");
        assert!(fields.last().unwrap().1 > 0.0, "{stdout}");
    }
}

#[test]
fn a_directory_without_the_model_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = deepchess(&["eval", "comparator", "--pgn", &sample_pgn(), "--models", dir.path().to_str().unwrap()]);
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("--models") && stderr.contains("comparator.json"), "{stderr}");
}

#[test]
fn an_unknown_or_unavailable_device_is_reported() {
    let out = deepchess(&["eval", "value", "--pgn", &sample_pgn(), "--device", "cuda"]);
    let (_, stderr) = texts(&out);
    assert!(!out.status.success() && stderr.contains("cuda"), "{stderr}");
    if !cfg!(feature = "wgpu") {
        let out = deepchess(&["bench", "train", "--batches", "1", "--batch", "8", "--device", "wgpu"]);
        let (_, stderr) = texts(&out);
        assert!(
            !out.status.success() && stderr.contains("--device wgpu") && stderr.contains("--features wgpu"),
            "{stderr}"
        );
    }
}

#[test]
fn models_are_checked_and_an_older_card_gets_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    let weights = std::fs::read(format!("{models}/value.safetensors")).unwrap();
    let mut card: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{models}/value.json")).unwrap()).unwrap();
    assert!(card["weights_sha256"].is_string(), "the committed card records its checksum");
    let eval = || {
        deepchess(&["eval", "value", "--pgn", &sample_pgn(), "--pairs", "20", "--models", dir.path().to_str().unwrap()])
    };
    // one flipped bit near the end of the weights: refused, the file named
    let mut flipped = weights.clone();
    let at = flipped.len() - 5;
    flipped[at] ^= 1;
    std::fs::write(dir.path().join("value.safetensors"), &flipped).unwrap();
    std::fs::write(dir.path().join("value.json"), card.to_string()).unwrap();
    let out = eval();
    let (_, stderr) = texts(&out);
    assert!(!out.status.success() && stderr.contains("value.safetensors: SHA-256"), "{stderr}");
    // a card without the checksum (an older model): loaded, with a note
    card.as_object_mut().unwrap().remove("weights_sha256");
    std::fs::write(dir.path().join("value.safetensors"), &weights).unwrap();
    std::fs::write(dir.path().join("value.json"), card.to_string()).unwrap();
    let out = eval();
    let (_, stderr) = texts(&out);
    assert!(out.status.success() && stderr.contains("records no weights_sha256"), "{stderr}");
}
