//! Quiescence search: captures and queen promotions after standing pat (all evasions when
//! in check), ordered by MVV-LVA, losing captures skipped by SEE, with the table.

use shakmaty::{Chess, MoveList, Position, Role};

use super::negamax::sharpened;
use super::searcher::{INFINITY, Searcher};
use crate::search::ordering::mvv_lva;
use crate::search::see::see_ge;
use crate::search::tt::{Bound, pack_move};
use crate::search::{MATE, MAX_PLY, set_pv};

impl Searcher<'_> {
    /// The quiescence value (fail-soft) of the node at `ply` for the window `(alpha, beta)`.
    pub(super) fn quiescence(&mut self, position: &Chess, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        self.visit(ply);
        if self.aborted {
            return 0;
        }
        if position.is_insufficient_material() {
            return 0;
        }
        let in_check = position.is_check();
        // In check, every evasion is searched and a mate is seen; otherwise moves are
        // generated after standing pat, which cuts most nodes before (a stalemate it cuts
        // is scored as the static evaluation).
        let mut moves = if in_check { position.legal_moves() } else { MoveList::new() };
        if in_check && moves.is_empty() {
            return -MATE + ply as i32;
        }
        if position.halfmoves() >= 100 {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return self.evaluate(ply);
        }
        let use_tt = self.options.tt && self.options.qs_tt;
        let node_key = self.node_key(position);
        let mut tt_entry = None;
        if use_tt && let Some(entry) = self.tt.probe(node_key, ply) {
            if entry.cuts_off(alpha, beta) {
                return entry.score;
            }
            tt_entry = Some(entry);
        }
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut static_eval = None;
        if !in_check {
            let eval = tt_entry.and_then(|entry| entry.eval).unwrap_or_else(|| self.evaluate(ply));
            static_eval = Some(eval);
            best = tt_entry.map_or(eval, |entry| sharpened(eval, entry));
            if best >= beta {
                return best;
            }
            alpha = alpha.max(best);
            moves = position.legal_moves();
            if moves.is_empty() {
                return 0;
            }
            moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
            if self.options.ordering {
                moves.sort_by_key(|m| -mvv_lva(m));
            }
        }
        let mut best_move = None;
        for m in moves {
            if !in_check && self.options.see && !see_ge(position, &m, 0) {
                continue;
            }
            let child = self.make(position, m, ply);
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1);
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    set_pv(&mut self.pv, ply, m);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        // A quiescence result never replaces an entry of the main search.
        if use_tt && tt_entry.is_none_or(|entry| entry.depth <= 0) {
            let bound = Bound::of(best, original_alpha, beta);
            self.tt.store(node_key, ply, 0, best, bound, best_move.as_ref().map_or(0, pack_move), static_eval);
        }
        best
    }
}
