//! Comparison alpha-beta (DeepChess, thesis chapter 5): alpha and beta are *positions*,
//! and wherever alpha-beta compares two values the comparator compares two positions,
//! from the side to move's view (its output swapped for Black).
//!
//! A line ends in an [`Outcome`]: a position (with its code, computed once), a mate, or a
//! draw. Mates rank above or below every position (shorter mates first); a draw against a
//! position is decided by the evaluation net's sign. Quiescence search follows captures
//! and queen promotions (all evasions in check) with a stand-pat comparison. The optional
//! transposition table ([`CompareTable`]) stores bound positions only. The reported score
//! is the evaluation net's score of the principal variation's leaf.
//!
//! Two comparators: the thesis's (a Pos2Vec code per leaf, the head per comparison) and
//! the student ([`crate::nn::Student`]), whose codes are the evaluation net's accumulators,
//! kept per ply and updated per move, so that a leaf costs a projection of its
//! accumulator. With [`CompareOptions::selective`] the search adds the techniques that
//! need no numbers: killers and history ordering (instead of the predictors), null move
//! (the null line compared against the beta position), late move reductions, check
//! extensions and quiescence without captures that lose material (SEE); and one threshold
//! on the comparator's own confidence: near the leaves, a node whose position the student
//! finds better than beta by a margin of its logit per ply of remaining depth ends there
//! (reverse futility pruning, decided by the comparator instead of a score), and one it
//! finds worse than alpha by that margin skips its quiet moves (futility pruning). Quiet
//! moves that lose their piece by SEE are skipped near the leaves as well.

mod ordering;
mod quiescence;
mod table;

use std::sync::Arc;

use deepchess_core::FeatureBits;
use shakmaty::{Chess, Color, Move, MoveList, Position};

use super::history::is_quiet;
use super::ordering::OrderedMoves;
use super::see::see_ge;
use super::tt::unpack_move;
use super::{Control, Info, MATE, MAX_PLY, Report, Reporter, Score, SearchResult};
use crate::nn::{Accumulator, Code, Networks, Scratch, StudentCode};
use crate::position_history::{Game, KeyStack, is_rule_draw, key, key_after, key_after_null, played};
use ordering::{MoveOrder, by_predictors};
pub use table::CompareTable;

/// Deepest remaining depth at which a node whose own position the comparator finds better
/// than beta by [`CONFIDENT_MARGIN`] per ply returns it (reverse futility by confidence).
const CONFIDENT_DEPTH: i32 = 6;
/// The comparator's logit per ply of remaining depth (a logit of 1 is about 100 cp by the
/// student's training targets) that a position must beat beta by to end its node, or fall
/// below alpha by for its quiet moves to be skipped.
const CONFIDENT_MARGIN: f32 = 0.6;

/// Deepest remaining depth at which quiet moves that give no check are skipped (after the
/// first move) where the comparator finds the node's position worse than alpha by
/// [`CONFIDENT_MARGIN`] per ply (futility by confidence).
const FUTILE_DEPTH: i32 = 3;

/// Deepest remaining depth at which quiet moves that put their piece where the exchange
/// loses it (SEE below zero) and give no check are skipped after the first move.
const SEE_QUIET_DEPTH: i32 = 3;

/// Nodes between two looks at the clock and the `stop` flag.
const POLL_INTERVAL: u64 = 64;

/// Quiescence plies at most below the nominal depth.
pub const MAX_QUIESCENCE_PLIES: usize = 6;

/// Which techniques the comparison search uses (the thesis's four variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompareOptions {
    /// Transposition table of bound positions.
    pub tt: bool,
    /// Move ordering by the move predictors (transposition-table move first), where
    /// `selective` does not order by killers and history.
    pub ordering: bool,
    /// The student comparator instead of the thesis's.
    pub student: bool,
    /// Killers, history, null move, late move reductions, check extensions and SEE
    /// pruning in quiescence.
    pub selective: bool,
}

/// The code of a leaf, of the comparator in use.
#[derive(Debug)]
// a leaf lives behind an `Arc` already: boxing the larger code would cost a second allocation
#[allow(clippy::large_enum_variant)]
enum LeafCode {
    Thesis(Code),
    Student(StudentCode),
}

/// A position at the end of a line.
#[derive(Debug)]
pub struct Leaf {
    code: LeafCode,
    /// Evaluation-net score in centipawns, White's view.
    cp: i32,
}

/// What a line leads to.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A position judged by the networks.
    Position(Arc<Leaf>),
    /// Checkmate: `winner` mates `plies` plies from the root.
    Mate {
        /// The side that mates.
        winner: Color,
        /// Plies from the root.
        plies: usize,
    },
    /// A draw by rule, stalemate or repetition.
    Draw,
}

