//! The main search: fail-soft negamax with the table, tablebase bounds, pruning before
//! the moves (reverse futility, razoring, null move), internal iterative reduction,
//! singular extensions, and per move late move pruning, SEE pruning and late move
//! reductions under principal variation search.

use shakmaty::{Chess, Position};

use super::params::Params;
use super::searcher::{INFINITY, Searcher};
use crate::position_history::{key_after_null, played};
use crate::search::history::{PieceTo, is_quiet};
use crate::search::see::see_ge;
use crate::search::tt::{Bound, Entry, pack_move, unpack_move};
use crate::search::{MATE, MAX_PLY, TB_WIN, TB_WIN_BOUND, set_pv};
use crate::tablebase::Outcome;

impl Searcher<'_> {
    /// The node's value (fail-soft) for the window `(alpha, beta)`.
    pub(super) fn negamax(
        &mut self,
        position: &Chess,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        allow_null: bool,
    ) -> i32 {
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.quiescence(position, alpha, beta, ply);
        }
        self.pv[ply].clear();
        self.visit(ply);
        if self.aborted {
            return 0;
        }
        let params = self.options.params;
        let root = ply == 0;
        let pv_node = beta - alpha > 1;
        // A singular-extension search of this node without `excluded`: no table cut, no
        // pruning before the moves, nothing stored.
        let excluded = self.singular_excluded[ply];
        if !root && (self.keys.is_repetition(position.halfmoves()) || position.is_insufficient_material()) {
            return 0;
        }
        let in_check = position.is_check();
        // Fifty moves draw, unless the last move mated (seen once the moves are generated).
        if !root && !in_check && position.halfmoves() >= 100 {
            return 0;
        }
        if !root {
            // Mate distance pruning: no line from here beats a mate found closer to the root.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        let node_key = self.node_key(position);
        let mut tt_move = None;
        let mut tt_entry = None;
        if self.options.tt
            && let Some(entry) = self.tt.probe(node_key, ply)
        {
            if !root
                && (!pv_node || self.options.pv_table_cuts)
                && excluded.is_none()
                && entry.depth >= depth
                && entry.cuts_off(alpha, beta)
            {
                return entry.score;
            }
            tt_move = unpack_move(position, entry.packed_move);
            tt_entry = Some(entry);
        }
        // A tablebase outcome bounds the node (as in Stockfish): a draw is exact, a win a
        // lower bound, a loss an upper bound; one that does not cut off bounds a PV node's
        // result instead.
        let (mut tb_floor, mut tb_ceiling) = (-INFINITY, INFINITY);
        if let Some(tablebases) = self.tablebases
            && !root
            && excluded.is_none()
            && let Some(outcome) = tablebases.outcome(position, depth)
        {
            let (score, bound) = match outcome {
                Outcome::Win => (TB_WIN - ply as i32, Bound::Lower),
                Outcome::Draw => (0, Bound::Exact),
                Outcome::Loss => (-TB_WIN + ply as i32, Bound::Upper),
            };
            if bound == Bound::Exact
                || (bound == Bound::Lower && score >= beta)
                || (bound == Bound::Upper && score <= alpha)
            {
                if self.options.tt {
                    self.tt.store(node_key, ply, (depth + 6).min(MAX_PLY as i32 - 1), score, bound, 0, None);
                }
                return score;
            }
            if pv_node && bound == Bound::Lower {
                tb_floor = score;
                alpha = alpha.max(score);
            } else if pv_node {
                tb_ceiling = score;
            }
        }
        let static_eval = match tt_entry.and_then(|entry| entry.eval) {
            _ if in_check => -INFINITY,
            Some(cached) => cached,
            None => self.evaluate(ply),
        };
        self.evals[ply] = static_eval;
        let improving = !in_check && (ply < 2 || self.evals[ply - 2] == -INFINITY || static_eval > self.evals[ply - 2]);
        // The static evaluation sharpened by a table bound on the same side, for null move
        // pruning. Reverse futility keeps the static evaluation: with a shallower bound it
        // would return that bound at every later iteration and never see the quiet mate
        // that a sacrifice threatens.
        let eval = match tt_entry {
            Some(entry) if self.options.qs_tt && !in_check => sharpened(static_eval, entry),
            _ => static_eval,
        };
        let prune = !pv_node && !in_check && excluded.is_none();
        if self.options.rfp
            && prune
            && depth <= params.rfp_depth
            && beta.abs() < TB_WIN_BOUND
            && static_eval - params.rfp_margin * (depth - i32::from(improving)) >= beta
        {
            return static_eval;
        }
        if self.options.razoring
            && prune
            && depth <= params.razor_depth
            && alpha.abs() < TB_WIN_BOUND
            && static_eval + params.razor_margin + params.razor_margin_depth * depth * depth < alpha
        {
            let score = self.quiescence(position, alpha, alpha + 1, ply);
            if self.aborted {
                return 0;
            }
            if score <= alpha {
                return score;
            }
        }
        if self.options.null_move
            && allow_null
            && !root
            && excluded.is_none()
            && !in_check
            && depth >= params.null_move_depth
            && beta.abs() < TB_WIN_BOUND
            && null_move_safe(position)
            && eval >= beta
            && let Ok(null) = position.clone().swap_turn()
        {
            let null_key = key_after_null(position, node_key, &null);
            self.enter(&null, null_key, ply);
            self.moved[ply] = None;
            let reduction = params.null_move_base
                + depth / params.null_move_divisor
                + ((eval - beta) / params.null_move_eval_divisor).min(params.null_move_eval_max);
            let score = -self.negamax(&null, depth - 1 - reduction, -beta, -beta + 1, ply + 1, false);
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            if score >= beta {
                return if score >= TB_WIN_BOUND { beta } else { score };
            }
        }
        if self.options.iir && depth >= params.iir_depth && tt_move.is_none() {
            depth -= 1;
        }
        // Moves are generated only now: the table, reverse futility and null move cut
        // most nodes before (a stalemate they cut is scored as they see it).
        let moves = position.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        if !root && position.halfmoves() >= 100 {
            return 0;
        }
        let extension = i32::from(self.options.check_extensions && in_check);
        let mut tt_extension = 0;
        if self.options.singular
            && !root
            && excluded.is_none()
            && depth >= params.singular_depth
            && let (Some(tt_m), Some(entry)) = (tt_move, tt_entry)
            && entry.depth >= depth - params.singular_entry_slack
            && entry.bound != Bound::Upper
            && entry.score.abs() < TB_WIN_BOUND
        {
            let singular_beta = entry.score - params.singular_margin * depth;
            self.singular_excluded[ply] = Some(tt_m);
            let score = self.negamax(position, (depth - 1) / 2, singular_beta - 1, singular_beta, ply, false);
            self.singular_excluded[ply] = None;
            // The search without the move leaves its line behind: not this node's.
            self.pv[ply].clear();
            if self.aborted {
                return 0;
            }
            if score < singular_beta {
                tt_extension = 1;
            } else if singular_beta >= beta {
                return singular_beta;
            } else if entry.score >= beta {
                tt_extension = -1;
            }
        }
        let previous = self.previous_moves(ply);
        // The table move goes first; staged, before the others are scored.
        let mut ordered = std::mem::take(&mut self.ordered[ply]);
        ordered.clear();
        ordered.extend(tt_move.map(|m| (f32::INFINITY, m)).into_iter());
        let mut deferred = tt_move.is_some() && self.options.staged_tt_move;
        if !deferred {
            self.order(position, &moves, tt_move, ply, depth, previous, &mut ordered);
        }
        let original_alpha = alpha;
        let mut best = tb_floor;
        let mut best_move = None;
        let mut searched = 0;
        let mut quiets_searched = 0;
        let (mut quiets_tried, mut captures_tried) = std::mem::take(&mut self.tried[ply]);
        quiets_tried.clear();
        captures_tried.clear();
        let turn = position.turn();
        loop {
            let m = match ordered.next_best() {
                Some(m) => m,
                None if deferred => {
                    deferred = false;
                    self.order(position, &moves, tt_move, ply, depth, previous, &mut ordered);
                    continue;
                }
                None => break,
            };
            if (root && self.skipped_at_root(&m)) || Some(m) == excluded {
                continue;
            }
            let child = played(position, m);
            let quiet = is_quiet(&m);
            let gives_check = child.is_check();
            let late_quiet = quiet && searched > 0 && !gives_check && best > -TB_WIN_BOUND;
            if late_quiet
                && self.options.lmp
                && !pv_node
                && !in_check
                && depth <= params.lmp_depth
                && quiets_searched >= lmp_limit(&params, depth) / (2 - usize::from(improving))
            {
                continue;
            }
            if self.options.see_pruning
                && !root
                && !in_check
                && searched > 0
                && best > -TB_WIN_BOUND
                && depth <= params.see_pruning_depth
                && (late_quiet || !quiet)
            {
                let threshold =
                    if quiet { -params.see_quiet_margin * depth * depth } else { -params.see_capture_margin * depth };
                if !see_ge(position, &m, threshold) {
                    continue;
                }
            }
            self.enter_after(position, m, &child, ply);
            self.moved[ply] = Some(PieceTo::of(turn, &m));
            let new_depth = depth - 1 + extension + if Some(m) == tt_move { tt_extension } else { 0 };
            let killer = self.options.killers && self.killers[ply].contains(&Some(m));
            let late = searched >= 2 + usize::from(pv_node) && best > -TB_WIN_BOUND;
            let reduction = if self.options.lmr && depth >= params.lmr_depth && !in_check && quiet && late {
                let mut r = lmr_reduction(&params, depth, searched, pv_node);
                if gives_check || killer {
                    r -= 1;
                }
                if self.options.histories {
                    r -= self.histories.quiet(turn, &m, previous) / params.lmr_history;
                }
                if self.options.lmr_improving && !improving {
                    r += 1;
                }
                // At most to depth 1 (none where the move's depth is already below it).
                r.clamp(0, (new_depth - 1).max(0))
            } else {
                0
            };
            let score = self.search_child(&child, new_depth, reduction, alpha, beta, ply, searched == 0);
            self.keys.pop();
            quiets_searched += usize::from(quiet);
            searched += 1;
            if self.aborted {
                self.tried[ply] = (quiets_tried, captures_tried);
                self.ordered[ply] = ordered;
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    set_pv(&mut self.pv, ply, m);
                    if alpha >= beta {
                        self.reward(&m, turn, ply, depth, previous, &quiets_tried, &captures_tried);
                        break;
                    }
                }
            }
            if quiet {
                quiets_tried.push(m);
            } else {
                captures_tried.push(m);
            }
        }
        self.tried[ply] = (quiets_tried, captures_tried);
        self.ordered[ply] = ordered;
        if excluded.is_some() {
            // Only the excluded move was legal: it alone holds the node.
            return if searched == 0 { alpha } else { best };
        }
        let best = best.min(tb_ceiling);
        if self.options.tt {
            let bound = Bound::of(best, original_alpha, beta);
            let eval = (!in_check).then_some(static_eval);
            self.tt.store(node_key, ply, depth, best, bound, best_move.as_ref().map_or(0, pack_move), eval);
        }
        best
    }

    /// Searches the child of the node at `ply` (already entered): the first move with the
    /// full window; later moves reduced by `reduction` first (re-searched at full depth if
    /// they beat alpha), then with a null window under PVS (re-searched with the full
    /// window if they land inside it).
    #[allow(clippy::too_many_arguments)]
    fn search_child(
        &mut self,
        child: &Chess,
        depth: i32,
        reduction: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        first: bool,
    ) -> i32 {
        if first {
            return -self.negamax(child, depth, -beta, -alpha, ply + 1, true);
        }
        if reduction > 0 {
            let score = -self.negamax(child, depth - reduction, -alpha - 1, -alpha, ply + 1, true);
            if score <= alpha || self.aborted {
                return score;
            }
        }
        if !self.options.pvs {
            return -self.negamax(child, depth, -beta, -alpha, ply + 1, true);
        }
        let probe = -self.negamax(child, depth, -alpha - 1, -alpha, ply + 1, true);
        if probe > alpha && probe < beta && !self.aborted {
            -self.negamax(child, depth, -beta, -alpha, ply + 1, true)
        } else {
            probe
        }
    }
}

