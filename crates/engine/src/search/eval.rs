//! Evaluation alpha-beta: negamax with the evaluation net, quiescence search (captures
//! and queen promotions; all evasions when in check), iterative deepening, a shared
//! transposition table (Lazy SMP over threads) and move ordering by the move predictors
//! (transposition-table move first). Principal variation search, null move, killer and
//! history heuristics, check extensions, aspiration windows, late move reductions and
//! pruning, futility pruning and SEE pruning in quiescence, histories (capture,
//! continuation, counter moves), reverse futility pruning, internal iterative reductions,
//! the table in quiescence and SEE pruning in the main search are switchable; mate
//! distance pruning is always on (it never changes a value). The defaults are chosen by
//! SPRT (docs/engine.md).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use deepchess_core::SparseFeatures;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

use super::history::{HISTORY_MAX, Histories, PieceTo, PreviousMoves, is_quiet};
use super::ordering::{Prediction, mvv_lva};
use super::see::{loses_material, piece_value, see};
use super::time_manager::TimeManager;
use super::tt::{Bound, Entry, Table, pack_move, unpack_move};
use super::{Control, Info, MATE, MAX_PLY, Report, Reporter, Score, SearchResult, TB_WIN, TB_WIN_BOUND};
use crate::nn::{Accumulator, Networks, PredictorAccumulator, Scratch};
use crate::position_history::{Game, KeyStack, key, key_after, key_after_null, played};
use crate::tablebase::{Outcome, SearchProbe};

/// Above any reachable score.
const INFINITY: i32 = MATE + 1;
/// Nodes between two looks at the clock.
const POLL_INTERVAL: u64 = 256;

/// Default of [`EvalOptions::predictor_depth`].
pub const DEFAULT_PREDICTOR_DEPTH: i32 = 4;
/// Deepest remaining depth at which futility pruning (and its reverse) applies.
const FUTILITY_DEPTH: i32 = 3;
/// Deepest remaining depth at which reverse futility pruning applies.
const RFP_DEPTH: i32 = 8;
/// Reverse futility margin per ply of remaining depth (one ply less when improving).
const RFP_MARGIN: i32 = 80;
/// Shallowest remaining depth at which a node without a table move is reduced by one ply.
const IIR_DEPTH: i32 = 4;
/// Deepest remaining depth at which the main search prunes moves by SEE.
const SEE_PRUNING_DEPTH: i32 = 6;
/// SEE threshold per ply for captures in the main search, in centipawns.
const SEE_CAPTURE_MARGIN: i32 = 90;
/// SEE threshold per squared ply for quiet moves in the main search, in centipawns.
const SEE_QUIET_MARGIN: i32 = 25;
/// History sum that changes a late move reduction by one ply.
const HISTORY_PER_PLY: i32 = 10_000;
/// Futility margin per ply of remaining depth, in centipawns.
const FUTILITY_MARGIN: i32 = 120;
/// Delta pruning margin in quiescence, in centipawns.
const DELTA_MARGIN: i32 = 200;
/// Deepest remaining depth at which late move pruning applies.
const LMP_DEPTH: i32 = 3;
/// Deepest remaining depth of late move pruning with `lmp_improving`.
const LMP_IMPROVING_DEPTH: i32 = 8;
/// Deepest remaining depth at which quiet moves are pruned by history.
const HISTORY_PRUNING_DEPTH: i32 = 4;
/// History (butterfly plus continuation) per ply of depth below which a quiet move is pruned.
const HISTORY_PRUNING_MARGIN: i32 = 1_500;
/// Shallowest remaining depth of singular extensions.
const SINGULAR_DEPTH: i32 = 5;
/// Singular margin below the table score, per ply of remaining depth, in centipawns.
const SINGULAR_MARGIN: i32 = 2;
/// Shallowest remaining depth of ProbCut.
const PROBCUT_DEPTH: i32 = 5;
/// ProbCut's margin over beta, in centipawns.
const PROBCUT_MARGIN: i32 = 200;
/// How much shallower ProbCut's verification search is.
const PROBCUT_REDUCTION: i32 = 4;
/// Ordering key of a capture that loses material by SEE, before its MVV-LVA and capture
/// history are added: below every quiet move (whose keys stay above −4).
const BAD_CAPTURE_KEY: f32 = -1_000.0;
/// Deepest remaining depth of razoring.
const RAZOR_DEPTH: i32 = 3;
/// Razoring margin: a constant plus this per squared ply of remaining depth.
const RAZOR_MARGIN: (i32, i32) = (250, 150);

