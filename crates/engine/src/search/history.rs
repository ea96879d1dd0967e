//! History tables of the evaluation search, learned during one search from the moves that
//! caused beta cutoffs: butterfly history (side, from, to), capture history (piece,
//! destination, captured piece), continuation history (this move's piece and destination
//! after the move one and two plies back) and counter moves (the quiet reply that last
//! refuted a move).
//!
//! Updates use gravity: an entry moves toward `±HISTORY_MAX` by the bonus times the share
//! of the distance still left, so entries stay bounded and recent results weigh more.
//! The move that cut off gets a bonus; the moves of the same kind tried before it a malus.

use shakmaty::{Color, Move, Role};

/// Bound of every history entry.
pub const HISTORY_MAX: i32 = 16_384;

/// Number of (piece, destination) pairs: two colours × six roles × 64 squares.
const PIECE_TO: usize = 12 * 64;

/// A moving piece (colour and role) and its destination square, the index of the
/// continuation and counter-move tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceTo(u16);

impl PieceTo {
    /// The piece and destination of `m`, played by `turn`.
    pub fn of(turn: Color, m: &Move) -> PieceTo {
        let piece = usize::from(turn == Color::Black) * 6 + role_index(m.role());
        PieceTo((piece * 64 + m.to() as usize) as u16)
    }

    fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The moves played one and two plies before a node (none at the root, after a null move
/// or beyond the root).
pub type PreviousMoves = [Option<PieceTo>; 2];

/// The history tables of one search thread.
#[derive(Clone)]
pub struct Histories {
    butterfly: Vec<i16>,
    capture: Vec<i16>,
    continuation: [Vec<i16>; 2],
    counter: Vec<Option<Move>>,
}

impl Default for Histories {
    fn default() -> Self {
        Histories {
            butterfly: vec![0; 2 * 64 * 64],
            capture: vec![0; PIECE_TO * 6],
            continuation: [vec![0; PIECE_TO * PIECE_TO], vec![0; PIECE_TO * PIECE_TO]],
            counter: vec![None; PIECE_TO],
        }
    }
}

impl Histories {
    /// Forgets everything (the tables keep their memory).
    pub fn clear(&mut self) {
        self.butterfly.fill(0);
        self.capture.fill(0);
        for table in &mut self.continuation {
            table.fill(0);
        }
        self.counter.fill(None);
    }

    /// Halves every history (counter moves stay): what earlier searches learnt still
    /// orders moves, but the next search's own results soon outweigh it, so that a search
    /// of an unrelated position is not steered by stale tables.
    pub fn decay(&mut self) {
        for table in [&mut self.butterfly, &mut self.capture].into_iter().chain(self.continuation.iter_mut()) {
            for entry in table.iter_mut() {
                *entry /= 2;
            }
        }
    }

    /// The butterfly history of a quiet move, in `-HISTORY_MAX..=HISTORY_MAX`.
    pub fn butterfly(&self, turn: Color, m: &Move) -> i32 {
        i32::from(self.butterfly[butterfly_index(turn, m)])
    }

    /// Butterfly plus continuation history of a quiet move after `previous`, in
    /// `-3 * HISTORY_MAX..=3 * HISTORY_MAX`.
    pub fn quiet(&self, turn: Color, m: &Move, previous: PreviousMoves) -> i32 {
        let to = PieceTo::of(turn, m);
        let mut score = self.butterfly(turn, m);
        for (table, prev) in self.continuation.iter().zip(previous) {
            if let Some(prev) = prev {
                score += i32::from(table[prev.index() * PIECE_TO + to.index()]);
            }
        }
        score
    }

    /// The capture history of a capture or promotion, in `-HISTORY_MAX..=HISTORY_MAX`.
    pub fn capture(&self, turn: Color, m: &Move) -> i32 {
        i32::from(self.capture[capture_index(turn, m)])
    }

    /// The quiet move that last refuted the previous move, if any.
    pub fn counter(&self, previous: PreviousMoves) -> Option<Move> {
        previous[0].and_then(|prev| self.counter[prev.index()])
    }

    /// Records a beta cutoff by `best` at remaining `depth`: a bonus for it, a malus for
    /// the quiet moves and captures tried before it (`quiets`, `captures`, without
    /// `best`), and `best` as the counter move when quiet. With `full` false only the
    /// butterfly bonus of a quiet `best` is kept (the plain history heuristic).
    #[allow(clippy::too_many_arguments)]
    pub fn reward(
        &mut self,
        turn: Color,
        best: &Move,
        quiets: &[Move],
        captures: &[Move],
        previous: PreviousMoves,
        depth: i32,
        full: bool,
    ) {
        let bonus = bonus(depth);
        let quiet = is_quiet(best);
        if !full {
            if quiet {
                gravity(&mut self.butterfly[butterfly_index(turn, best)], bonus);
            }
            return;
        }
        if quiet {
            self.reward_quiet(turn, best, previous, bonus);
            for m in quiets {
                self.reward_quiet(turn, m, previous, -bonus);
            }
            if let Some(prev) = previous[0] {
                self.counter[prev.index()] = Some(*best);
            }
        } else {
            gravity(&mut self.capture[capture_index(turn, best)], bonus);
        }
        for m in captures {
            gravity(&mut self.capture[capture_index(turn, m)], -bonus);
        }
    }

    fn reward_quiet(&mut self, turn: Color, m: &Move, previous: PreviousMoves, bonus: i32) {
        gravity(&mut self.butterfly[butterfly_index(turn, m)], bonus);
        let to = PieceTo::of(turn, m);
        for (table, prev) in self.continuation.iter_mut().zip(previous) {
            if let Some(prev) = prev {
                gravity(&mut table[prev.index() * PIECE_TO + to.index()], bonus);
            }
        }
    }
}

/// Whether `m` is a quiet move (neither a capture nor a promotion).
pub fn is_quiet(m: &Move) -> bool {
    !m.is_capture() && m.promotion().is_none()
}

/// The history bonus of a cutoff at remaining `depth`.
fn bonus(depth: i32) -> i32 {
    (150 * depth - 50).clamp(0, 1500)
}

/// Moves `entry` toward `±HISTORY_MAX` by `bonus`, scaled by the distance left.
fn gravity(entry: &mut i16, bonus: i32) {
    let value = i32::from(*entry);
    let updated = value + bonus - value * bonus.abs() / HISTORY_MAX;
    *entry = updated.clamp(-HISTORY_MAX, HISTORY_MAX) as i16;
}

fn role_index(role: Role) -> usize {
    role as usize - 1
}

fn butterfly_index(turn: Color, m: &Move) -> usize {
    let from = m.from().map_or(0, |square| square as usize);
    (usize::from(turn == Color::Black) * 64 + from) * 64 + m.to() as usize
}

fn capture_index(turn: Color, m: &Move) -> usize {
    PieceTo::of(turn, m).index() * 6 + m.capture().map_or(0, role_index)
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Position};

    use super::*;

    fn first_moves() -> (Move, Move, Move) {
        let moves = Chess::default().legal_moves();
        (moves[0], moves[1], moves[2])
    }

    #[test]
    fn gravity_keeps_entries_bounded_and_saturates() {
        let mut entry = 0i16;
        for _ in 0..10_000 {
            gravity(&mut entry, bonus(30));
        }
        assert!(i32::from(entry) <= HISTORY_MAX && i32::from(entry) > HISTORY_MAX * 9 / 10, "{entry}");
        for _ in 0..10_000 {
            gravity(&mut entry, -bonus(30));
        }
        assert!(i32::from(entry) >= -HISTORY_MAX && i32::from(entry) < -HISTORY_MAX * 9 / 10, "{entry}");
    }

    #[test]
    fn a_cutoff_rewards_the_best_move_and_punishes_the_quiets_before_it() {
        let (a, b, c) = first_moves();
        let mut histories = Histories::default();
        let previous = [Some(PieceTo::of(Color::Black, &c)), None];
        histories.reward(Color::White, &a, &[b], &[], previous, 4, true);
        assert!(histories.quiet(Color::White, &a, previous) > 2 * histories.butterfly(Color::White, &a) - 1);
        assert!(histories.butterfly(Color::White, &a) > 0);
        assert!(histories.butterfly(Color::White, &b) < 0);
        assert_eq!(histories.butterfly(Color::Black, &a), 0);
        assert_eq!(histories.counter(previous), Some(a));
        assert_eq!(histories.counter([None, None]), None);
        // The plain heuristic: the bonus only.
        let mut plain = Histories::default();
        plain.reward(Color::White, &a, &[b], &[], previous, 4, false);
        assert!(plain.butterfly(Color::White, &a) > 0);
        assert_eq!(plain.butterfly(Color::White, &b), 0);
        assert_eq!(plain.quiet(Color::White, &a, previous), plain.butterfly(Color::White, &a));
        assert_eq!(plain.counter(previous), None);
    }

    #[test]
    fn decay_halves_every_history_and_keeps_the_counter_moves() {
        let (a, b, c) = first_moves();
        let mut histories = Histories::default();
        let previous = [Some(PieceTo::of(Color::Black, &c)), None];
        let capture = Chess::default().legal_moves()[3];
        for _ in 0..3 {
            histories.reward(Color::White, &a, &[b], &[capture], previous, 6, true);
        }
        let before = (histories.butterfly(Color::White, &a), histories.quiet(Color::White, &b, previous));
        let capture_before = histories.capture(Color::White, &capture);
        assert!(before.0 > 0 && before.1 < 0 && capture_before < 0, "{before:?} {capture_before}");
        histories.decay();
        assert_eq!(histories.butterfly(Color::White, &a), before.0 / 2);
        assert_eq!(histories.capture(Color::White, &capture), capture_before / 2);
        // Each of the three tables summed in `quiet` is halved (rounding toward zero).
        assert!((histories.quiet(Color::White, &b, previous) - before.1 / 2).abs() <= 1);
        assert_eq!(histories.counter(previous), Some(a));
    }
}
