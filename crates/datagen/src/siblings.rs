//! Sibling positions for the student comparator: from positions of a dataset (self-play
//! games), a few moves each (the move played there, then random legal ones), every child
//! scored by the evaluation search. The children of one parent form one group, written as
//! one "game" of a `moves` dataset (same ply, the parent's result, White's score), so the
//! student's pair sampler, which pairs positions of one game one or two plies apart, pairs
//! exactly the siblings: positions a search compares, labelled by what the search thinks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deepchess_core::atomic::{self, check_overwrite, temporary_path};
use deepchess_core::dataset::{DatasetWriter, file_name};
use deepchess_core::{Content, Dataset, GameInfo, Record, Split};
use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::Score;
use shakmaty::{Chess, Move, Position};

use crate::error::{DatagenError, io_error};
use crate::game::PlayedPly;
use crate::player::Player;
use crate::rng::Rng;

/// How the siblings are made.
#[derive(Clone, Debug, PartialEq)]
pub struct SiblingOptions {
    /// Children per parent (the played move first, then distinct random legal moves).
    pub children: usize,
    /// One parent every this many records.
    pub every: usize,
    /// Parents before this ply are skipped (openings played at random).
    pub min_ply: u16,
    /// Soft node limit of the search that scores a child (hard limit: four times).
    pub nodes: u64,
    /// Seed of the random moves.
    pub seed: u64,
    /// Write the position at the end of each child's principal variation (the quiet leaf
    /// whose evaluation the child's score is, as the comparison search compares leaves)
    /// instead of the child itself.
    pub pv_leaves: bool,
    /// Worker threads.
    pub threads: usize,
    /// Replace an earlier output.
    pub force: bool,
}

/// Counts of a run, per split.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiblingCounts {
    /// Parents that gave a group of at least two scored children.
    pub groups: u64,
    /// Children written.
    pub children: u64,
}

/// Writes `out/moves-{train,validation}.bin` of sibling groups made from the parents in
/// `data/moves-{train,validation}.bin` (a split that `data` lacks is skipped). Each file is
/// written under a temporary name and renamed; an existing one is replaced only with
/// `force`, and `out` may not be `data`.
pub fn siblings(
    data: &Path,
    out: &Path,
    options: &SiblingOptions,
    networks: &Networks,
) -> Result<Vec<(Split, SiblingCounts)>, DatagenError> {
    let invalid = |message: String| DatagenError::Invalid(message);
    if options.children < 2 || options.every == 0 || options.nodes == 0 || options.threads == 0 {
        return Err(invalid("--children must be at least 2, --every, --nodes and --threads at least 1".into()));
    }
    let same = |a: &Path, b: &Path| a.canonicalize().ok().is_some_and(|a| b.canonicalize().ok() == Some(a));
    if same(data, out) {
        return Err(invalid(format!("--out {} is the input --data: choose another directory", out.display())));
    }
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let mut counts = Vec::new();
    for split in Split::ALL {
        let input = data.join(file_name(Content::Moves, split));
        if !input.exists() {
            continue;
        }
        let target = out.join(file_name(Content::Moves, split));
        check_overwrite(&target, options.force).map_err(DatagenError::Io)?;
        let dataset = Dataset::open(&input)?;
        let parents: Vec<usize> =
            (0..dataset.len()).step_by(options.every).filter(|&i| dataset.get(i).ply() >= options.min_ply).collect();
        let groups = score_groups(&dataset, &input, &parents, options, networks)?;
        let first = counts.iter().map(|(_, c): &(Split, SiblingCounts)| c.groups).sum::<u64>() as u32;
        counts.push((split, write(&target, split, &groups, first)?));
    }
    if counts.is_empty() {
        return Err(invalid(format!("{}: no moves-train.bin or moves-validation.bin", data.display())));
    }
    Ok(counts)
}