/// Which techniques the evaluation search uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalOptions {
    /// Transposition table (exact, lower and upper bounds).
    pub tt: bool,
    /// Move ordering by the move predictors (MVV-LVA in quiescence).
    pub ordering: bool,
    /// Principal variation search (null-window searches after the first move).
    pub pvs: bool,
    /// Null-move pruning.
    pub null_move: bool,
    /// Killer moves and the history heuristic for quiet moves.
    pub killers: bool,
    /// One ply more when in check.
    pub check_extensions: bool,
    /// Aspiration windows around the previous iteration's score.
    pub aspiration: bool,
    /// Late move reductions: quiet moves late in the order searched shallower first.
    pub lmr: bool,
    /// Late move pruning: quiet moves late in the order skipped near the leaves.
    pub lmp: bool,
    /// Static exchange evaluation: losing captures skipped in quiescence.
    pub see: bool,
    /// Reverse futility and futility pruning near the leaves, delta pruning in quiescence.
    pub futility: bool,
    /// Capture history, continuation history, counter moves and maluses for the moves
    /// tried before a cutoff, in ordering and late move reductions (without: killers and
    /// a butterfly history as the tie-break).
    pub histories: bool,
    /// Reverse futility pruning up to depth 8, with a margin that shrinks when the static
    /// evaluation improves on the one two plies before (replaces the reverse futility
    /// pruning of `futility`).
    pub rfp: bool,
    /// Internal iterative reduction: one ply less at nodes without a table move.
    pub iir: bool,
    /// The transposition table in quiescence, and table bounds that sharpen the static
    /// evaluation used for pruning.
    pub qs_tt: bool,
    /// Captures and quiet moves that lose material by SEE pruned near the leaves.
    pub see_pruning: bool,
    /// Quiet moves with a bad history skipped near the leaves.
    pub history_pruning: bool,
    /// Razoring: near the leaves, a static evaluation far below alpha is checked by
    /// quiescence alone.
    pub razoring: bool,
    /// Late move pruning up to depth 8, with half the moves when the static evaluation is
    /// not improving (replaces the depth-3 limit of `lmp`).
    pub lmp_improving: bool,
    /// Late move reductions one ply deeper when the static evaluation is not improving.
    pub lmr_improving: bool,
    /// Null-move reduction growing with depth and with the static evaluation's margin over
    /// beta (3 + depth / 3 + min((eval − beta) / 200, 3), as Stockfish and Ethereal do)
    /// instead of 2 + depth / 4.
    pub null_move_dynamic: bool,
    /// Late move reductions from the third move at non-PV nodes (the fourth at PV nodes),
    /// of quiet checks and killer moves as well, one ply less for those two.
    pub lmr_wide: bool,
    /// Singular extensions: the table move one ply deeper when a shallower search without
    /// it fails low by a margin below its table score; a cut (multi-cut) when even that
    /// search reaches beta; one ply shallower when its table score is at least beta.
    pub singular: bool,
    /// The histories (and counter moves) kept from one search to the next of the same game
    /// (without: each search starts from empty tables).
    pub keep_histories: bool,
    /// Late move reductions of captures that lose material by SEE too (by capture history
    /// where quiet moves go by their history).
    pub lmr_captures: bool,
    /// ProbCut: at non-PV nodes of depth ≥ 5, a capture that a shallower search finds
    /// well above beta (by 200 cp) cuts the node.
    pub probcut: bool,
    /// Late move reductions one ply deeper at expected cut nodes (the null-window
    /// children that a reduced or zero-window search enters first, as Stockfish's
    /// `cutNode`).
    pub lmr_cut_node: bool,
    /// Late move reductions one ply deeper for quiet moves at nodes whose table move is a
    /// capture (Stockfish's `ttCapture`): the capture is likely the best move, the quiet
    /// moves after it seldom are.
    pub lmr_tt_capture: bool,
    /// The table move searched before the other moves are scored (without: every move is
    /// scored first, the table move ahead of them all); most nodes with a table move cut
    /// off on it and then never run the predictors and histories.
    pub staged_tt_move: bool,
    /// Table cutoffs at PV nodes too (without: only at null-window nodes, so that the
    /// principal variation is searched out rather than cut short by a table bound).
    pub pv_table_cuts: bool,
    /// Captures that lose material by SEE ordered after the quiet moves (without: every
    /// capture before them, by MVV-LVA).
    pub see_ordering: bool,
    /// The static evaluation corrected by the pawn-structure correction history (how far
    /// searches below the same pawn structure landed from it,
    /// [`CorrectionHistory`](super::correction::CorrectionHistory)).
    pub correction: bool,
    /// Under a clock, the soft limit scaled by the best move's stability, score drops and
    /// the best move's share of the root's nodes ([`TimeManager`]).
    pub time_management: bool,
    /// The move predictors order moves only at nodes with at least this remaining depth;
    /// above 1, captures and promotions also come first by MVV-LVA at every node. 1 = the
    /// predictors alone at every node.
    pub predictor_depth: i32,
}