/// Searches `game` with the comparison alpha-beta. The position must have a legal move.
pub fn search(
    networks: &Networks,
    game: &Game,
    options: CompareOptions,
    table: &mut CompareTable,
    control: &Control,
    reporter: Reporter<'_>,
) -> SearchResult {
    let search_moves = &control.search_moves;
    let mut searcher = Searcher {
        networks,
        options,
        table,
        control,
        keys: KeyStack::new(game),
        scratch: Scratch::default(),
        pv: (0..=MAX_PLY).map(|_| Vec::new()).collect(),
        nodes: 0,
        seldepth: 0,
        aborted: false,
        accumulators: Vec::new(),
        order: MoveOrder::default(),
        ordered: (0..=MAX_PLY).map(|_| OrderedMoves::default()).collect(),
    };
    let root = game.position().clone();
    searcher.keys.push(key(&root));
    if options.student {
        let accumulator = networks.student.value().accumulator(&FeatureBits::from_position(&root));
        searcher.accumulators = vec![accumulator; MAX_PLY + 1];
    }
    let mut root_moves: Vec<Move> =
        root.legal_moves().into_iter().filter(|m| search_moves.is_empty() || search_moves.contains(m)).collect();
    if root_moves.is_empty() {
        root_moves = root.legal_moves().to_vec();
    }
    let max_depth = control.depth.map_or(MAX_PLY as i32 - MAX_QUIESCENCE_PLIES as i32 - 1, |d| d.max(1) as i32);
    let mut completed: Option<SearchResult> = None;
    for depth in 1..=max_depth {
        let Some((best, outcome)) = searcher.root(&root, &mut root_moves, depth) else {
            if completed.is_none() && !searcher.pv[0].is_empty() {
                completed = Some(searcher.result(&root, None, depth - 1));
            }
            break;
        };
        let result = searcher.result(&root, Some(&outcome), depth);
        debug_assert_eq!(result.best, best);
        let seldepth = searcher.seldepth as u32;
        let info =
            Info::new(depth as u32, seldepth, result.score, searcher.nodes, control.elapsed_ms(), result.pv.clone());
        let hashfull = options.tt.then(|| searcher.table.hashfull());
        reporter(&Report::Info(Info { hashfull, ..info }));
        completed = Some(result);
        if !control.another_iteration() {
            break;
        }
    }
    completed.unwrap_or_else(|| SearchResult {
        best: root_moves[0],
        score: Score::Cp(0),
        pv: vec![root_moves[0]],
        depth: 0,
        nodes: searcher.nodes,
    })
}

struct Searcher<'a> {
    networks: &'a Networks,
    options: CompareOptions,
    table: &'a mut CompareTable,
    control: &'a Control,
    keys: KeyStack,
    scratch: Scratch,
    pv: Vec<Vec<Move>>,
    nodes: u64,
    seldepth: usize,
    aborted: bool,
    /// The student's accumulators of the positions on the current line, by ply.
    accumulators: Vec<Accumulator>,
    order: MoveOrder,
    /// The moves of the node at each ply of the current line, handed out best first.
    ordered: Vec<OrderedMoves>,
}

