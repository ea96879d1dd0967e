//! Reading PGN databases: opening (de)compressed files, cutting the stream into batches
//! of whole games, and parsing games into dataset records.

pub mod batches;
pub mod eval_comment;
pub mod game;
pub mod input;

use game::{GameParser, ParseOptions, ParsedGame, SkipReason};

/// Parses every game of a batch of PGN text. Games the PGN reader cannot read are
/// returned as skipped ([`SkipReason::Unreadable`]); parsing then resumes after them.
pub fn parse_batch(bytes: &[u8], options: ParseOptions) -> Vec<ParsedGame> {
    let mut reader = pgn_reader::Reader::new(bytes);
    let mut parser = GameParser::new(options);
    let mut games = Vec::new();
    // Every error consumes input, so this terminates; the bound is a second guarantee.
    for _ in 0..=bytes.len() {
        match reader.read_game(&mut parser) {
            Ok(Some(game)) => games.push(game),
            Ok(None) => break,
            Err(e) => games.push(ParsedGame {
                records: Vec::new(),
                result: None,
                skip: Some(SkipReason::Unreadable),
                detail: e.to_string(),
                truncated: false,
                elo: [None, None],
                hash: 0,
                description: String::new(),
            }),
        }
    }
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: ParseOptions = ParseOptions { keep_truncated: false, describe: true };

    #[test]
    fn parses_records_evals_and_results() {
        let pgn = b"[White \"A\"]\n[Black \"B\"]\n[Result \"0-1\"]\n\n1. e4 {[%eval 0.3]} e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 0-1\n";
        let games = parse_batch(pgn, OPTIONS);
        assert_eq!(games.len(), 1);
        let g = &games[0];
        assert_eq!((g.skip, g.result, g.records.len()), (None, Some(-1), 8));
        assert_eq!(g.records[1].eval(), Some(30), "eval of e4's comment belongs to the position after e4");
        assert_eq!(g.records[0].eval(), None);
        assert!(g.records.iter().all(|r| r.result() == -1));
        assert!(g.records[6].played().unwrap().unwrap().capture);
        assert_eq!(g.records[7].played().unwrap(), None);
        assert_eq!(g.records[7].ply(), 7);
        assert!(g.description.contains("A - B"));
    }

    #[test]
    fn skip_reasons() {
        let cases: [(&[u8], SkipReason); 6] = [
            (b"[Variant \"Atomic\"]\n[Result \"1-0\"]\n1. e4 1-0\n", SkipReason::Variant),
            (b"[Variant \"Chess960\"]\n[Result \"1-0\"]\n1. e4 1-0\n", SkipReason::Chess960),
            (b"[FEN \"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\"]\n[Result \"1-0\"]\n1. e4 1-0\n", SkipReason::Chess960),
            (b"[FEN \"not a fen\"]\n[Result \"1-0\"]\n1. e4 1-0\n", SkipReason::BadFen),
            (b"[Result \"1-0\"]\n1. e4 e5 2. Ke3 1-0\n", SkipReason::IllegalMove),
            (b"[Result \"*\"]\n1. e4 e5 *\n", SkipReason::NoResult),
        ];
        for (pgn, reason) in cases {
            let games = parse_batch(pgn, OPTIONS);
            assert_eq!(games.len(), 1);
            assert_eq!(games[0].skip, Some(reason), "{}: {}", String::from_utf8_lossy(pgn), games[0].detail);
            assert!(games[0].records.is_empty());
        }
    }

    #[test]
    fn truncated_games_keep_their_legal_prefix_on_request() {
        let pgn = b"[Result \"1-0\"]\n1. e4 e5 2. Ke3 1-0\n";
        let games = parse_batch(pgn, ParseOptions { keep_truncated: true, describe: false });
        let g = &games[0];
        assert_eq!((g.skip, g.truncated, g.records.len()), (None, true, 3));
        assert!(g.detail.contains("Ke3"), "{}", g.detail);
    }

    #[test]
    fn result_from_movetext_and_fen_start() {
        let pgn = b"[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 40\"]\n[SetUp \"1\"]\n\n40... Kd7 41. e4 1/2-1/2\n";
        let g = &parse_batch(pgn, OPTIONS)[0];
        assert_eq!((g.skip, g.result), (None, Some(0)));
        assert_eq!(g.records[0].ply(), 79);
    }

    #[test]
    fn random_bytes_never_panic() {
        use proptest::prelude::*;
        let base = include_bytes!("../../../../tests/data/sample.pgn");
        proptest!(ProptestConfig { cases: 300, ..ProptestConfig::default() }, |(noise in proptest::collection::vec(any::<u8>(), 0..400), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..40))| {
            let _ = parse_batch(&noise, OPTIONS);
            let mut mutated = base.to_vec();
            for (at, byte) in &flips {
                let i = at % mutated.len();
                mutated[i] = *byte;
            }
            let _ = parse_batch(&mutated, OPTIONS);
        });
    }
}
