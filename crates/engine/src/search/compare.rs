//! Comparison alpha-beta (DeepChess, thesis chapter 5): alpha and beta are *positions*,
//! and wherever alpha-beta compares two values the comparator compares two positions,
//! from the side to move's view (its output swapped for Black).
//!
//! A line ends in an [`Outcome`]: a position (with its Pos2Vec code, computed once),
//! a mate, or a draw. Mates rank above or below every position (shorter mates first);
//! a draw against a position is decided by the evaluation net's sign, since the
//! comparator was never trained on draws. Quiescence search follows captures and queen
//! promotions (all evasions in check) with a stand-pat comparison. The optional
//! transposition table stores bound positions only (a lower bound after a cutoff, an
//! upper bound when nothing beat alpha), never exact entries: the comparator is not
//! transitive (thesis 5.7.1). The reported score is the evaluation net's score of the
//! principal variation's leaf.

use std::sync::Arc;

use deepchess_core::SparseFeatures;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

use super::ordering::{Prediction, mvv_lva};
use super::tt::{HASHFULL_SAMPLE, pack_move, unpack_move};
use super::{Control, Info, MATE, MAX_PLY, Report, Reporter, Score, SearchResult};
use crate::nn::{Code, Networks, Scratch};
use crate::position_history::{Game, KeyStack, is_rule_draw, key, played};

/// Quiescence plies at most below the nominal depth.
pub const MAX_QUIESCENCE_PLIES: usize = 6;

/// Which techniques the comparison search uses (the thesis's four variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompareOptions {
    /// Transposition table of bound positions.
    pub tt: bool,
    /// Move ordering by the move predictors (transposition-table move first).
    pub ordering: bool,
}

/// A position at the end of a line.
#[derive(Debug)]
pub struct Leaf {
    code: Code,
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

/// The comparison search's table: per position the depth, bound positions and best move.
pub struct CompareTable {
    slots: Vec<Option<TableEntry>>,
}

#[derive(Clone)]
struct TableEntry {
    key: u64,
    depth: i32,
    lower: Option<Outcome>,
    upper: Option<Outcome>,
    packed_move: u16,
}

impl std::fmt::Debug for CompareTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompareTable({} slots)", self.slots.len())
    }
}

impl CompareTable {
    /// A table of about `megabytes` MB (an entry with two leaves takes about 8 KB).
    ///
    /// # Panics
    /// When the memory cannot be allocated; [`CompareTable::try_new`] reports that instead.
    pub fn new(megabytes: usize) -> CompareTable {
        CompareTable::try_new(megabytes).expect("memory for the comparison table")
    }

    /// A table of about `megabytes` MB, or an error when the memory cannot be allocated.
    pub fn try_new(megabytes: usize) -> Result<CompareTable, std::collections::TryReserveError> {
        let len = megabytes.saturating_mul(1 << 20) / 8192 + 1;
        let mut slots = Vec::new();
        slots.try_reserve_exact(len)?;
        slots.resize(len, None);
        Ok(CompareTable { slots })
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// How full the table is, in permille of the first 1000 slots (UCI's `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = &self.slots[..self.slots.len().min(HASHFULL_SAMPLE)];
        (sample.iter().filter(|slot| slot.is_some()).count() * 1000 / sample.len()) as u32
    }

    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.slots.len() as u128) >> 64) as usize
    }

    fn get(&self, key: u64) -> Option<&TableEntry> {
        self.slots[self.index(key)].as_ref().filter(|e| e.key == key)
    }
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
    };
    let root = game.position().clone();
    searcher.keys.push(key(&root));
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
}

