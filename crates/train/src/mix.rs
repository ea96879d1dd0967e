//! Training positions of the evaluation net streamed from files of scored games (PGN with
//! `[%eval]`, or packed games: the committed self-play generations, `data/selfplay/*.dcpg.zst`),
//! mixed with weights, without holding the training positions in memory.
//!
//! * A packed game reads back as the parser reads its PGN text ([`ParsedGame::from_selfplay`]):
//!   the same positions, scores and split, so a recipe trains the same on either form.
//! * Each move's `[%eval]` is the score of the position the move was played from (how
//!   `deepchess datagen --pgn` writes it: the search's score where it chose the move), so a
//!   game's positions, scores and results read back are its datagen records ([`searched`]).
//! * A game goes to validation by [`split_of`] its hash (as `prepare` splits); validation
//!   positions are read once and held in memory, training positions are counted once.
//! * An epoch takes every training position of a source `⌊w⌋` times and, for a fractional
//!   weight, a seeded `w − ⌊w⌋` share of them once more; the sources are interleaved at random
//!   in proportion to what each has left, then pass a shuffle buffer ([`MixStream`]).

use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::Context;
use deepchess_core::dataset::file_name;
use deepchess_core::record::{EVAL_NONE, GameInfo};
use deepchess_core::selfplay_game::SelfPlayGame;
use deepchess_core::{Content, Record, Split};
use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::data::{rng, splitmix64};
use crate::eval_positions::{EvalPositions, FilterCounts, Kept, PositionFilters, keep};
use crate::pgn::batches::GameBatches;
use crate::pgn::game::{ParseOptions, ParsedGame};
use crate::pgn::{input, parse_batch};
use crate::prepare::split_of;

/// Bytes of PGN text parsed at a time.
const BATCH_BYTES: usize = 1 << 20;

/// A file of games of the mix (PGN or packed) and its weight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The file (PGN in any compression `prepare` reads, or packed games).
    pub path: PathBuf,
    /// How many times an epoch takes each of its training positions (0 drops the file; a
    /// fraction takes that share of them).
    pub weight: f64,
}

impl FromStr for Source {
    type Err = String;

    /// `FILE` (weight 1) or `FILE:WEIGHT`.
    fn from_str(text: &str) -> Result<Source, String> {
        let (path, weight) = match text.rsplit_once(':') {
            Some((path, weight)) if !path.is_empty() => {
                let weight: f64 =
                    weight.parse().map_err(|_| format!("`{text}`: the weight after ':' is not a number"))?;
                (path, weight)
            }
            _ => (text, 1.0),
        };
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(format!("`{text}`: the weight must be a finite number ≥ 0"));
        }
        Ok(Source { path: PathBuf::from(path), weight })
    }
}

/// Whether a file name is one `--data DIR` streams: PGN (`*.pgn*`) or packed games.
fn is_games_file(name: &str) -> bool {
    name.contains(".pgn") || name.ends_with(crate::packed::EXTENSION)
}

/// The PGN files `--data` and `--mix` name for streaming, with their weights; none when
/// `--data` is a prepared dataset directory and there is no `--mix`.
pub fn sources(data: &Path, mix: &[Source]) -> anyhow::Result<Vec<Source>> {
    let prepared = data.is_dir() && data.join(file_name(Content::Moves, Split::Train)).exists();
    let mut sources = match (prepared, data.is_dir()) {
        (true, _) if mix.is_empty() => return Ok(Vec::new()),
        (true, _) => anyhow::bail!(
            "--mix streams PGN files and --data {} is a prepared dataset: give --data a PGN file or a directory of them (prepared directories join with --extra-data)",
            data.display()
        ),
        (false, true) => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(data)
                .with_context(|| format!("--data {}", data.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(is_games_file))
                .collect();
            files.sort();
            anyhow::ensure!(
                !files.is_empty(),
                "--data {}: neither a prepared dataset (moves-train.bin) nor PGN files (*.pgn*) nor packed games (*{})",
                data.display(),
                crate::packed::EXTENSION
            );
            files.into_iter().map(|path| Source { path, weight: 1.0 }).collect()
        }
        (false, false) => vec![Source { path: data.to_path_buf(), weight: 1.0 }],
    };
    for extra in mix {
        match sources.iter_mut().find(|s| crate::guard::same_path(&s.path, &extra.path)) {
            Some(source) => source.weight = extra.weight,
            None => {
                anyhow::ensure!(
                    extra.path.is_file(),
                    "--mix {}: no such file (a pattern such as `*` is expanded by the shell, not by deepchess)",
                    extra.path.display()
                );
                sources.push(extra.clone())
            }
        }
    }
    Ok(sources)
}

