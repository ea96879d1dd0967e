//! The comparison search's quiescence: captures and queen promotions (every evasion in
//! check) after a stand-pat comparison, to [`MAX_QUIESCENCE_PLIES`] plies.

use shakmaty::{Chess, Position, Role};

use super::{MAX_QUIESCENCE_PLIES, Outcome, Searcher};
use crate::position_history::played;
use crate::search::ordering::mvv_lva;
use crate::search::see::loses_material;
use crate::search::set_pv;

impl Searcher<'_> {
    /// The outcome of `position` at `ply` (`qply` plies into quiescence) between `alpha`
    /// and `beta` for the side to move: the position itself (standing pat) unless a
    /// capture, a queen promotion or, in check, an evasion leads to a better one; with
    /// `selective`, captures that lose material by SEE are skipped.
    pub(super) fn quiescence(
        &mut self,
        position: &Chess,
        mut alpha: Option<Outcome>,
        beta: Option<Outcome>,
        ply: usize,
        qply: usize,
    ) -> Outcome {
        self.pv[ply].clear();
        self.visit(ply);
        if self.aborted {
            return Outcome::Draw;
        }
        let side = position.turn();
        // In check every evasion is searched and a mate is seen; otherwise the moves are
        // generated after standing pat, which ends most nodes first (a stalemate it ends
        // is judged as its position). Each path assigns the list once, so the move
        // generator writes it in place.
        let mut best = None;
        let mut moves;
        if position.is_check() {
            moves = position.legal_moves();
            if let Some(outcome) = self.terminal(position, &moves, ply) {
                return outcome;
            }
            if qply >= MAX_QUIESCENCE_PLIES {
                return self.leaf(position, ply);
            }
        } else {
            if self.drawn_by_rule(position) {
                return Outcome::Draw;
            }
            let stand = self.leaf(position, ply);
            if qply >= MAX_QUIESCENCE_PLIES || beta.as_ref().is_some_and(|b| !self.better(side, b, &stand)) {
                return stand;
            }
            if alpha.as_ref().is_none_or(|a| self.better(side, &stand, a)) {
                alpha = Some(stand.clone());
            }
            best = Some(stand);
            moves = position.legal_moves();
            if moves.is_empty() {
                return Outcome::Draw;
            }
            let selective = self.options.selective;
            moves.retain(|m| {
                (m.is_capture() || m.promotion() == Some(Role::Queen)) && !(selective && loses_material(position, m))
            });
            if self.options.ordering || selective {
                moves.sort_by_key(|m| -mvv_lva(m));
            }
        }
        for &m in &moves {
            let child = played(position, m);
            self.enter(position, Some(m), &child, ply);
            let outcome = self.quiescence(&child, beta.clone(), alpha.clone(), ply + 1, qply + 1);
            self.leave();
            if self.aborted {
                return Outcome::Draw;
            }
            if best.as_ref().is_none_or(|b| self.better(side, &outcome, b)) {
                best = Some(outcome.clone());
                if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                    alpha = Some(outcome);
                    set_pv(&mut self.pv, ply, m);
                    if let (Some(a), Some(b)) = (alpha.as_ref(), beta.as_ref())
                        && !self.better(side, b, a)
                    {
                        break;
                    }
                }
            }
        }
        best.expect("in check there are evasions, otherwise stand pat")
    }
}
