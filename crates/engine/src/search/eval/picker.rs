//! Move ordering: the keys of a node's moves (MVV-LVA, SEE, killers, counter move, the
//! move predictors, histories), handed out best first, and what a cutoff teaches the
//! killers and histories.

use std::borrow::Cow;

use shakmaty::{Chess, Color, Move, MoveList, Position};

use super::searcher::Searcher;
use crate::search::history::{HISTORY_MAX, PreviousMoves, is_quiet};
use crate::search::ordering::{OrderedMoves, Prediction, mvv_lva};
use crate::search::see::loses_material;

/// Ordering key of a capture that loses material by SEE, before its MVV-LVA and capture
/// history are added: below every quiet move (whose keys stay above −4).
const BAD_CAPTURE_KEY: f32 = -1_000.0;
/// Ordering key of a capture or promotion that does not lose material, before its
/// MVV-LVA and capture history are added: above every quiet move.
const GOOD_CAPTURE_KEY: f32 = 100.0;
/// Ordering key added for a killer move.
const KILLER_KEY: f32 = 10.0;
/// Ordering key added for the counter move.
const COUNTER_KEY: f32 = 9.0;

impl Searcher<'_> {
    /// The moves other than `skip` (the table move, searched before any move is scored)
    /// in search order: captures and promotions by MVV-LVA (unless `predictor_depth` is 1;
    /// with histories, capture history breaks the ties), then (with killers) the killer
    /// moves, then (with histories) the counter move, then by the move predictors' joint
    /// probability (at nodes of at least `predictor_depth`) plus history (butterfly, with
    /// histories also continuation); a stable order keeps the move generator's order among
    /// equals. The moves are picked lazily ([`OrderedMoves::next_best`]): most nodes cut
    /// off after one or two.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn order(
        &mut self,
        position: &Chess,
        moves: &MoveList,
        skip: Option<Move>,
        ply: usize,
        depth: i32,
        previous: PreviousMoves,
        ordered: &mut OrderedMoves,
    ) {
        let moves = moves.iter().filter(|&&m| Some(m) != skip);
        if !self.options.ordering && !self.options.killers && !self.options.histories {
            ordered.extend(moves.map(|&m| (0.0, m)));
            return;
        }
        let turn = position.turn();
        let predict = self.options.ordering && depth >= self.options.predictor_depth;
        if predict {
            self.refresh_predictions(ply);
        }
        let mut prediction = predict.then(|| {
            let accumulator = Cow::Borrowed(&self.predictor_accumulators[ply]);
            Prediction::with_accumulator(&self.networks.movepred, accumulator, &mut self.scratch)
        });
        let counter = if self.options.histories { self.histories.counter(previous) } else { None };
        let history_scale = 1.0 / HISTORY_MAX as f32;
        ordered.extend(moves.map(|&m| {
            let mut k = 0.0;
            if let Some(p) = prediction.as_mut() {
                k += p.joint(position, &m, &mut self.scratch);
            }
            if self.options.ordering && self.options.predictor_depth > 1 && !is_quiet(&m) {
                let losing = self.options.see_ordering && loses_material(position, &m);
                k += if losing { BAD_CAPTURE_KEY } else { GOOD_CAPTURE_KEY } + mvv_lva(&m) as f32;
                if self.options.histories {
                    k += 2.0 * self.histories.capture(turn, &m) as f32 * history_scale;
                }
            }
            if self.options.killers && !m.is_capture() && self.killers[ply].contains(&Some(m)) {
                k += KILLER_KEY;
            }
            if Some(m) == counter {
                k += COUNTER_KEY;
            }
            if is_quiet(&m) {
                if self.options.histories {
                    k += self.histories.quiet(turn, &m, previous) as f32 * history_scale;
                } else if self.options.killers {
                    k += self.histories.butterfly(turn, &m) as f32 * history_scale;
                }
            }
            (k, m)
        }));
    }

    /// Brings the predictors' accumulator at `ply` to the node's position: from the nearest
    /// ply above whose accumulator still holds its position on the current path (computed
    /// from scratch at the root when none does), one move's update per ply down to `ply`.
    fn refresh_predictions(&mut self, ply: usize) {
        let held = |p: usize| self.predictor_accumulators[p].features() == self.accumulators[p].features();
        let valid = match (0..=ply).rev().find(|&p| held(p)) {
            Some(p) => p,
            None => {
                self.predictor_accumulators[0] = self.networks.movepred.accumulator(self.accumulators[0].features());
                0
            }
        };
        for p in valid + 1..=ply {
            let (parents, children) = self.predictor_accumulators.split_at_mut(p);
            self.networks.movepred.update(&parents[p - 1], self.accumulators[p].features(), &mut children[0]);
        }
    }

    /// Learns from a beta cutoff by `m`: killers, and the histories (a bonus for `m`, a
    /// malus for the moves tried before it).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reward(
        &mut self,
        m: &Move,
        turn: Color,
        ply: usize,
        depth: i32,
        previous: PreviousMoves,
        quiets: &[Move],
        captures: &[Move],
    ) {
        if self.options.killers && !m.is_capture() {
            let killers = &mut self.killers[ply];
            if killers[0] != Some(*m) {
                killers[1] = killers[0];
                killers[0] = Some(*m);
            }
        }
        if self.options.killers || self.options.histories {
            self.histories.reward(turn, m, quiets, captures, previous, depth, self.options.histories);
        }
    }
}