impl Searcher<'_> {
    /// One iteration at the root: every root move (the previous best first), keeping
    /// alpha as a position. `None` when aborted.
    fn root(&mut self, root: &Chess, moves: &mut [Move], depth: i32) -> Option<(Move, Outcome)> {
        let side = root.turn();
        let mut alpha: Option<Outcome> = None;
        let mut best: Option<(Move, Outcome)> = None;
        for &m in moves.iter() {
            let child = played(root, m);
            self.keys.push(key(&child));
            let outcome = self.alpha_beta(&child, depth - 1, None, alpha.clone(), 1);
            self.keys.pop();
            if self.aborted {
                return None;
            }
            if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                alpha = Some(outcome.clone());
                best = Some((m, outcome));
                self.set_pv(0, m);
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

    fn set_pv(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply].clear();
        head[ply].push(m);
        head[ply].extend_from_slice(&tail[0]);
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
            (Outcome::Position(x), Outcome::Position(y)) => {
                let p = self.networks.comparator.compare(&x.code, &y.code, &mut self.scratch);
                if side == Color::White { p > 0.5 } else { p < 0.5 }
            }
            (Outcome::Position(x), Outcome::Draw) => cp_for(x.cp, side) > 0,
            (Outcome::Draw, Outcome::Position(y)) => cp_for(y.cp, side) < 0,
            _ => rank(a) > rank(b),
        }
    }

    fn leaf(&mut self, position: &Chess) -> Outcome {
        let features = SparseFeatures::from_position(position);
        let code = self.networks.comparator.code(&features, &mut self.scratch);
        let cp = self.networks.value.evaluate_centipawns(&features);
        Outcome::Position(Arc::new(Leaf { code, cp }))
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
        (is_rule_draw(position) || self.keys.is_repetition(position.halfmoves())).then_some(Outcome::Draw)
    }

    fn visit(&mut self, ply: usize) {
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.control.must_stop(self.nodes) {
            self.aborted = true;
        }
    }

    /// Alpha-beta over positions; `alpha` is what the side to move is assured of,
    /// `beta` what the opponent is (both `None` for unbounded).
    fn alpha_beta(
        &mut self,
        position: &Chess,
        depth: i32,
        mut alpha: Option<Outcome>,
        mut beta: Option<Outcome>,
        ply: usize,
    ) -> Outcome {
        self.pv[ply].clear();
        let moves = position.legal_moves();
        if let Some(outcome) = self.terminal(position, &moves, ply) {
            return outcome;
        }
        if depth <= 0 || ply >= MAX_PLY - MAX_QUIESCENCE_PLIES - 1 {
            return self.quiescence(position, alpha, beta, ply, 0);
        }
        self.visit(ply);
        if self.aborted {
            return Outcome::Draw;
        }
        let side = position.turn();
        let node_key = key(position);
        let mut tt_move = None;
        if self.options.tt
            && let Some(entry) = self.table.get(node_key).cloned()
        {
            tt_move = unpack_move(position, entry.packed_move);
            if entry.depth >= depth {
                if let Some(lower) = entry.lower {
                    if beta.as_ref().is_some_and(|b| !self.better(side, b, &lower)) {
                        return lower;
                    }
                    if alpha.as_ref().is_none_or(|a| self.better(side, &lower, a)) {
                        alpha = Some(lower);
                    }
                }
                if let Some(upper) = entry.upper {
                    if alpha.as_ref().is_some_and(|a| !self.better(side, &upper, a)) {
                        return upper;
                    }
                    if beta.as_ref().is_none_or(|b| self.better(side, b, &upper)) {
                        beta = Some(upper);
                    }
                }
            }
        }
        let ordered = self.order(position, moves, tt_move);
        let alpha_before = alpha.clone();
        let mut best: Option<Outcome> = None;
        let mut best_move = None;
        let mut cutoff = false;
        for m in ordered {
            let child = played(position, m);
            self.keys.push(key(&child));
            let outcome = self.alpha_beta(&child, depth - 1, beta.clone(), alpha.clone(), ply + 1);
            self.keys.pop();
            if self.aborted {
                return Outcome::Draw;
            }
            if best.as_ref().is_none_or(|b| self.better(side, &outcome, b)) {
                best = Some(outcome.clone());
                best_move = Some(m);
                if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                    alpha = Some(outcome);
                    self.set_pv(ply, m);
                    if let (Some(a), Some(b)) = (alpha.as_ref(), beta.as_ref())
                        && !self.better(side, b, a)
                    {
                        cutoff = true;
                        break;
                    }
                }
            }
        }
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
            self.store(node_key, depth, bound, best_move);
        }
        best
    }

    fn store(
        &mut self,
        key: u64,
        depth: i32,
        bound: Option<(Option<Outcome>, Option<Outcome>)>,
        best_move: Option<Move>,
    ) {
        let index = self.table.index(key);
        let slot = &mut self.table.slots[index];
        let mut entry = match slot.take() {
            Some(e) if e.key == key && e.depth == depth => e,
            Some(e) if e.key == key && e.depth > depth => {
                *slot = Some(e);
                return;
            }
            _ => TableEntry { key, depth, lower: None, upper: None, packed_move: 0 },
        };
        if let Some((lower, upper)) = bound {
            entry.lower = lower.or(entry.lower);
            entry.upper = upper.or(entry.upper);
        }
        entry.packed_move = best_move.as_ref().map_or(entry.packed_move, pack_move);
        *slot = Some(entry);
    }

    fn quiescence(
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
        let mut moves = position.legal_moves();
        if let Some(outcome) = self.terminal(position, &moves, ply) {
            return outcome;
        }
        let side = position.turn();
        let in_check = position.is_check();
        let mut best = None;
        if !in_check || qply >= MAX_QUIESCENCE_PLIES {
            let stand = self.leaf(position);
            if qply >= MAX_QUIESCENCE_PLIES || beta.as_ref().is_some_and(|b| !self.better(side, b, &stand)) {
                return stand;
            }
            if alpha.as_ref().is_none_or(|a| self.better(side, &stand, a)) {
                alpha = Some(stand.clone());
            }
            best = Some(stand);
            moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
            if self.options.ordering {
                moves.sort_by_key(|m| -mvv_lva(m));
            }
        }
        for m in moves {
            let child = played(position, m);
            self.keys.push(key(&child));
            let outcome = self.quiescence(&child, beta.clone(), alpha.clone(), ply + 1, qply + 1);
            self.keys.pop();
            if self.aborted {
                return Outcome::Draw;
            }
            if best.as_ref().is_none_or(|b| self.better(side, &outcome, b)) {
                best = Some(outcome.clone());
                if alpha.as_ref().is_none_or(|a| self.better(side, &outcome, a)) {
                    alpha = Some(outcome);
                    self.set_pv(ply, m);
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

    /// TT move first (with the table), then by the predictors' joint probability (with
    /// ordering); otherwise the move generator's order.
    fn order(&mut self, position: &Chess, moves: MoveList, tt_move: Option<Move>) -> MoveList {
        if !self.options.ordering && tt_move.is_none() {
            return moves;
        }
        let mut prediction = self.options.ordering.then(|| {
            Prediction::new(&self.networks.movepred, &SparseFeatures::from_position(position), &mut self.scratch)
        });
        let mut keyed: Vec<(f32, Move)> = moves
            .into_iter()
            .map(|m| {
                let tt = if Some(m) == tt_move { 1e9 } else { 0.0 };
                let p = prediction.as_mut().map_or(0.0, |p| p.joint(position, &m, &mut self.scratch));
                (tt + p, m)
            })
            .collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        keyed.into_iter().map(|(_, m)| m).collect()
    }
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
mod tests {
    use super::*;
    use crate::search::uci_move;

    fn run(fen: &str, options: CompareOptions, depth: u32) -> SearchResult {
        let networks = Networks::random(6);
        let game = Game::from_uci(Some(fen), &[]).unwrap();
        let mut table = CompareTable::new(8);
        search(&networks, &game, options, &mut table, &Control::unlimited(Some(depth)), &mut |_| {})
    }

    #[test]
    fn all_four_variants_find_mate_in_one_and_two() {
        for tt in [false, true] {
            for ordering in [false, true] {
                let options = CompareOptions { tt, ordering };
                let result = run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", options, 1);
                assert_eq!((uci_move(&result.best), result.score), ("d1d8".to_string(), Score::Mate(1)), "{options:?}");
                let result = run("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", options, 3);
                assert_eq!((uci_move(&result.best), result.score), ("a1a6".to_string(), Score::Mate(2)), "{options:?}");
            }
        }
    }

    #[test]
    fn hashfull_reports_the_table_in_use() {
        let networks = Networks::random(6);
        let game = Game::default();
        let mut table = CompareTable::new(1);
        assert_eq!(table.hashfull(), 0);
        let mut reported = Vec::new();
        let options = CompareOptions { tt: true, ordering: false };
        let control = Control::unlimited(Some(2));
        search(&networks, &game, options, &mut table, &control, &mut |report| {
            if let Report::Info(info) = report {
                reported.push(info.hashfull);
            }
        });
        let full = table.hashfull();
        assert!(full > 0 && reported.last() == Some(&Some(full)), "{full} {reported:?}");
        table.clear();
        assert_eq!(table.hashfull(), 0);
        let options = CompareOptions { tt: false, ordering: false };
        search(&networks, &game, options, &mut table, &Control::unlimited(Some(1)), &mut |report| {
            assert!(matches!(report, Report::Info(Info { hashfull: None, .. })), "{report:?}");
        });
    }

    #[test]
    fn fifty_move_rule_is_a_draw() {
        let result = run("8/8/8/8/8/4k3/8/R3K3 w - - 99 80", CompareOptions { tt: true, ordering: true }, 2);
        assert_eq!(result.score, Score::Cp(0));
    }

    #[test]
    fn score_is_the_value_net_score_of_the_pv_leaf() {
        let networks = Networks::random(6);
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let game = Game::from_uci(Some(fen), &[]).unwrap();
        let mut table = CompareTable::new(8);
        let options = CompareOptions { tt: false, ordering: true };
        let result = search(&networks, &game, options, &mut table, &Control::unlimited(Some(2)), &mut |_| {});
        let mut leaf = game.position().clone();
        for m in &result.pv {
            assert!(leaf.is_legal(*m));
            leaf.play_unchecked(*m);
        }
        let cp = networks.value.evaluate_centipawns(&SparseFeatures::from_position(&leaf));
        assert_eq!(result.score, Score::Cp(cp_for(cp, Color::White)));
    }
}