/// The searched positions of a parsed game: every position a move was played from, with
/// the `[%eval]` that follows the move as its score (none when the move has no comment).
/// The final position (no move played there) is not one.
pub fn searched(game: &ParsedGame) -> anyhow::Result<Vec<Record>> {
    game.records
        .windows(2)
        .map(|pair| {
            let (record, next) = (&pair[0], &pair[1]);
            let info = GameInfo { game: record.game(), result: record.result() };
            let eval = next.eval().unwrap_or(EVAL_NONE);
            Ok(Record::new(&record.position()?, record.ply(), eval, info, record.played()?)?)
        })
        .collect()
}

/// The games of a PGN file or of a packed one ([`crate::packed`]), one at a time.
pub struct GameReader {
    path: PathBuf,
    games: Games,
}

/// Where a [`GameReader`]'s games come from.
enum Games {
    /// PGN text parsed a batch at a time.
    Pgn { batches: Box<GameBatches<Box<dyn Read + Send>>>, parsed: VecDeque<ParsedGame> },
    /// Packed games, decoded at open.
    Packed(std::vec::IntoIter<SelfPlayGame>),
}

impl GameReader {
    /// Opens `path`: packed games, or PGN (plain, gzip, zstd or bzip2).
    pub fn open(path: &Path) -> anyhow::Result<GameReader> {
        let games = match crate::packed::is_packed(path)? {
            true => Games::Packed(crate::packed::read(path)?.into_iter()),
            false => {
                let input = input::open(path).with_context(|| format!("{}: cannot read it as PGN", path.display()))?;
                Games::Pgn { batches: Box::new(GameBatches::new(input.reader, BATCH_BYTES)), parsed: VecDeque::new() }
            }
        };
        Ok(GameReader { path: path.to_path_buf(), games })
    }

    /// The next game the parser could use (games it skips are passed over); `None` at the
    /// end of the file.
    pub fn next_game(&mut self) -> anyhow::Result<Option<ParsedGame>> {
        let (batches, parsed) = match &mut self.games {
            Games::Packed(games) => {
                let Some(game) = games.next() else { return Ok(None) };
                let parsed = ParsedGame::from_selfplay(&game)
                    .map_err(|e| anyhow::anyhow!("{}: game of round {}: {e}", self.path.display(), game.round))?;
                return Ok(Some(parsed));
            }
            Games::Pgn { batches, parsed } => (batches, parsed),
        };
        loop {
            if let Some(game) = parsed.pop_front() {
                if game.skip.is_none() {
                    return Ok(Some(game));
                }
                continue;
            }
            let Some(bytes) = batches.next_batch().with_context(|| format!("{}", self.path.display()))? else {
                return Ok(None);
            };
            let options = ParseOptions { keep_truncated: false, describe: false };
            parsed.extend(parse_batch(&bytes, options));
        }
    }
}

/// Whether position `index` of `source` is taken in the fractional part of epoch `epoch`.
fn in_fraction(seed: u64, epoch: u32, source: usize, index: u64, fraction: f64) -> bool {
    let z = splitmix64(splitmix64(seed ^ (u64::from(epoch) << 32) ^ source as u64) ^ index);
    ((z >> 11) as f64 / (1u64 << 53) as f64) < fraction
}

