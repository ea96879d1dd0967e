//! Iterative deepening: one iteration per depth, each `MultiPV` line with its own
//! aspiration window, the lines reported best first.

use shakmaty::{Chess, Move, Position};

use super::helper_skips;
use super::searcher::{INFINITY, Searcher};
use crate::position_history::key;
use crate::search::tt::{Bound, pack_move};
use crate::search::{Info, MAX_PLY, Report, Reporter, Score, SearchResult, TB_WIN_BOUND};

impl Searcher<'_> {
    /// Iterative deepening until a limit (helper thread `helper` skips the depths
    /// [`helper_skips`] names; the main thread, 0, none); the last completed
    /// iteration's move (or, if none completed, the best found so far, or the first
    /// legal move). Under `MultiPV` each iteration searches the best line, then the best
    /// line without the first moves of the lines found so far, and so on (as Stockfish
    /// does), and reports the lines best first; the first line's move is played.
    pub(super) fn iterate(&mut self, helper: usize, reporter: Reporter<'_>) -> SearchResult {
        let root = self.root.clone();
        self.keys.push(key(&root));
        let max_depth = self.control.depth.map_or(MAX_PLY as i32 - 1, |d| (d as i32).clamp(1, MAX_PLY as i32 - 1));
        let root_moves = root.legal_moves().into_iter().filter(|m| !self.skipped_at_root(m)).count();
        let lines = self.control.multipv.clamp(1, root_moves.max(1));
        let mut completed: Option<SearchResult> = None;
        let mut previous = vec![0; lines];
        // The lines last reported: (score, principal variation, depth).
        let mut reported: Vec<(i32, Vec<Move>, i32)> = Vec::new();
        let game_ply = 2 * (root.fullmoves().get() - 1) + u32::from(root.turn().is_black());
        for depth in 1..=max_depth {
            if depth < max_depth && helper_skips(helper, depth, game_ply) {
                continue;
            }
            // (score, principal variation) of each line found at this depth.
            let mut found: Vec<(i32, Vec<Move>)> = Vec::with_capacity(lines);
            let mut last_score = 0;
            self.excluded.clear();
            for &center in &previous {
                last_score = self.aspiration(&root, depth, center);
                if self.aborted || self.pv[0].is_empty() {
                    break;
                }
                found.push((last_score, self.pv[0].clone()));
                self.excluded.push(self.pv[0][0]);
            }
            self.excluded.clear();
            let Some((first_score, first_pv)) = found.first().cloned() else {
                // The first line did not finish: the previous iteration stands.
                if completed.is_none() && !self.pv[0].is_empty() {
                    completed = Some(self.result(last_score, self.pv[0].clone(), depth - 1));
                }
                break;
            };
            if lines > 1 && self.options.tt {
                // The later lines stored their own best moves at the root: the first line's
                // move leads the next iteration again.
                self.tt.store(key(&root), 0, depth, first_score, Bound::Exact, pack_move(&first_pv[0]), None);
            }
            found.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
            for (center, (score, _)) in previous.iter_mut().zip(&found) {
                *center = *score;
            }
            let finished = found.len() == lines;
            // An iteration cut short reports the lines it finished, then those of the
            // previous iteration that it did not reach (as Stockfish does).
            let mut report: Vec<(i32, Vec<Move>, i32)> =
                found.iter().map(|(score, pv)| (*score, pv.clone(), depth)).collect();
            let unreached = reported.iter().filter(|(_, pv, _)| found.iter().all(|(_, f)| f[0] != pv[0]));
            report.extend(unreached.take(lines - found.len()).cloned());
            self.report(&report, &mut *reporter);
            reported = report;
            let (score, pv) = found.swap_remove(0);
            completed = Some(self.result(score, pv, depth));
            if !finished || !self.control.another_iteration() {
                break;
            }
        }
        self.flush();
        completed.unwrap_or_else(|| {
            let moves = root.legal_moves();
            let best = self.search_moves.first().copied().unwrap_or(moves[0]);
            SearchResult { best, score: Score::Cp(0), pv: vec![best], depth: 0, nodes: self.total() }
        })
    }

    /// Reports `lines` (score, principal variation, depth), numbered from 1.
    fn report(&self, lines: &[(i32, Vec<Move>, i32)], reporter: Reporter<'_>) {
        let hashfull = self.options.tt.then(|| self.tt.hashfull());
        for (line, (score, pv, depth)) in lines.iter().enumerate() {
            let result = self.result(*score, pv.clone(), *depth);
            let time_ms = self.control.elapsed_ms();
            let info = Info::new(result.depth, self.seldepth as u32, result.score, result.nodes, time_ms, result.pv);
            reporter(&Report::Info(Info { multipv: line as u32 + 1, hashfull, ..info }));
        }
    }

    /// Whether the root move `m` is left out: not among `go searchmoves`, or the first
    /// move of a line already found in this `MultiPV` iteration.
    pub(super) fn skipped_at_root(&self, m: &Move) -> bool {
        (!self.search_moves.is_empty() && !self.search_moves.contains(m)) || self.excluded.contains(m)
    }

    fn result(&self, score: i32, pv: Vec<Move>, depth: i32) -> SearchResult {
        SearchResult {
            best: pv[0],
            score: Score::from_internal(score),
            pv,
            depth: depth.max(0) as u32,
            nodes: self.total(),
        }
    }

    /// One iteration, with an aspiration window around `previous` when enabled.
    fn aspiration(&mut self, root: &Chess, depth: i32, previous: i32) -> i32 {
        let params = self.options.params;
        if !self.options.aspiration || depth < params.aspiration_depth || previous.abs() >= TB_WIN_BOUND {
            return self.negamax(root, depth, -INFINITY, INFINITY, 0, false);
        }
        let mut delta = params.aspiration_delta;
        let (mut alpha, mut beta) = (previous - delta, previous + delta);
        loop {
            let score = self.negamax(root, depth, alpha, beta, 0, false);
            if self.aborted {
                return score;
            }
            if score <= alpha {
                alpha = (alpha - delta).max(-INFINITY);
            } else if score >= beta {
                beta = (beta + delta).min(INFINITY);
            } else {
                return score;
            }
            delta *= 2;
            if delta > params.aspiration_max_delta {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }
}