impl EvalOptions {
    /// Plain negamax with quiescence and iterative deepening, nothing else.
    pub const PLAIN: EvalOptions = EvalOptions {
        tt: false,
        ordering: false,
        pvs: false,
        null_move: false,
        killers: false,
        check_extensions: false,
        aspiration: false,
        lmr: false,
        lmp: false,
        see: false,
        futility: false,
        histories: false,
        rfp: false,
        iir: false,
        qs_tt: false,
        see_pruning: false,
        history_pruning: false,
        razoring: false,
        lmp_improving: false,
        lmr_improving: false,
        null_move_dynamic: false,
        lmr_wide: false,
        keep_histories: false,
        singular: false,
        see_ordering: false,
        probcut: false,
        lmr_cut_node: false,
        lmr_tt_capture: false,
        staged_tt_move: false,
        // the table as it always cut (restricting it at PV nodes is the technique)
        pv_table_cuts: true,
        lmr_captures: false,
        correction: false,
        time_management: false,
        predictor_depth: 1,
    };
    /// The engine's defaults, as games chose them (docs/engine.md): everything but the
    /// switches that have not passed an SPRT, futility pruning (it cost STS points; reverse futility pruning comes from `rfp`)
    /// and time management (not yet tested at a time control).
    pub const DEFAULT: EvalOptions = EvalOptions {
        futility: false,
        history_pruning: false,
        probcut: false,
        lmr_cut_node: false,
        lmr_tt_capture: false,
        lmr_captures: false,
        correction: false,
        time_management: false,
        ..EvalOptions::FULL
    };
    /// Everything on.
    pub const FULL: EvalOptions = EvalOptions {
        tt: true,
        ordering: true,
        pvs: true,
        null_move: true,
        killers: true,
        check_extensions: true,
        aspiration: true,
        lmr: true,
        lmp: true,
        see: true,
        futility: true,
        histories: true,
        rfp: true,
        iir: true,
        qs_tt: true,
        see_pruning: true,
        history_pruning: true,
        razoring: true,
        lmp_improving: true,
        lmr_improving: true,
        null_move_dynamic: true,
        lmr_wide: true,
        keep_histories: true,
        singular: true,
        see_ordering: true,
        probcut: true,
        lmr_cut_node: true,
        lmr_tt_capture: true,
        staged_tt_move: true,
        pv_table_cuts: true,
        lmr_captures: true,
        correction: true,
        time_management: true,
        predictor_depth: DEFAULT_PREDICTOR_DEPTH,
    };
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions::FULL
    }
}

/// Searches `game` with `threads` threads sharing `tt` (Lazy SMP: helpers run their own
/// iterative deepening, skipping depths by [`helper_skips`] so that they run ahead of the
/// main thread, and fill the table for it).
/// The main thread's result counts unless a helper completed a deeper iteration with a
/// score at least as good. The node count and the node budget are those of all threads:
/// every thread stops once their shared count reaches it. The main thread learns into
/// `histories` (cleared first unless `options.keep_histories`); helpers start from a copy.
/// With `tablebases`, nodes right after a capture or pawn move that the tables cover score
/// their outcome. The game's position must have a legal move.
#[allow(clippy::too_many_arguments)]
pub fn search(
    networks: &Networks,
    game: &Game,
    options: EvalOptions,
    tt: &Table,
    histories: &mut Histories,
    control: &Control,
    threads: usize,
    tablebases: Option<SearchProbe<'_>>,
    reporter: Reporter<'_>,
) -> SearchResult {
    let search_moves = &control.search_moves;
    let total = AtomicU64::new(0);
    let helpers = control.for_helpers();
    if !options.keep_histories {
        histories.clear();
    }
    let (main, helper_results) = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads.max(1))
            .map(|index| {
                let (total, helpers) = (&total, &helpers);
                let mut own = Box::new(histories.clone());
                scope.spawn(move || {
                    let mut searcher =
                        Searcher::new(networks, game, options, tt, &mut own, helpers, total, search_moves);
                    searcher.tablebases = tablebases;
                    searcher.iterate(index, &mut |_| {})
                })
            })
            .collect();
        let mut main = Searcher::new(networks, game, options, tt, histories, control, &total, search_moves);
        main.tablebases = tablebases;
        let result = main.iterate(0, &mut *reporter);
        helpers.stop();
        let helper_results: Vec<SearchResult> =
            handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect();
        (result, helper_results)
    });
    let nodes = total.load(Ordering::Relaxed);
    let best_helper = helper_results
        .into_iter()
        .filter(|h| control.multipv <= 1 && outplays(h, &main))
        .max_by(|a, b| a.depth.cmp(&b.depth).then(a.score.cmp(&b.score)));
    match best_helper {
        Some(helper) => {
            let info =
                Info::new(helper.depth, helper.depth, helper.score, nodes, control.elapsed_ms(), helper.pv.clone());
            reporter(&Report::Info(info));
            SearchResult { nodes, ..helper }
        }
        None => SearchResult { nodes, ..main },
    }
}