/// A uniform number below `n` (> 0).
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// How the mix is read: filters, and the seed and fraction of the validation split.
#[derive(Clone, Debug)]
pub struct MixOptions {
    /// Which positions train.
    pub filters: PositionFilters,
    /// Seed of the split, the fractional weights and the order.
    pub seed: u64,
    /// Share of the games that go to validation (by their hash).
    pub validation_fraction: f64,
    /// Positions in the shuffle buffer.
    pub shuffle_buffer: usize,
}

/// What a source holds, counted once.
#[derive(Clone, Debug)]
struct Counted {
    source: Source,
    /// Training positions (one pass).
    positions: u64,
}

/// The mix: its sources with their training counts, and the validation positions.
pub struct Mix {
    sources: Vec<Counted>,
    options: MixOptions,
    /// Validation positions of every source.
    pub validation: EvalPositions,
    /// What the filters kept in training and in validation.
    pub counts: (FilterCounts, FilterCounts),
}

impl Mix {
    /// Reads every source once: counts its training positions, keeps its validation ones.
    pub fn open(sources: &[Source], options: MixOptions) -> anyhow::Result<Mix> {
        let mut mix =
            Mix { sources: Vec::new(), options, validation: EvalPositions::default(), counts: Default::default() };
        for source in sources.iter().filter(|s| s.weight > 0.0) {
            let mut reader = GameReader::open(&source.path)?;
            let (mut train, mut validation) = (FilterCounts::default(), FilterCounts::default());
            while let Some(game) = reader.next_game()? {
                let is_validation = mix.split(&game) == Split::Validation;
                for record in searched(&game).with_context(|| format!("{}", source.path.display()))? {
                    let counts = if is_validation { &mut validation } else { &mut train };
                    if let Some(kept) = keep(&record, &mix.options.filters, counts)?
                        && is_validation
                    {
                        mix.validation.push(&kept);
                    }
                }
            }
            eprintln!(
                "{} (weight {}): {} training and {} validation positions kept of {} and {} (no score {}, early {}, extreme score {}, noisy move {}, in check {})",
                source.path.display(),
                source.weight,
                train.kept,
                validation.kept,
                train.records,
                validation.records,
                train.no_score + validation.no_score,
                train.early + validation.early,
                train.extreme_score + validation.extreme_score,
                train.noisy + validation.noisy,
                train.in_check + validation.in_check
            );
            mix.counts.0 += train;
            mix.counts.1 += validation;
            mix.sources.push(Counted { source: source.clone(), positions: train.kept as u64 });
        }
        Ok(mix)
    }

    fn split(&self, game: &ParsedGame) -> Split {
        split_of(game.hash, self.options.seed, self.options.validation_fraction)
    }

    /// Training positions of epoch `epoch`.
    pub fn epoch_positions(&self, epoch: u32) -> u64 {
        (0..self.sources.len()).map(|i| self.quota(i, epoch)).sum()
    }

    /// Training positions source `i` gives in epoch `epoch`.
    fn quota(&self, i: usize, epoch: u32) -> u64 {
        let Counted { source, positions } = &self.sources[i];
        let fraction = source.weight.fract();
        let extra = match fraction > 0.0 {
            true => (0..*positions).filter(|&j| in_fraction(self.options.seed, epoch, i, j, fraction)).count() as u64,
            false => 0,
        };
        source.weight.floor() as u64 * positions + extra
    }

    /// The training positions of epoch `epoch`, mixed and shuffled (read them with
    /// [`MixStream::next_position`] of this mix).
    pub fn stream(&self, epoch: u32) -> MixStream {
        let streams = (0..self.sources.len())
            .map(|i| SourceStream {
                index: i,
                reader: None,
                pass: 0,
                position: 0,
                left: self.quota(i, epoch),
                ready: VecDeque::new(),
            })
            .collect();
        MixStream { epoch, streams, rng: rng(self.options.seed, epoch, 7), buffer: Vec::new() }
    }
}