/// The static evaluation `eval` replaced by a table score that bounds it from the right
/// side (a lower bound above it, an upper bound below it, or an exact score).
pub(super) fn sharpened(eval: i32, entry: Entry) -> i32 {
    if entry.score.abs() >= TB_WIN_BOUND {
        return eval;
    }
    match entry.bound {
        Bound::Exact => entry.score,
        Bound::Lower if entry.score > eval => entry.score,
        Bound::Upper if entry.score < eval => entry.score,
        _ => eval,
    }
}

/// Late move reduction for the `searched`-th move (0-based) at `depth`, in plies
/// (logarithmic in both, as in Ethereal and Stockfish), one less at PV nodes.
fn lmr_reduction(params: &Params, depth: i32, searched: usize, pv_node: bool) -> i32 {
    let base = params.lmr_base as f32 / 100.0;
    let divisor = params.lmr_divisor as f32 / 100.0;
    let r = base + (depth as f32).ln() * (searched as f32).ln() / divisor;
    (r as i32 - i32::from(pv_node)).max(0)
}

/// Quiet moves searched at `depth` before late move pruning skips the rest (half of it
/// when the static evaluation is not improving).
fn lmp_limit(params: &Params, depth: i32) -> usize {
    (params.lmp_base + depth * depth) as usize
}

/// Whether the side to move has a rook, a queen or two minor pieces: null-move pruning
/// assumes that passing is never better than the best move, which zugzwang breaks in pawn
/// endings and with a lone minor piece (`mate_in_two_is_found`: after 1. Ra6 Black's every
/// move loses to mate, but passing does not).
fn null_move_safe(position: &Chess) -> bool {
    let board = position.board();
    let own = board.by_color(position.turn());
    (own & (board.rooks() | board.queens())).any() || (own & (board.knights() | board.bishops())).count() >= 2
}