/// Whether helper thread `helper` (1, 2, ...; the main thread is 0) leaves out iteration
/// `depth` at the game's ply `game_ply`: helpers search every other depth, or every
/// other pair or triple of depths, in phases that differ between helpers and from one move to
/// the next, so that they run one or more plies ahead of the main thread and fill the table
/// with deeper results (the pattern of Stockfish 8's Lazy SMP).
fn helper_skips(helper: usize, depth: i32, game_ply: u32) -> bool {
    const SIZE: [u32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
    const PHASE: [u32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
    if helper == 0 {
        return false;
    }
    let i = (helper - 1) % SIZE.len();
    (depth as u32 + game_ply + PHASE[i]) / SIZE[i] % 2 == 1
}

/// Whether a helper thread's result replaces the main thread's: it completed a deeper
/// iteration and scores at least as well.
fn outplays(helper: &SearchResult, main: &SearchResult) -> bool {
    helper.depth > main.depth && helper.score >= main.score
}

/// One thread's search state.
struct Searcher<'a> {
    networks: &'a Networks,
    options: EvalOptions,
    tt: &'a Table,
    control: &'a Control,
    total_nodes: &'a AtomicU64,
    root: Chess,
    search_moves: &'a [Move],
    /// The endgame tables probed in the search, if any.
    tablebases: Option<SearchProbe<'a>>,
    keys: KeyStack,
    accumulators: Vec<Accumulator>,
    /// The move predictors' first layers at each ply, brought up to date lazily (only
    /// nodes that order by the predictors need them).
    predictor_accumulators: Vec<PredictorAccumulator>,
    scratch: Scratch,
    killers: Vec<[Option<Move>; 2]>,
    histories: &'a mut Histories,
    /// The move played at each ply (none for a null move), for continuation histories.
    moved: Vec<Option<PieceTo>>,
    /// The static evaluation at each ply (`-INFINITY` in check), for `improving`.
    evals: Vec<i32>,
    /// The move a singular-extension search leaves out at each ply.
    singular_excluded: Vec<Option<Move>>,
    /// Quiet moves and captures searched so far at each ply, for history maluses.
    tried: Vec<(Vec<Move>, Vec<Move>)>,
    /// The moves of each ply with their ordering keys (buffers reused node after node).
    ordered: Vec<OrderedMoves>,
    /// Nodes spent below each root move over all iterations.
    root_nodes: Vec<(Move, u64)>,
    /// Root moves left out of the current `MultiPV` line: the earlier lines' first moves.
    excluded: Vec<Move>,
    pv: Vec<Vec<Move>>,
    nodes: u64,
    unflushed: u64,
    seldepth: usize,
    aborted: bool,
}

impl<'a> Searcher<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
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
        let features = SparseFeatures::from_position(&root);
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
            root_nodes: Vec::new(),
            excluded: Vec::new(),
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY)).collect(),
            root,
            nodes: 0,
            unflushed: 0,
            seldepth: 0,
            aborted: false,
        }
    }

    /// Iterative deepening until a limit (helper thread `helper` skips the depths
    /// [`helper_skips`] names; the main thread, 0, none); the last completed
    /// iteration's move (or, if none completed, the best found so far, or the first
    /// legal move). Under `MultiPV` each iteration searches the best line, then the best
    /// line without the first moves of the lines found so far, and so on (as Stockfish
    /// does), and reports the lines best first; the first line's move is played.
    fn iterate(&mut self, helper: usize, reporter: Reporter<'_>) -> SearchResult {
        let root = self.root.clone();
        self.keys.push(key(&root));
        let max_depth = self.control.depth.map_or(MAX_PLY as i32 - 1, |d| (d as i32).clamp(1, MAX_PLY as i32 - 1));
        let root_moves = root.legal_moves().into_iter().filter(|m| !self.skipped_at_root(m)).count();
        let lines = self.control.multipv.clamp(1, root_moves.max(1));
        let mut completed: Option<SearchResult> = None;
        let mut previous = vec![0; lines];
        let mut time_manager = TimeManager::default();
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
            let hashfull = self.options.tt.then(|| self.tt.hashfull());
            for (line, (score, pv)) in found.iter().enumerate() {
                let result = self.result(*score, pv.clone(), depth);
                let time_ms = self.control.elapsed_ms();
                let info =
                    Info::new(depth as u32, self.seldepth as u32, result.score, result.nodes, time_ms, result.pv);
                reporter(&Report::Info(Info { multipv: line as u32 + 1, hashfull, ..info }));
            }
            let (score, pv) = found.swap_remove(0);
            let result = self.result(score, pv, depth);
            let finished = found.len() + 1 == lines;
            let scale = if self.options.time_management {
                time_manager.update(result.best, score, self.root_node_share(&result.best))
            } else {
                1.0
            };
            completed = Some(result);
            if !finished || !self.control.another_iteration_scaled(scale) {
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

    /// Whether the root move `m` is left out: not among `go searchmoves`, or the first
    /// move of a line already found in this `MultiPV` iteration.
    fn skipped_at_root(&self, m: &Move) -> bool {
        (!self.search_moves.is_empty() && !self.search_moves.contains(m)) || self.excluded.contains(m)
    }

    /// The share of the root's nodes spent below `best`.
    fn root_node_share(&self, best: &Move) -> f64 {
        let total: u64 = self.root_nodes.iter().map(|(_, n)| n).sum();
        let best_nodes = self.root_nodes.iter().find(|(m, _)| m == best).map_or(0, |(_, n)| *n);
        best_nodes as f64 / total.max(1) as f64
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
        if !self.options.aspiration || depth < 4 || previous.abs() >= TB_WIN_BOUND {
            return self.negamax(root, depth, -INFINITY, INFINITY, 0, false, false);
        }
        let mut delta = 30;
        let (mut alpha, mut beta) = (previous - delta, previous + delta);
        loop {
            let score = self.negamax(root, depth, alpha, beta, 0, false, false);
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
            if delta > 1000 {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }

    fn total(&self) -> u64 {
        self.total_nodes.load(Ordering::Relaxed) + self.unflushed
    }

    fn flush(&mut self) {
        self.total_nodes.fetch_add(self.unflushed, Ordering::Relaxed);
        self.unflushed = 0;
    }

    /// Counts a node; sets `aborted` when a limit is reached.
    fn visit(&mut self, ply: usize) {
        self.nodes += 1;
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
    /// the root, by [`Searcher::iterate`]).
    fn node_key(&self, position: &Chess) -> u64 {
        let current = self.keys.current();
        debug_assert_eq!(current, Some(key(position)));
        current.unwrap_or_else(|| key(position))
    }

    /// Static evaluation at `ply` from the side to move's view, in centipawns.
    fn evaluate(&self, ply: usize) -> i32 {
        self.networks.value.centipawns(&self.accumulators[ply]).clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// `raw_eval`, the static evaluation of `position` (not in check), corrected by the
    /// correction history when it is on.
    fn corrected(&self, position: &Chess, raw_eval: i32) -> i32 {
        if !self.options.correction {
            return raw_eval;
        }
        let correction = self.histories.correction.correction(position.turn(), position.board());
        (raw_eval + correction).clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// Plays `m` from the node at `ply`: the child position, its accumulator at `ply + 1`
    /// and its key on the key stack (popped by the caller).
    fn make(&mut self, position: &Chess, m: Move, ply: usize) -> Chess {
        let child = played(position, m);
        self.enter_after(position, m, &child, ply);
        child
    }

    /// Enters `child`, the position after `m` from `position` (the node at `ply`).
    fn enter_after(&mut self, position: &Chess, m: Move, child: &Chess, ply: usize) {
        let child_key = key_after(position, self.node_key(position), m, child);
        self.enter(child, child_key, ply);
    }

    /// Enters `child` with key `child_key` from the node at `ply`: its accumulator at
    /// `ply + 1` and its key on the key stack (popped by the caller).
    fn enter(&mut self, child: &Chess, child_key: u64, ply: usize) {
        self.tt.prefetch(child_key);
        let features = SparseFeatures::from_position(child);
        let (parents, children) = self.accumulators.split_at_mut(ply + 1);
        self.networks.value.update(&parents[ply], &features, &mut children[0]);
        self.keys.push(child_key);
    }

    fn set_pv(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply].clear();
        head[ply].push(m);
        head[ply].extend_from_slice(&tail[0]);
    }

    /// The node's value (fail-soft) for the window `(alpha, beta)`; `cut_node` says a
    /// cutoff is expected (a null-window child entered by a reduced or zero-window search).
    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        position: &Chess,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        allow_null: bool,
        cut_node: bool,
    ) -> i32 {
        if depth <= 0 || ply >= MAX_PLY - 1 {
            return self.quiescence(position, alpha, beta, ply);
        }
        self.pv[ply].clear();
        self.visit(ply);
        if self.aborted {
            return 0;
        }
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
        let raw_eval = match tt_entry.and_then(|entry| entry.eval) {
            _ if in_check => -INFINITY,
            Some(cached) => cached,
            None => self.evaluate(ply),
        };
        let static_eval = if in_check { raw_eval } else { self.corrected(position, raw_eval) };
        self.evals[ply] = static_eval;
        let improving = !in_check && (ply < 2 || self.evals[ply - 2] == -INFINITY || static_eval > self.evals[ply - 2]);
        // The static evaluation sharpened by a table bound on the same side, for null move
        // and futility pruning. Reverse futility keeps the static evaluation: with a
        // shallower bound it would return that bound at every later iteration and never
        // see the quiet mate that a sacrifice threatens.
        let eval = match tt_entry {
            Some(entry) if self.options.qs_tt && !in_check => sharpened(static_eval, entry),
            _ => static_eval,
        };
        let rfp_depth = match (self.options.rfp, self.options.futility) {
            (true, _) => RFP_DEPTH,
            (false, true) => FUTILITY_DEPTH,
            (false, false) => 0,
        };
        let rfp_margin =
            if self.options.rfp { RFP_MARGIN * (depth - i32::from(improving)) } else { FUTILITY_MARGIN * depth };
        let prune = !pv_node && !in_check && excluded.is_none();
        if prune && depth <= rfp_depth && beta.abs() < TB_WIN_BOUND && static_eval - rfp_margin >= beta {
            return static_eval;
        }
        if self.options.razoring
            && prune
            && !in_check
            && depth <= RAZOR_DEPTH
            && alpha.abs() < TB_WIN_BOUND
            && static_eval + RAZOR_MARGIN.0 + RAZOR_MARGIN.1 * depth * depth < alpha
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
            && depth >= 3
            && beta.abs() < TB_WIN_BOUND
            && null_move_safe(position)
            && eval >= beta
            && let Ok(null) = position.clone().swap_turn()
        {
            let null_key = key_after_null(position, node_key, &null);
            self.enter(&null, null_key, ply);
            self.moved[ply] = None;
            let reduction = if self.options.null_move_dynamic {
                3 + depth / 3 + ((eval - beta) / 200).min(3)
            } else {
                2 + depth / 4
            };
            let score = -self.negamax(&null, depth - 1 - reduction, -beta, -beta + 1, ply + 1, false, !cut_node);
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            if score >= beta {
                return if score >= TB_WIN_BOUND { beta } else { score };
            }
        }
        if self.options.probcut && prune && depth >= PROBCUT_DEPTH && beta.abs() < TB_WIN_BOUND {
            let probcut_beta = beta + PROBCUT_MARGIN;
            // A table entry deep enough that says the node stays below the raised beta
            // makes the try pointless.
            let hopeless = tt_entry.is_some_and(|entry| {
                entry.depth > depth - PROBCUT_REDUCTION && entry.score < probcut_beta && entry.bound != Bound::Lower
            });
            if !hopeless && let Some(score) = self.probcut(position, depth, probcut_beta, static_eval, ply) {
                if self.options.tt {
                    let eval = Some(raw_eval);
                    self.tt.store(node_key, ply, depth - PROBCUT_REDUCTION + 1, score, Bound::Lower, 0, eval);
                }
                return score;
            }
            if self.aborted {
                return 0;
            }
        }
        if self.options.iir && depth >= IIR_DEPTH && tt_move.is_none() {
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
            && depth >= SINGULAR_DEPTH
            && let (Some(tt_m), Some(entry)) = (tt_move, tt_entry)
            && entry.depth >= depth - 3
            && entry.bound != Bound::Upper
            && entry.score.abs() < TB_WIN_BOUND
        {
            let singular_beta = entry.score - SINGULAR_MARGIN * depth;
            self.singular_excluded[ply] = Some(tt_m);
            let score = self.negamax(position, (depth - 1) / 2, singular_beta - 1, singular_beta, ply, false, cut_node);
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
        let futile = self.options.futility
            && !pv_node
            && !in_check
            && depth <= FUTILITY_DEPTH
            && eval + FUTILITY_MARGIN * depth <= alpha;
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
            if late_quiet && futile {
                continue;
            }
            if late_quiet && self.options.lmp && !pv_node && !in_check {
                let pruned = if self.options.lmp_improving {
                    depth <= LMP_IMPROVING_DEPTH && quiets_searched >= lmp_limit(depth) / (2 - usize::from(improving))
                } else {
                    depth <= LMP_DEPTH && quiets_searched >= lmp_limit(depth)
                };
                if pruned {
                    continue;
                }
            }
            if late_quiet
                && self.options.history_pruning
                && !pv_node
                && !in_check
                && depth <= HISTORY_PRUNING_DEPTH
                && self.histories.quiet(turn, &m, previous) < -HISTORY_PRUNING_MARGIN * depth
            {
                continue;
            }
            if self.options.see_pruning
                && !root
                && !in_check
                && searched > 0
                && best > -TB_WIN_BOUND
                && depth <= SEE_PRUNING_DEPTH
                && (late_quiet || !quiet)
            {
                let threshold = if quiet { -SEE_QUIET_MARGIN * depth * depth } else { -SEE_CAPTURE_MARGIN * depth };
                if see(position, &m) < threshold {
                    continue;
                }
            }
            self.enter_after(position, m, &child, ply);
            self.moved[ply] = Some(PieceTo::of(turn, &m));
            let new_depth = depth - 1 + extension + if Some(m) == tt_move { tt_extension } else { 0 };
            let killer = self.options.killers && self.killers[ply].contains(&Some(m));
            let late = searched >= 2 + usize::from(pv_node) && best > -TB_WIN_BOUND;
            let reducible = if self.options.lmr_wide { quiet && late } else { late_quiet && searched >= 3 && !killer };
            let reduction = if self.options.lmr
                && depth >= 3
                && !in_check
                && (reducible || (self.options.lmr_captures && late && loses_material(position, &m)))
            {
                let mut r = lmr_reduction(depth, searched, pv_node);
                if self.options.lmr_wide && (gives_check || killer) {
                    r -= 1;
                }
                if self.options.histories {
                    r -=
                        if quiet { self.histories.quiet(turn, &m, previous) } else { self.histories.capture(turn, &m) }
                            / HISTORY_PER_PLY;
                }
                if self.options.lmr_improving && !improving {
                    r += 1;
                }
                if self.options.lmr_cut_node && cut_node {
                    r += 1;
                }
                if self.options.lmr_tt_capture && quiet && tt_move.is_some_and(|t| t.is_capture()) {
                    r += 1;
                }
                r.clamp(0, new_depth - 1)
            } else {
                0
            };
            let nodes_before = self.nodes;
            let score = self.search_child(&child, new_depth, reduction, alpha, beta, ply, searched == 0, cut_node);
            self.keys.pop();
            if root {
                self.count_root_nodes(m, self.nodes - nodes_before);
            }
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
                    self.set_pv(ply, m);
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
        let bound = Bound::of(best, original_alpha, beta);
        // The correction learns from results on the side of the evaluation their bound
        // vouches for, of quiet best moves (a capture's gain is not the evaluation's error).
        if self.options.correction
            && !in_check
            && best_move.as_ref().is_none_or(is_quiet)
            && best.abs() < TB_WIN_BOUND
            && !(bound == Bound::Lower && best <= static_eval)
            && !(bound == Bound::Upper && best >= static_eval)
        {
            self.histories.correction.update(turn, position.board(), depth, best, raw_eval);
        }
        if self.options.tt {
            let eval = (!in_check).then_some(raw_eval);
            self.tt.store(node_key, ply, depth, best, bound, best_move.as_ref().map_or(0, pack_move), eval);
        }
        best
    }

    /// ProbCut: captures (and queen promotions) that win at least `probcut_beta −
    /// static_eval` by SEE, each checked by quiescence against `probcut_beta` and then by a
    /// search `PROBCUT_REDUCTION` plies shallower; the first that reaches `probcut_beta`
    /// gives the node's lower bound. `None` when none does (or the search was aborted).
    fn probcut(
        &mut self,
        position: &Chess,
        depth: i32,
        probcut_beta: i32,
        static_eval: i32,
        ply: usize,
    ) -> Option<i32> {
        let mut captures = position.capture_moves();
        captures.extend(
            position.promotion_moves().into_iter().filter(|m| m.promotion() == Some(Role::Queen) && !m.is_capture()),
        );
        captures.sort_by_key(|m| -mvv_lva(m));
        let turn = position.turn();
        for m in captures {
            if see(position, &m) < probcut_beta - static_eval {
                continue;
            }
            let child = self.make(position, m, ply);
            self.moved[ply] = Some(PieceTo::of(turn, &m));
            let mut score = -self.quiescence(&child, -probcut_beta, -probcut_beta + 1, ply + 1);
            if score >= probcut_beta && !self.aborted {
                score = -self.negamax(
                    &child,
                    depth - PROBCUT_REDUCTION,
                    -probcut_beta,
                    -probcut_beta + 1,
                    ply + 1,
                    true,
                    false,
                );
            }
            self.keys.pop();
            if self.aborted {
                return None;
            }
            if score >= probcut_beta {
                return Some(score);
            }
        }
        None
    }

    /// Searches the child of the node at `ply` (already entered): the first move with the
    /// full window; later moves reduced by `reduction` first (re-searched at full depth if
    /// they beat alpha), then with a null window under PVS (re-searched with the full
    /// window if they land inside it). A reduced search expects a cutoff in the child; the
    /// first and the full-depth null-window children of a non-PV node are of the kind that
    /// `cut_node` (this node's) is not, those of a PV node cut nodes after the first.
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
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        if first {
            return -self.negamax(child, depth, -beta, -alpha, ply + 1, true, !pv_node && !cut_node);
        }
        if reduction > 0 {
            let score = -self.negamax(child, depth - reduction, -alpha - 1, -alpha, ply + 1, true, true);
            if score <= alpha || self.aborted {
                return score;
            }
        }
        if !self.options.pvs {
            return -self.negamax(child, depth, -beta, -alpha, ply + 1, true, !pv_node && !cut_node);
        }
        let probe = -self.negamax(child, depth, -alpha - 1, -alpha, ply + 1, true, !cut_node);
        if probe > alpha && probe < beta && !self.aborted {
            -self.negamax(child, depth, -beta, -alpha, ply + 1, true, false)
        } else {
            probe
        }
    }

    fn quiescence(&mut self, position: &Chess, mut alpha: i32, beta: i32, ply: usize) -> i32 {
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
            let raw_eval = tt_entry.and_then(|entry| entry.eval).unwrap_or_else(|| self.evaluate(ply));
            static_eval = Some(raw_eval);
            best = self.corrected(position, raw_eval);
            if let Some(entry) = tt_entry {
                best = sharpened(best, entry);
            }
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
        let stand_pat = best;
        let mut best_move = None;
        for m in moves {
            if !in_check && self.options.futility {
                let gain = m.capture().map_or(0, piece_value)
                    + m.promotion().map_or(0, |r| piece_value(r) - piece_value(Role::Pawn));
                if stand_pat + gain + DELTA_MARGIN <= alpha {
                    continue;
                }
            }
            if !in_check && self.options.see && see(position, &m) < 0 {
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
                    self.set_pv(ply, m);
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

    /// The moves other than `skip` (the table move, searched before any move is scored)
    /// in search order: captures and promotions by MVV-LVA (unless `predictor_depth` is 1;
    /// with histories, capture history breaks the ties), then (with killers) the killer
    /// moves, then (with histories) the counter move, then by the move predictors' joint
    /// probability (at nodes of at least `predictor_depth`) plus history (butterfly, with
    /// histories also continuation); a stable order keeps the move generator's order among
    /// equals. The moves are picked lazily ([`OrderedMoves::next_best`]): most nodes cut
    /// off after one or two.
    #[allow(clippy::too_many_arguments)]
    fn order(
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
                k += if losing { BAD_CAPTURE_KEY } else { 100.0 } + mvv_lva(&m) as f32;
                if self.options.histories {
                    k += 2.0 * self.histories.capture(turn, &m) as f32 * history_scale;
                }
            }
            if self.options.killers && !m.is_capture() && self.killers[ply].contains(&Some(m)) {
                k += 10.0;
            }
            if Some(m) == counter {
                k += 9.0;
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

    fn count_root_nodes(&mut self, m: Move, nodes: u64) {
        match self.root_nodes.iter_mut().find(|(root_move, _)| *root_move == m) {
            Some((_, count)) => *count += nodes,
            None => self.root_nodes.push((m, nodes)),
        }
    }

    /// The moves played one and two plies before the node at `ply`.
    fn previous_moves(&self, ply: usize) -> PreviousMoves {
        [ply.checked_sub(1).and_then(|p| self.moved[p]), ply.checked_sub(2).and_then(|p| self.moved[p])]
    }

    /// Learns from a beta cutoff by `m`: killers, and the histories (a bonus for `m`, a
    /// malus for the moves tried before it).
    #[allow(clippy::too_many_arguments)]
    fn reward(
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

/// A node's moves with their ordering keys, handed out best first: a lazy selection that
/// keeps the order of equal keys, as a stable sort would.
#[derive(Default)]
struct OrderedMoves {
    keyed: Vec<(f32, Move)>,
    next: usize,
}

impl OrderedMoves {
    fn clear(&mut self) {
        self.keyed.clear();
        self.next = 0;
    }

    fn extend(&mut self, moves: impl Iterator<Item = (f32, Move)>) {
        self.keyed.extend(moves);
    }

    /// The remaining move with the highest key (the earliest among equals).
    fn next_best(&mut self) -> Option<Move> {
        let rest = self.keyed.get_mut(self.next..)?;
        let (mut best, mut best_key) = (0, f32::NEG_INFINITY);
        for (i, (k, _)) in rest.iter().enumerate() {
            if *k > best_key {
                (best, best_key) = (i, *k);
            }
        }
        let (_, m) = *rest.get(best)?;
        // Rotating instead of swapping keeps the order of the moves left behind.
        rest[..=best].rotate_right(1);
        self.next += 1;
        Some(m)
    }
}

/// The static evaluation `eval` replaced by a table score that bounds it from the right
/// side (a lower bound above it, an upper bound below it, or an exact score).
fn sharpened(eval: i32, entry: Entry) -> i32 {
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
fn lmr_reduction(depth: i32, searched: usize, pv_node: bool) -> i32 {
    let r = 0.75 + (depth as f32).ln() * (searched as f32).ln() / 2.25;
    (r as i32 - i32::from(pv_node)).max(0)
}

/// Quiet moves searched at `depth` before late move pruning skips the rest.
fn lmp_limit(depth: i32) -> usize {
    (3 + depth * depth) as usize
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

#[cfg(test)]
mod tests;