/// Where one source is within an epoch.
struct SourceStream {
    index: usize,
    reader: Option<GameReader>,
    pass: u64,
    /// Training position within the pass.
    position: u64,
    /// Positions still to give this epoch.
    left: u64,
    /// Kept positions of the current game not yet given.
    ready: VecDeque<Kept>,
}

/// One epoch of a mix: the training positions in their seeded order.
pub struct MixStream {
    epoch: u32,
    streams: Vec<SourceStream>,
    rng: ChaCha8Rng,
    buffer: Vec<Kept>,
}

impl MixStream {
    /// The next training position of `mix` (the mix this stream was made from); `None` at
    /// the end of the epoch.
    pub fn next_position(&mut self, mix: &Mix) -> anyhow::Result<Option<Kept>> {
        while self.buffer.len() < mix.options.shuffle_buffer.max(1) {
            match self.pull(mix)? {
                Some(kept) => self.buffer.push(kept),
                None => break,
            }
        }
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let at = below(&mut self.rng, self.buffer.len() as u64) as usize;
        Ok(Some(self.buffer.swap_remove(at)))
    }

    /// The next position of a source drawn in proportion to what each has left.
    fn pull(&mut self, mix: &Mix) -> anyhow::Result<Option<Kept>> {
        let total: u64 = self.streams.iter().map(|s| s.left).sum();
        if total == 0 {
            return Ok(None);
        }
        let mut draw = below(&mut self.rng, total);
        let k = self
            .streams
            .iter()
            .position(|s| {
                let here = draw < s.left;
                draw = draw.saturating_sub(s.left);
                here
            })
            .expect("a draw below the total falls in a source");
        let stream = &mut self.streams[k];
        stream.left -= 1;
        stream.next(mix, self.epoch).map(Some)
    }
}