impl Searcher<'_> {
    /// The key of the position entered last.
    fn current_key(&self) -> u64 {
        self.keys.current().expect("the root is entered first")
    }

    /// Enters `child`, the position after `m` (`None`: a null move) from `parent`, the
    /// node at `ply`.
    fn enter(&mut self, parent: &Chess, m: Option<Move>, child: &Chess, ply: usize) {
        let parent_key = self.current_key();
        self.keys.push(match m {
            Some(m) => key_after(parent, parent_key, m, child),
            None => key_after_null(parent, parent_key, child),
        });
        if self.options.student {
            let (parents, children) = self.accumulators.split_at_mut(ply + 1);
            let features = FeatureBits::from_position(child);
            self.networks.student.value().update(&parents[ply], &features, &mut children[0]);
        }
    }

    /// Leaves the child entered last.
    fn leave(&mut self) {
        self.keys.pop();
    }

    /// One iteration at the root: every root move (the previous best first), keeping
    /// alpha as a position. `None` when aborted.
    fn root(&mut self, root: &Chess, moves: &mut [Move], depth: i32) -> Option<(Move, Outcome)> {
        let side = root.turn();
        let mut alpha: Option<Outcome> = None;
        let mut best: Option<(Move, Outcome)> = None;
        for &m in moves.iter() {
            let child = played(root, m);
            self.enter(root, Some(m), &child, 0);
            let outcome = self.alpha_beta(&child, depth - 1, None, alpha.clone(), 1, true);
            self.leave();
            if self.aborted {
                return None;
            }
            if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                alpha = Some(outcome.clone());
                best = Some((m, outcome));
                super::set_pv(&mut self.pv, 0, m);
            }
        }
        let (best_move, outcome) = best.expect("root has moves");
        // The best move leads the next iteration.
        let index = moves.iter().position(|m| *m == best_move).expect("a root move");
        moves[..=index].rotate_right(1);
        Some((best_move, outcome))
    }

    fn result(&mut self, root: &Chess, outcome: Option<&Outcome>, depth: i32) -> SearchResult {
        let pv = self.pv[0].clone();
        let score = match outcome {
            Some(Outcome::Mate { winner, plies }) => {
                let internal = MATE - *plies as i32;
                Score::from_internal(if *winner == root.turn() { internal } else { -internal })
            }
            Some(Outcome::Draw) => Score::Cp(0),
            Some(Outcome::Position(leaf)) => Score::Cp(cp_for(leaf.cp, root.turn())),
            None => Score::Cp(0),
        };
        SearchResult { best: pv[0], score, pv, depth: depth.max(0) as u32, nodes: self.nodes }
    }

    /// Whether `a` is strictly better than `b` for `side`.
    fn better(&mut self, side: Color, a: &Outcome, b: &Outcome) -> bool {
        let rank = |o: &Outcome| match o {
            // Winning sooner ranks highest, getting mated sooner lowest.
            Outcome::Mate { winner, plies } if *winner == side => 2 * MATE - *plies as i32,
            Outcome::Mate { plies, .. } => -2 * MATE + *plies as i32,
            _ => 0,
        };
        match (a, b) {
            (Outcome::Position(x), Outcome::Position(y)) => match (&x.code, &y.code) {
                (LeafCode::Student(x), LeafCode::Student(y)) => {
                    let z = self.networks.student.logit(x, y);
                    if side == Color::White { z > 0.0 } else { z < 0.0 }
                }
                (LeafCode::Thesis(x), LeafCode::Thesis(y)) => {
                    let p = self.networks.comparator.compare(x, y, &mut self.scratch);
                    if side == Color::White { p > 0.5 } else { p < 0.5 }
                }
                _ => unreachable!("one search compares with one comparator"),
            },
            (Outcome::Position(x), Outcome::Draw) => cp_for(x.cp, side) > 0,
            (Outcome::Draw, Outcome::Position(y)) => cp_for(y.cp, side) < 0,
            _ => rank(a) > rank(b),
        }
    }

    /// The comparator's logit that the position `a` is better than the position `b` for
    /// `side` (the student's only; `None` for a mate, a draw or the thesis's comparator).
    fn confidence(&self, side: Color, a: &Outcome, b: &Outcome) -> Option<f32> {
        let (Outcome::Position(x), Outcome::Position(y)) = (a, b) else { return None };
        let (LeafCode::Student(x), LeafCode::Student(y)) = (&x.code, &y.code) else { return None };
        let z = self.networks.student.logit(x, y);
        Some(if side == Color::White { z } else { -z })
    }

    /// The position at `ply` as a leaf: its code and evaluation.
    fn leaf(&mut self, position: &Chess, ply: usize) -> Outcome {
        if self.options.student {
            let (student, accumulator) = (&self.networks.student, &self.accumulators[ply]);
            // The code is written where the leaf lives, not built and moved there.
            let mut leaf = Arc::new(Leaf { code: LeafCode::Student(StudentCode::default()), cp: 0 });
            let Some(Leaf { code: LeafCode::Student(code), cp }) = Arc::get_mut(&mut leaf) else {
                unreachable!("a new leaf has one owner and a student code")
            };
            student.write_code(accumulator, code);
            *cp = cp_for(student.value().centipawns(accumulator), position.turn());
            return Outcome::Position(leaf);
        }
        let features = FeatureBits::from_position(position);
        let code = self.networks.comparator.code(&features.to_sparse(), &mut self.scratch);
        let cp = self.networks.value.evaluate_centipawns(&features);
        Outcome::Position(Arc::new(Leaf { code: LeafCode::Thesis(code), cp }))
    }

    /// Outcome of a position that ends the game, if it does.
    fn terminal(&self, position: &Chess, moves: &MoveList, ply: usize) -> Option<Outcome> {
        if moves.is_empty() {
            return Some(if position.is_check() {
                Outcome::Mate { winner: !position.turn(), plies: ply }
            } else {
                Outcome::Draw
            });
        }
        self.drawn_by_rule(position).then_some(Outcome::Draw)
    }

    /// Whether the position entered last is drawn by the fifty-move rule, insufficient
    /// material or repetition (the caller has seen that it is not checkmate).
    fn drawn_by_rule(&self, position: &Chess) -> bool {
        is_rule_draw(position) || self.keys.is_repetition(position.halfmoves())
    }

    /// Counts a node; sets `aborted` when the node budget is spent (checked every node, so
    /// that a fixed-node search stops where it would at any speed) or, polled every
    /// [`POLL_INTERVAL`] nodes, when `stop` was sent or the time is up.
    fn visit(&mut self, ply: usize) {
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        let spent = self.control.nodes().is_some_and(|n| self.nodes >= n);
        if spent || (self.nodes.is_multiple_of(POLL_INTERVAL) && self.control.must_stop(self.nodes)) {
            self.aborted = true;
        }
    }

    /// Alpha-beta over positions; `alpha` is what the side to move is assured of,
    /// `beta` what the opponent is (both `None` for unbounded). `null` allows a null move.
    fn alpha_beta(
        &mut self,
        position: &Chess,
        depth: i32,
        mut alpha: Option<Outcome>,
        mut beta: Option<Outcome>,
        ply: usize,
        null: bool,
    ) -> Outcome {
        if depth <= 0 || ply >= MAX_PLY - MAX_QUIESCENCE_PLIES - 1 {
            // Quiescence sees mates, draws by rule and repetitions itself.
            return self.quiescence(position, alpha, beta, ply, 0);
        }
        self.pv[ply].clear();
        let moves = position.legal_moves();
        if let Some(outcome) = self.terminal(position, &moves, ply) {
            return outcome;
        }
        self.visit(ply);
        if self.aborted {
            return Outcome::Draw;
        }
        let side = position.turn();
        let node_key = self.current_key();
        let mut tt_move = None;
        let mut bounds = None;
        if self.options.tt
            && let Some(entry) = self.table.get(node_key)
        {
            tt_move = unpack_move(position, entry.packed_move);
            // The bound positions are taken only from an entry deep enough to use them.
            bounds = (entry.depth >= depth).then(|| (entry.lower.clone(), entry.upper.clone()));
        }
        if let Some((lower, upper)) = bounds {
            if let Some(lower) = lower {
                if beta.as_ref().is_some_and(|b| !self.better(side, b, &lower)) {
                    return lower;
                }
                if alpha.as_ref().is_none_or(|a| self.better(side, &lower, a)) {
                    alpha = Some(lower);
                }
            }
            if let Some(upper) = upper {
                if alpha.as_ref().is_some_and(|a| !self.better(side, &upper, a)) {
                    return upper;
                }
                if beta.as_ref().is_none_or(|b| self.better(side, b, &upper)) {
                    beta = Some(upper);
                }
            }
        }
        let in_check = position.is_check();
        // The node's own position, where a bound it can be compared with can prune.
        let comparable = |bound: &Option<Outcome>| matches!(bound, Some(Outcome::Position(_)));
        let stand = (self.options.selective
            && !in_check
            && depth <= CONFIDENT_DEPTH
            && (comparable(&beta) || (depth <= FUTILE_DEPTH && comparable(&alpha))))
        .then(|| self.leaf(position, ply));
        let margin = CONFIDENT_MARGIN * depth as f32;
        if let (Some(stand), Some(b)) = (&stand, &beta)
            && self.confidence(side, stand, b).is_some_and(|z| z > margin)
        {
            return stand.clone();
        }
        // Quiet moves cannot lift a node whose position is far below alpha.
        let futile = depth <= FUTILE_DEPTH
            && matches!((&stand, &alpha), (Some(stand), Some(a)) if self.confidence(side, stand, a).is_some_and(|z| z < -margin));
        if self.options.selective
            && null
            && !in_check
            && depth >= 3
            && let Some(b) = beta.clone()
            && has_pieces(position)
            && let Some(outcome) = self.null_move(position, depth, b, ply)
        {
            return outcome;
        }
        let mut ordered = std::mem::take(&mut self.ordered[ply]);
        self.order(position, &moves, ply, tt_move, &mut ordered);
        let alpha_before = alpha.clone();
        let mut best: Option<Outcome> = None;
        let mut best_move = None;
        let mut cutoff = false;
        let see_prunes = self.options.selective && !in_check && depth <= SEE_QUIET_DEPTH;
        let mut i = 0;
        while let Some(m) = ordered.next_best() {
            let child = played(position, m);
            if i > 0 && is_quiet(&m) && !child.is_check() && (futile || (see_prunes && !see_ge(position, &m, 0))) {
                continue;
            }
            self.enter(position, Some(m), &child, ply);
            let extension = i32::from(self.options.selective && child.is_check());
            let depth = depth - 1 + extension;
            let reduction = if self.options.selective
                && depth >= 2
                && i >= 3
                && is_quiet(&m)
                && !in_check
                && extension == 0
                && !self.order.is_killer(ply, &m)
            {
                1 + i32::from(i >= 8 && depth >= 4)
            } else {
                0
            };
            let mut outcome = self.alpha_beta(&child, depth - reduction, beta.clone(), alpha.clone(), ply + 1, true);
            if reduction > 0 && !self.aborted && alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                outcome = self.alpha_beta(&child, depth, beta.clone(), alpha.clone(), ply + 1, true);
            }
            self.leave();
            i += 1;
            if self.aborted {
                self.ordered[ply] = ordered;
                return Outcome::Draw;
            }
            if best.as_ref().is_none_or(|b| self.better(side, &outcome, b)) {
                best = Some(outcome.clone());
                best_move = Some(m);
                if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                    alpha = Some(outcome);
                    super::set_pv(&mut self.pv, ply, m);
                    if let (Some(a), Some(b)) = (alpha.as_ref(), beta.as_ref())
                        && !self.better(side, b, a)
                    {
                        cutoff = true;
                        if self.options.selective {
                            self.order.reward(side, ply, &m, depth + 1 - extension);
                        }
                        break;
                    }
                }
            }
        }
        self.ordered[ply] = ordered;
        let best = best.expect("a node with moves has a best outcome");
        if self.options.tt {
            let raised = match (&alpha_before, &alpha) {
                (None, Some(_)) => true,
                (Some(before), Some(now)) => !same_outcome(before, now),
                _ => false,
            };
            let bound = if cutoff {
                Some((Some(best.clone()), None))
            } else if !raised {
                Some((None, Some(best.clone())))
            } else {
                None
            };
            self.table.store(node_key, depth, bound, best_move);
        }
        best
    }

    /// The null move at a node with the `beta` position: the opponent moves twice, searched
    /// `depth − 1 − R` deep with both bounds at `beta`. Its outcome when it is not worse
    /// than `beta` for the side to move (a cutoff), `None` otherwise or for a mate.
    fn null_move(&mut self, position: &Chess, depth: i32, beta: Outcome, ply: usize) -> Option<Outcome> {
        let side = position.turn();
        let passed = position.clone().swap_turn().ok()?;
        let reduction = 2 + i32::from(depth >= 6);
        self.enter(position, None, &passed, ply);
        let outcome =
            self.alpha_beta(&passed, depth - 1 - reduction, Some(beta.clone()), Some(beta.clone()), ply + 1, false);
        self.leave();
        self.pv[ply].clear();
        let holds = !self.aborted && !matches!(outcome, Outcome::Mate { .. }) && !self.better(side, &beta, &outcome);
        holds.then_some(outcome)
    }

    /// Keys the moves into `ordered` (cleared first) for search order: killers and history
    /// (`selective`), the predictors (`ordering`), or the move generator's order; the table
    /// move first in each.
    fn order(
        &mut self,
        position: &Chess,
        moves: &MoveList,
        ply: usize,
        tt_move: Option<Move>,
        ordered: &mut OrderedMoves,
    ) {
        ordered.clear();
        if self.options.selective {
            self.order.order(position, moves, ply, tt_move, ordered);
        } else if self.options.ordering {
            by_predictors(&self.networks.movepred, position, moves, tt_move, &mut self.scratch, ordered);
        } else {
            ordered.extend(moves.iter().map(|&m| (f32::from(u8::from(Some(m) == tt_move)), m)));
        }
    }
}

/// Whether the side to move has a piece other than pawns and king (null move is unsafe in
/// pawn endings: zugzwang).
fn has_pieces(position: &Chess) -> bool {
    let board = position.board();
    let own = board.by_color(position.turn());
    !(own & !(board.pawns() | board.kings())).is_empty()
}

/// Centipawns for `side` from White's centipawns.
fn cp_for(cp: i32, side: Color) -> i32 {
    let cp = cp.clamp(-20_000, 20_000);
    if side == Color::White { cp } else { -cp }
}

/// Identity of outcomes: the same leaf object, the same mate or both draws.
fn same_outcome(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Position(x), Outcome::Position(y)) => Arc::ptr_eq(x, y),
        (Outcome::Mate { winner: w1, plies: p1 }, Outcome::Mate { winner: w2, plies: p2 }) => w1 == w2 && p1 == p2,
        (Outcome::Draw, Outcome::Draw) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