/// Seconds between two progress lines on standard error.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// The scored children of each parent, in the parents' order, on `options.threads` threads;
/// a progress line on standard error every [`PROGRESS_EVERY`].
fn score_groups(
    dataset: &Dataset,
    input: &Path,
    parents: &[usize],
    options: &SiblingOptions,
    networks: &Networks,
) -> Result<Vec<Vec<Record>>, DatagenError> {
    let chunk = parents.len().div_ceil(options.threads).max(1);
    let (done, started) = (AtomicU64::new(0), Instant::now());
    std::thread::scope(|scope| {
        let workers: Vec<_> = parents
            .chunks(chunk)
            .map(|share| {
                let done = &done;
                scope.spawn(move || {
                    let mut player = Player::new(networks, 16, Arc::default());
                    let mut scored = |&i: &usize| {
                        let made = group(dataset, input, i, options, &mut player);
                        done.fetch_add(1, Ordering::Relaxed);
                        made
                    };
                    share.iter().map(&mut scored).collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        let mut last = Instant::now();
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                let finished = done.load(Ordering::Relaxed);
                let rate = finished as f64 / started.elapsed().as_secs_f64();
                eprintln!("siblings {}: {finished} / {} parents ({rate:.1} a second)", input.display(), parents.len());
            }
        }
        let mut groups = Vec::with_capacity(parents.len());
        for worker in workers {
            groups.extend(worker.join().expect("a sibling worker panicked")?);
        }
        Ok(groups)
    })
}

/// The scored children of record `index` (empty when fewer than two could be scored).
fn group(
    dataset: &Dataset,
    input: &Path,
    index: usize,
    options: &SiblingOptions,
    player: &mut Player<'_>,
) -> Result<Vec<Record>, DatagenError> {
    let record = dataset.get(index);
    let bad = |e: &dyn std::fmt::Display| DatagenError::Invalid(format!("{}: record {index}: {e}", input.display()));
    let parent = record.position().map_err(|e| bad(&e))?;
    let played = record.played().map_err(|e| bad(&e))?.and_then(|p| p.to_move(&parent));
    let mut rng = Rng::for_game(options.seed, index as u32);
    let mut children = Vec::new();
    for m in chosen_moves(&parent, played, options.children, &mut rng) {
        let mut child = parent.clone();
        child.play_unchecked(m);
        let child_turn = child.turn();
        if child.legal_moves().is_empty() {
            continue;
        }
        player.new_game();
        let game = Game::new(child.clone());
        // The player's stop flag is never raised here: every search returns.
        let Some(result) = player.search(&game, options.nodes, options.nodes.saturating_mul(4)) else { continue };
        // Every record of a group carries the children's ply, PV leaves too, so that the
        // pair sampler (positions of a game at most two plies apart) pairs the whole group.
        let (mut position, ply) = (child, record.ply().saturating_add(1));
        if options.pv_leaves {
            for &m in &result.pv {
                if !position.is_legal(m) {
                    break;
                }
                position.play_unchecked(m);
            }
        }
        // The score of the child, from the view of the side to move at the written position.
        let score = if position.turn() == child_turn { result.score } else { flipped(result.score) };
        let scored = PlayedPly { position, ply, played: result.best, score };
        let info = GameInfo { game: 0, result: record.result() };
        children.push(Record::new(&scored.position, ply, scored.white_eval(), info, None).map_err(|e| bad(&e))?);
    }
    if children.len() < 2 {
        children.clear();
    }
    Ok(children)
}

/// `score` from the other side's view.
fn flipped(score: Score) -> Score {
    match score {
        Score::Cp(cp) => Score::Cp(-cp),
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// Up to `count` distinct legal moves of `position`: `first` (when legal), then uniformly
/// random others.
fn chosen_moves(position: &Chess, first: Option<Move>, count: usize, rng: &mut Rng) -> Vec<Move> {
    let mut legal: Vec<Move> = position.legal_moves().into_iter().collect();
    let mut chosen = Vec::with_capacity(count);
    if let Some(i) = first.and_then(|m| legal.iter().position(|&l| l == m)) {
        chosen.push(legal.swap_remove(i));
    }
    while chosen.len() < count && !legal.is_empty() {
        chosen.push(legal.swap_remove(rng.below(legal.len())));
    }
    chosen
}

/// Writes the groups to `target` (a temporary first), numbering them as games from `first`
/// (the groups of the splits written before, so that numbers are unique across splits).
fn write(target: &Path, split: Split, groups: &[Vec<Record>], first: u32) -> Result<SiblingCounts, DatagenError> {
    let tmp: PathBuf = temporary_path(target);
    atomic::register_temporary(&tmp);
    let result = (|| {
        let mut writer = DatasetWriter::create(&tmp, Content::Moves, split)?;
        let mut counts = SiblingCounts::default();
        for group in groups.iter().filter(|g| !g.is_empty()) {
            for record in group {
                let mut record = *record;
                record.set_game(first + counts.groups as u32);
                writer.push(&record)?;
                counts.children += 1;
            }
            counts.groups += 1;
        }
        writer.finish()?;
        atomic::publish(&tmp, target).map_err(io_error(target))?;
        Ok(counts)
    })();
    if result.is_err() {
        atomic::remove_temporary(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chosen_moves_are_distinct_legal_and_start_with_the_played_one() {
        let position = Chess::default();
        let legal = position.legal_moves();
        let played = legal[5];
        let mut rng = Rng::for_game(1, 2);
        let moves = chosen_moves(&position, Some(played), 4, &mut rng);
        assert_eq!(moves.len(), 4);
        assert_eq!(moves[0], played);
        for (i, m) in moves.iter().enumerate() {
            assert!(legal.contains(m));
            assert!(!moves[..i].contains(m), "distinct");
        }
        assert_eq!(chosen_moves(&position, None, 40, &mut rng).len(), 20, "at most every legal move");
    }
}