impl SourceStream {
    /// The source's next position taken this epoch (its file read again for each pass).
    fn next(&mut self, mix: &Mix, epoch: u32) -> anyhow::Result<Kept> {
        let Counted { source, positions } = &mix.sources[self.index];
        let (whole, fraction) = (source.weight.floor() as u64, source.weight.fract());
        loop {
            if let Some(kept) = self.ready.pop_front() {
                let (index, pass) = (self.position, self.pass);
                self.position += 1;
                if pass < whole || in_fraction(mix.options.seed, epoch, self.index, index, fraction) {
                    return Ok(kept);
                }
                continue;
            }
            if self.position >= *positions || self.reader.is_none() {
                if self.reader.is_some() {
                    self.pass += 1;
                }
                self.reader = Some(GameReader::open(&source.path)?);
                self.position = 0;
            }
            let reader = self.reader.as_mut().expect("opened above");
            let Some(game) = reader.next_game()? else {
                anyhow::bail!(
                    "{}: ended before its {positions} training positions: the file changed during training",
                    source.path.display()
                );
            };
            if mix.split(&game) == Split::Train {
                let mut counts = FilterCounts::default();
                for record in searched(&game)? {
                    if let Some(kept) = keep(&record, &mix.options.filters, &mut counts)? {
                        self.ready.push_back(kept);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Write;

    use shakmaty::san::San;
    use shakmaty::{Chess, Position};

    use super::*;

    /// `games` games of `plies` plies whose positions are scored `first`, `first + 1`, ...
    /// centipawns in the order they are played (each score names its position).
    fn pgn(games: u32, plies: u32, first: i32) -> String {
        let mut text = String::new();
        let mut id = first;
        for g in 0..games {
            let _ = write!(text, "[Event \"t\"]\n[Round \"{}\"]\n[Result \"1-0\"]\n\n", g + 1);
            let mut position = Chess::default();
            for ply in 0..plies {
                let moves = position.legal_moves();
                let m = moves[(ply * 7 + g * 3) as usize % moves.len()];
                let number = if ply % 2 == 0 { format!("{}. ", ply / 2 + 1) } else { String::new() };
                let _ =
                    write!(text, "{number}{} {{[%eval {:.2}]}} ", San::from_move(&position, m), f64::from(id) / 100.0);
                position.play_unchecked(m);
                id += 1;
            }
            text.push_str("1-0\n\n");
        }
        text
    }

    fn file(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("deepchess-mix-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn options(validation_fraction: f64) -> MixOptions {
        let filters = PositionFilters { min_ply: 0, max_score: 20_000, keep_noisy: true, keep_in_check: true };
        MixOptions { filters, seed: 11, validation_fraction, shuffle_buffer: 16 }
    }

    /// Every score (White's view: the position's number) the epoch gives, in order.
    fn epoch(mix: &Mix, epoch: u32) -> Vec<i32> {
        let mut stream = mix.stream(epoch);
        let mut ids = Vec::new();
        while let Some((_, score, _)) = stream.next_position(mix).unwrap() {
            ids.push(i32::from(score).abs()); // the side to move's view of a positive number
        }
        ids
    }

    fn counts(ids: &[i32]) -> BTreeMap<i32, usize> {
        let mut counts = BTreeMap::new();
        for &id in ids {
            *counts.entry(id).or_default() += 1;
        }
        counts
    }

    #[test]
    fn sources_parse_with_and_without_weights() {
        assert_eq!("a.pgn".parse::<Source>().unwrap(), Source { path: "a.pgn".into(), weight: 1.0 });
        assert_eq!("d/a.pgn.zst:2.5".parse::<Source>().unwrap(), Source { path: "d/a.pgn.zst".into(), weight: 2.5 });
        assert!("a.pgn:x".parse::<Source>().unwrap_err().contains("not a number"));
        assert!("a.pgn:-1".parse::<Source>().unwrap_err().contains("≥ 0"));
    }

    #[test]
    fn data_and_mix_name_the_sources_and_their_weights() {
        let dir = std::env::temp_dir().join(format!("deepchess-mix-{}-dir", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["b.pgn.zst", "a.pgn", "notes.txt", "c.dcpg.zst", "c.dcpg.zst.json"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let weights = |data: &Path, mix: &[&str]| {
            let mix: Vec<Source> = mix.iter().map(|m| m.parse().unwrap()).collect();
            sources(data, &mix).unwrap().into_iter().map(|s| (s.path, s.weight)).collect::<Vec<_>>()
        };
        let (a, b, c) = (dir.join("a.pgn"), dir.join("b.pgn.zst"), dir.join("c.dcpg.zst"));
        assert_eq!(
            weights(&dir, &[]),
            [(a.clone(), 1.0), (b.clone(), 1.0), (c.clone(), 1.0)],
            "every PGN file and packed games file of a directory"
        );
        let b_half = format!("{}:0.5", b.display());
        let more = dir.join("more");
        std::fs::create_dir_all(&more).unwrap();
        let d = more.join("d.pgn");
        std::fs::write(&d, "").unwrap();
        let d_thrice = format!("{}:3", d.display());
        let expected = [(a.clone(), 1.0), (b, 0.5), (c, 1.0), (d, 3.0)];
        assert_eq!(weights(&dir, &[&b_half, &d_thrice]), expected);
        let missing = format!("{}:0", dir.join("g10c-*.dcpg.zst").display());
        let error = sources(&dir, &[missing.parse().unwrap()]).unwrap_err().to_string();
        assert!(error.contains("g10c-*.dcpg.zst: no such file"), "{error}");
        assert_eq!(weights(&a, &[]), [(a, 1.0)]);
        std::fs::write(dir.join("moves-train.bin"), "").unwrap();
        assert!(sources(&dir, &[]).unwrap().is_empty(), "a prepared dataset is not streamed");
        assert!(sources(&dir, &["c.pgn".parse().unwrap()]).unwrap_err().to_string().contains("--mix streams"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_epoch_gives_every_position_as_often_as_its_weight_says() {
        let (a, b) = (file("a.pgn", &pgn(10, 12, 1)), file("b.pgn", &pgn(5, 12, 1001)));
        let sources = [Source { path: a.clone(), weight: 1.0 }, Source { path: b.clone(), weight: 2.0 }];
        let mix = Mix::open(&sources, options(0.0)).unwrap();
        assert_eq!(mix.epoch_positions(0), 120 + 2 * 60);
        let ids = epoch(&mix, 0);
        assert_eq!(ids.len(), 240);
        let seen = counts(&ids);
        assert!((1..=120).all(|id| seen[&id] == 1), "source a once");
        assert!((1001..=1060).all(|id| seen[&id] == 2), "source b twice");
        assert_eq!(seen.len(), 180);
        // interleaved and shuffled across the files, the same for the same seed and epoch
        assert!(ids[..40].iter().any(|&id| id > 1000) && ids[..40].iter().any(|&id| id <= 120));
        assert_eq!(ids, epoch(&mix, 0));
        assert_ne!(ids, epoch(&mix, 1));
        // a fractional weight takes that share, a seeded subset per epoch, each at most once
        let half = [Source { path: a.clone(), weight: 0.5 }];
        let mix = Mix::open(&half, options(0.0)).unwrap();
        let ids = epoch(&mix, 3);
        assert_eq!(ids.len() as u64, mix.epoch_positions(3));
        assert!((40..=80).contains(&ids.len()), "{}", ids.len());
        assert!(counts(&ids).values().all(|&n| n == 1) && ids.iter().all(|id| (1..=120).contains(id)));
        assert_ne!(counts(&ids), counts(&epoch(&mix, 4)));
        for path in [a, b] {
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn packed_games_mix_as_their_pgn_does() {
        let games: Vec<SelfPlayGame> = (0..30u32)
            .map(|g| {
                let start = Chess::default();
                let mut position = start.clone();
                let moves: Vec<_> = (0..10u32)
                    .map(|ply| {
                        let legal = position.legal_moves();
                        let m = legal[(ply * 7 + g * 3) as usize % legal.len()];
                        position.play_unchecked(m);
                        m
                    })
                    .collect();
                let evals = (0..10).map(|ply| (g * 10 + ply + 1) as i16).collect();
                let termination = deepchess_core::selfplay_game::TERMINATIONS[1];
                SelfPlayGame { round: u64::from(g) + 1, start, moves, evals, result: 1, termination }
            })
            .collect();
        let pgn = file("p.pgn", &games.iter().map(SelfPlayGame::pgn).collect::<String>());
        let packed = std::env::temp_dir().join(format!("deepchess-mix-{}-p.dcpg.zst", std::process::id()));
        std::fs::write(&packed, crate::packed::compress(&games).unwrap()).unwrap();
        let open = |path: &PathBuf| Mix::open(&[Source { path: path.clone(), weight: 1.5 }], options(0.3)).unwrap();
        let (from_pgn, from_packed) = (open(&pgn), open(&packed));
        assert_eq!(from_pgn.validation.len(), from_packed.validation.len());
        assert!(!from_pgn.validation.is_empty());
        assert_eq!(epoch(&from_pgn, 2), epoch(&from_packed, 2));
        for path in [pgn, packed] {
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn validation_games_never_train() {
        let a = file("v.pgn", &pgn(40, 6, 1));
        let mix = Mix::open(&[Source { path: a.clone(), weight: 1.0 }], options(0.3)).unwrap();
        let (train, validation) = (epoch(&mix, 0), mix.validation.len());
        assert_eq!(train.len() + validation, 240);
        assert!(validation >= 6 && train.len() >= 6, "{validation} / {}", train.len());
        let validation_ids: Vec<i32> =
            (0..validation).map(|i| i32::from(mix.validation.score_and_result(i).0).abs()).collect();
        assert!(validation_ids.iter().all(|id| !train.contains(id)));
        std::fs::remove_file(a).unwrap();
    }
}
