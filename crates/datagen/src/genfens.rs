//! OpenBench's `genfens` workload: the worker runs
//! `./engine "genfens N seed S book <None|PATH> [EXTRA]" "quit"` on each of its threads and
//! reads `N` lines `info string genfens <FEN>` from each, the openings of a datagen test.
//! The openings are datagen's own: random legal plies from the start (or a random book
//! position), kept when a short search scores them within a bound; opening `i` follows from
//! the seed and `i` alone.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use deepchess_engine::nn::Networks;
use shakmaty::EnPassantMode;
use shakmaty::fen::Fen;

use crate::error::DatagenError;
use crate::opening::Openings;
use crate::options::GameOptions;
use crate::player::Player;
use crate::rng::{Rng, splitmix64};

/// One `genfens` request as OpenBench writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct GenfensRequest {
    /// Openings to print.
    pub count: u32,
    /// Seed: the worker gives each of its engine processes its own.
    pub seed: u64,
    /// Book whose positions the random plies start from (`None`: the start position).
    pub book: Option<PathBuf>,
    /// Uniformly random legal plies after the start (extra argument `random_plies N`).
    pub random_plies: u32,
    /// Nodes of the search that scores an opening (extra argument `opening_nodes N`).
    pub opening_nodes: u64,
    /// Openings scored beyond ± this many centipawns are drawn again (extra argument
    /// `opening_bound CP`).
    pub opening_bound: i32,
}

impl GenfensRequest {
    /// Parses `genfens N seed S book <None|PATH>`, then optional `KEY VALUE` pairs
    /// (`random_plies`, `opening_nodes`, `opening_bound`; datagen's defaults otherwise), then
    /// optionally `quit`, the UCI command OpenBench sends after the request. The error
    /// names the word at fault.
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<GenfensRequest, DatagenError> {
        let invalid = |message: String| DatagenError::Invalid(format!("genfens: {message}"));
        let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
        let words = match words.split_last() {
            Some((&"quit", rest)) => rest,
            _ => &words[..],
        };
        let usage = "expected `genfens N seed S book <None|PATH> [KEY VALUE]...`";
        let [genfens, count, seed_word, seed, book_word, book, extra @ ..] = words else {
            return Err(invalid(format!("{usage}, got `{}`", words.join(" "))));
        };
        if *genfens != "genfens" || *seed_word != "seed" || *book_word != "book" {
            return Err(invalid(format!("{usage}, got `{}`", words.join(" "))));
        }
        let number = |name: &str, value: &str| {
            value.parse::<u64>().map_err(|_| invalid(format!("{name} must be a non-negative integer, got `{value}`")))
        };
        let defaults = GameOptions::default();
        let mut request = GenfensRequest {
            count: u32::try_from(number("N", count)?).map_err(|_| invalid(format!("N is too large: {count}")))?,
            seed: number("seed", seed)?,
            book: (!book.eq_ignore_ascii_case("none")).then(|| PathBuf::from(book)),
            random_plies: defaults.random_plies,
            opening_nodes: defaults.opening_nodes,
            opening_bound: defaults.opening_bound,
        };
        if extra.len() % 2 == 1 {
            return Err(invalid(format!("extra arguments come as KEY VALUE pairs, got `{}`", extra.join(" "))));
        }
        for pair in extra.chunks(2) {
            let (key, value) = (pair[0], pair[1]);
            match key {
                "random_plies" => {
                    request.random_plies = u32::try_from(number(key, value)?)
                        .map_err(|_| invalid(format!("{key} is too large: {value}")))?;
                }
                "opening_nodes" => {
                    request.opening_nodes = number(key, value)?;
                    if request.opening_nodes == 0 {
                        return Err(invalid(format!("{key} must be at least 1")));
                    }
                }
                "opening_bound" => {
                    request.opening_bound = i32::try_from(number(key, value)?)
                        .map_err(|_| invalid(format!("{key} is too large: {value}")))?;
                }
                _ => {
                    return Err(invalid(format!(
                        "unknown argument `{key}` (known: random_plies, opening_nodes, opening_bound, and a final quit)"
                    )));
                }
            }
        }
        Ok(request)
    }

    /// The datagen settings that draw the openings.
    fn game_options(&self) -> GameOptions {
        GameOptions {
            random_plies: self.random_plies,
            book: self.book.clone(),
            seed: self.seed,
            opening_nodes: self.opening_nodes,
            opening_bound: self.opening_bound,
            ..GameOptions::default()
        }
    }
}

