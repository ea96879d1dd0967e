//! Sibling positions for the student comparator: from positions of a dataset (self-play
//! games), a few moves each (the move played there, then random legal ones), every child
//! scored by the evaluation search. The children of one parent form one group, written as
//! one "game" of a `moves` dataset (same ply, the parent's result, White's score), so the
//! student's pair sampler, which pairs positions of one game one or two plies apart, pairs
//! exactly the siblings: positions a search compares, labelled by what the search thinks.

use std::path::Path;
use std::sync::Arc;

use deepchess_core::{Dataset, GameInfo, Record, Split};
use deepchess_engine::nn::Networks;
use deepchess_engine::position_history::Game;
use deepchess_engine::search::Score;
use shakmaty::{Chess, Move, Position};

use crate::error::DatagenError;
use crate::game::PlayedPly;
use crate::groups::{GroupCounts, Parents, write_groups};
use crate::player::Player;
use crate::rng::Rng;

/// How the siblings are made.
#[derive(Clone, Debug, PartialEq)]
pub struct SiblingOptions {
    /// Which records are parents (`min_ply` 16 skips the openings played at random).
    pub parents: Parents,
    /// Children per parent (the played move first, then distinct random legal moves).
    pub children: usize,
    /// Soft node limit of the search that scores a child (hard limit: four times).
    pub nodes: u64,
    /// Seed of the random moves.
    pub seed: u64,
    /// Write the position at the end of each child's principal variation (the quiet leaf
    /// whose evaluation the child's score is, as the comparison search compares leaves)
    /// instead of the child itself.
    pub pv_leaves: bool,
}

/// Writes `out/moves-{train,validation}.bin` of sibling groups made from the parents in
/// `data/moves-{train,validation}.bin` (a split that `data` lacks is skipped), as
/// [`write_groups`] does: a group of fewer than two scored children is dropped.
pub fn siblings(
    data: &Path,
    out: &Path,
    options: &SiblingOptions,
    networks: &Networks,
) -> Result<Vec<(Split, GroupCounts)>, DatagenError> {
    if options.children < 2 || options.nodes == 0 {
        return Err(DatagenError::Invalid("--children must be at least 2 and --nodes at least 1".into()));
    }
    let new_player = || Player::new(networks, 16, Arc::default());
    write_groups(data, out, &options.parents, "siblings", new_player, |player, dataset, input, index| {
        group(dataset, input, index, options, player)
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
