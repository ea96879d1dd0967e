//! One thread's search state and what every part of the search does to it: counting
//! nodes against the limits, entering a child (accumulator, key), the static evaluation.

use std::sync::atomic::{AtomicU64, Ordering};

use deepchess_core::FeatureBits;
use shakmaty::{Chess, Move};

use super::EvalOptions;
use crate::nn::{Accumulator, Networks, PredictorAccumulator, Scratch};
use crate::position_history::{Game, KeyStack, key, key_after, played};
use crate::search::history::{Histories, PieceTo, PreviousMoves};
use crate::search::ordering::OrderedMoves;
use crate::search::tt::Table;
use crate::search::{Control, MATE, MAX_PLY, TB_WIN_BOUND};
use crate::tablebase::SearchProbe;

/// Above any reachable score.
pub(super) const INFINITY: i32 = MATE + 1;
/// Nodes between two looks at the clock.
pub(super) const POLL_INTERVAL: u64 = 256;

/// One thread's search state.
pub(super) struct Searcher<'a> {
    pub(super) networks: &'a Networks,
    pub(super) options: EvalOptions,
    pub(super) tt: &'a Table,
    pub(super) control: &'a Control,
    total_nodes: &'a AtomicU64,
    pub(super) root: Chess,
    pub(super) search_moves: &'a [Move],
    /// The endgame tables probed in the search, if any.
    pub(super) tablebases: Option<SearchProbe<'a>>,
    pub(super) keys: KeyStack,
    pub(super) accumulators: Vec<Accumulator>,
    /// The move predictors' first layers at each ply, brought up to date lazily (only
    /// nodes that order by the predictors need them).
    pub(super) predictor_accumulators: Vec<PredictorAccumulator>,
    pub(super) scratch: Scratch,
    pub(super) killers: Vec<[Option<Move>; 2]>,
    pub(super) histories: &'a mut Histories,
    /// The move played at each ply (none for a null move), for continuation histories.
    pub(super) moved: Vec<Option<PieceTo>>,
    /// The static evaluation at each ply (`-INFINITY` in check), for `improving`.
    pub(super) evals: Vec<i32>,
    /// The move a singular-extension search leaves out at each ply.
    pub(super) singular_excluded: Vec<Option<Move>>,
    /// Quiet moves and captures searched so far at each ply, for history maluses.
    pub(super) tried: Vec<(Vec<Move>, Vec<Move>)>,
    /// The moves of each ply with their ordering keys (buffers reused node after node).
    pub(super) ordered: Vec<OrderedMoves>,
    /// Root moves left out of the current `MultiPV` line: the earlier lines' first moves.
    pub(super) excluded: Vec<Move>,
    pub(super) pv: Vec<Vec<Move>>,
    /// Nodes of this thread not yet added to the shared count.
    unflushed: u64,
    pub(super) seldepth: usize,
    pub(super) aborted: bool,
}

impl<'a> Searcher<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        networks: &'a Networks,
        game: &Game,
        options: EvalOptions,
        tt: &'a Table,
        histories: &'a mut Histories,
        control: &'a Control,
        total_nodes: &'a AtomicU64,
        search_moves: &'a [Move],
    ) -> Searcher<'a> {
        let root = game.position().clone();
        let features = FeatureBits::from_position(&root);
        let accumulator = networks.value.accumulator(&features);
        let predictor_accumulator = networks.movepred.accumulator(&features);
        Searcher {
            networks,
            options,
            tt,
            control,
            total_nodes,
            search_moves,
            tablebases: None,
            keys: KeyStack::new(game),
            accumulators: vec![accumulator; MAX_PLY + 1],
            predictor_accumulators: vec![predictor_accumulator; MAX_PLY + 1],
            scratch: Scratch::default(),
            killers: vec![[None; 2]; MAX_PLY + 1],
            histories,
            moved: vec![None; MAX_PLY + 1],
            evals: vec![-INFINITY; MAX_PLY + 1],
            tried: vec![(Vec::new(), Vec::new()); MAX_PLY + 1],
            ordered: (0..=MAX_PLY).map(|_| OrderedMoves::default()).collect(),
            singular_excluded: vec![None; MAX_PLY + 1],
            excluded: Vec::new(),
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY)).collect(),
            root,
            unflushed: 0,
            seldepth: 0,
            aborted: false,
        }
    }

    /// Every thread's nodes so far (this one's not yet added to the shared count too).
    pub(super) fn total(&self) -> u64 {
        self.total_nodes.load(Ordering::Relaxed) + self.unflushed
    }

    /// Adds this thread's nodes to the shared count.
    pub(super) fn flush(&mut self) {
        self.total_nodes.fetch_add(self.unflushed, Ordering::Relaxed);
        self.unflushed = 0;
    }

    /// Counts a node; sets `aborted` when a limit is reached.
    pub(super) fn visit(&mut self, ply: usize) {
        self.unflushed += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.unflushed >= POLL_INTERVAL {
            self.flush();
            if self.control.must_stop(self.total()) {
                self.aborted = true;
            }
        }
    }

    /// The key of `position`, the last one entered (pushed by [`Searcher::enter`] or, at
    /// the root, by iterative deepening).
    pub(super) fn node_key(&self, position: &Chess) -> u64 {
        let current = self.keys.current();
        debug_assert_eq!(current, Some(key(position)));
        current.unwrap_or_else(|| key(position))
    }

    /// Static evaluation at `ply` from the side to move's view, in centipawns.
    pub(super) fn evaluate(&self, ply: usize) -> i32 {
        self.networks.value.centipawns(&self.accumulators[ply]).clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// Plays `m` from the node at `ply`: the child position, its accumulator at `ply + 1`
    /// and its key on the key stack (popped by the caller).
    pub(super) fn make(&mut self, position: &Chess, m: Move, ply: usize) -> Chess {
        let child = played(position, m);
        self.enter_after(position, m, &child, ply);
        child
    }

    /// Enters `child`, the position after `m` from `position` (the node at `ply`).
    pub(super) fn enter_after(&mut self, position: &Chess, m: Move, child: &Chess, ply: usize) {
        let child_key = key_after(position, self.node_key(position), m, child);
        self.enter(child, child_key, ply);
    }

    /// Enters `child` with key `child_key` from the node at `ply`: its accumulator at
    /// `ply + 1` and its key on the key stack (popped by the caller).
    pub(super) fn enter(&mut self, child: &Chess, child_key: u64, ply: usize) {
        self.tt.prefetch(child_key);
        let features = FeatureBits::from_position(child);
        let (parents, children) = self.accumulators.split_at_mut(ply + 1);
        self.networks.value.update(&parents[ply], &features, &mut children[0]);
        self.keys.push(child_key);
    }

    /// The moves played one and two plies before the node at `ply`.
    pub(super) fn previous_moves(&self, ply: usize) -> PreviousMoves {
        [ply.checked_sub(1).and_then(|p| self.moved[p]), ply.checked_sub(2).and_then(|p| self.moved[p])]
    }
}