/// Writes the `count` openings of `request` to `out`, one `info string genfens <FEN>` line
/// each (flushed, so that the worker sees each one at once). The seed is spread first, so
/// that the worker's consecutive seeds give unrelated openings.
pub fn genfens(request: &GenfensRequest, networks: &Networks, out: &mut impl Write) -> Result<(), DatagenError> {
    let options = request.game_options();
    let openings = Openings::load(request.book.as_deref())?;
    let mut player = Player::new(networks, 1, Arc::default());
    for index in 0..request.count {
        let mut rng = Rng::for_game(splitmix64(request.seed), index);
        let game = openings
            .draw(&mut rng, &options, &mut player)?
            .ok_or_else(|| DatagenError::Invalid("genfens: stopped".into()))?;
        let fen = Fen::from_position(game.position(), EnPassantMode::Legal);
        writeln!(out, "info string genfens {fen}")?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use shakmaty::{CastlingMode, Chess, Position};

    use super::*;

    fn parse(line: &str) -> Result<GenfensRequest, DatagenError> {
        GenfensRequest::parse(&line.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn requests_parse_as_openbench_writes_them() {
        let r = parse("genfens 16 seed 7 book None quit").unwrap();
        assert_eq!((r.count, r.seed, r.book.clone()), (16, 7, None));
        assert_eq!((r.random_plies, r.opening_nodes, r.opening_bound), (8, 1000, 300));
        let r = parse("genfens 2 seed 0 book Books/UHO.epd random_plies 4 opening_bound 150").unwrap();
        assert_eq!(r.book, Some(PathBuf::from("Books/UHO.epd")));
        assert_eq!((r.random_plies, r.opening_bound), (4, 150));
        for (line, names) in [
            ("genfens x seed 1 book None", "N must"),
            ("genfens 1 seed -1 book None", "seed must"),
            ("genfens 1 seed 1", "expected"),
            ("genfens 1 sed 1 book None", "expected"),
            ("genfens 1 seed 1 book None depth", "KEY VALUE"),
            ("genfens 1 seed 1 book None depth 3", "unknown argument `depth`"),
            ("genfens 1 seed 1 book None opening_nodes 0", "opening_nodes must"),
        ] {
            let message = parse(line).unwrap_err().to_string();
            assert!(message.starts_with("genfens: ") && message.contains(names), "{line}: {message}");
        }
    }

    #[test]
    fn openings_are_legal_reproducible_and_differ_by_seed() {
        let networks = Networks::embedded().unwrap();
        let run = |line: &str| {
            let mut out = Vec::new();
            genfens(&parse(line).unwrap(), &networks, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let first = run("genfens 4 seed 1 book None opening_nodes 200");
        assert_eq!(first, run("genfens 4 seed 1 book None opening_nodes 200 quit"));
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(lines.len(), 4);
        for line in &lines {
            let fen = line.strip_prefix("info string genfens ").unwrap();
            assert_eq!(fen.split(' ').count(), 6, "{fen}");
            let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            assert!(!position.is_game_over());
            assert_eq!(position.fullmoves().get(), 5, "8 random plies from the start: move 5, {fen}");
        }
        assert_eq!(lines.iter().collect::<HashSet<_>>().len(), 4);
        let other = run("genfens 4 seed 2 book None opening_nodes 200");
        assert!(other.lines().all(|l| !lines.contains(&l)));
    }

    #[test]
    fn a_book_position_starts_every_opening() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book.epd");
        let start = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        std::fs::write(&book, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - hmvc 0; fmvn 1;\n").unwrap();
        let networks = Networks::embedded().unwrap();
        let line = format!("genfens 2 seed 3 book {} random_plies 0 opening_nodes 100", book.display());
        let mut out = Vec::new();
        genfens(&parse(&line).unwrap(), &networks, &mut out).unwrap();
        let expected = format!("info string genfens {start}\n");
        assert_eq!(String::from_utf8(out).unwrap(), expected.repeat(2));
        let missing = format!("genfens 1 seed 3 book {}", dir.path().join("missing.epd").display());
        let message = genfens(&parse(&missing).unwrap(), &networks, &mut Vec::new()).unwrap_err().to_string();
        assert!(message.contains("missing.epd"), "{message}");
    }
}
