//! Search limits from `go`, and the control a running search polls: stop flag, time
//! budget and node budget.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use shakmaty::{Color, Move};

/// The `ponderhit` of a `go ponder`, shared by the protocol (which sends it) and the
/// search (whose clock starts with it).
#[derive(Clone, Debug, Default)]
pub struct Ponder(Arc<OnceLock<Instant>>);

impl Ponder {
    /// The opponent played the expected move: the clock starts now (a second call
    /// changes nothing).
    pub fn hit(&self) {
        let _ = self.0.set(Instant::now());
    }

    /// When `ponderhit` came, if it has.
    pub fn hit_at(&self) -> Option<Instant> {
        self.0.get().copied()
    }
}

/// Moves to share the clock over when `go` gives no `movestogo` (sudden death, with or
/// without increment). 20 (30 left about 4 s of a 10 s + 0.1 s clock unused at the end of a
/// game).
pub const DEFAULT_MOVES_TO_GO: u32 = 20;

/// The limits of one `go` command.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Remaining time of White and Black.
    pub time: [Option<Duration>; 2],
    /// Increments of White and Black.
    pub increment: [Duration; 2],
    /// Moves to the next time control.
    pub moves_to_go: Option<u32>,
    /// Fixed time for this move.
    pub move_time: Option<Duration>,
    /// Maximum depth.
    pub depth: Option<u32>,
    /// Maximum nodes.
    pub nodes: Option<u64>,
    /// Search until `stop`.
    pub infinite: bool,
    /// Only these root moves (empty: all).
    pub search_moves: Vec<Move>,
    /// `go ponder`: the time limits apply only from the `ponderhit`, and the search runs
    /// without them until then.
    pub ponder: Option<Ponder>,
}

impl Limits {
    /// Limits of a fixed depth.
    pub fn depth(depth: u32) -> Limits {
        Limits { depth: Some(depth), ..Limits::default() }
    }

    /// Limits of a fixed time.
    pub fn move_time(time: Duration) -> Limits {
        Limits { move_time: Some(time), ..Limits::default() }
    }

    /// The time budget: a soft limit (do not start another iteration after it) and a
    /// hard limit (abort the search), for the side `turn`. A clock keeps `overhead` in hand
    /// for communication delays; a fixed `movetime` is used whole, as the GUI asked.
    pub fn budget(&self, turn: Color, overhead: Duration) -> (Option<Duration>, Option<Duration>) {
        const MIN: Duration = Duration::from_millis(1);
        if self.infinite {
            return (None, None);
        }
        if let Some(t) = self.move_time {
            let t = t.max(MIN);
            return (Some(t), Some(t));
        }
        let side = usize::from(turn == Color::Black);
        let Some(remaining) = self.time[side] else { return (None, None) };
        let available = remaining.saturating_sub(overhead).max(MIN);
        let moves = self.moves_to_go.unwrap_or(DEFAULT_MOVES_TO_GO).clamp(1, 30);
        let increment = self.increment[side];
        let soft = available / moves + increment * 3 / 4;
        // Never more than a quarter of the clock on one move (four fifths on the last
        // move before a time control).
        let cap = if moves == 1 { available * 4 / 5 } else { available / 4 };
        let hard = (soft * 2).min(cap).max(MIN);
        (Some(soft.min(hard)), Some(hard))
    }
}

/// What a running search polls to know when to stop.
#[derive(Clone, Debug)]
pub struct Control {
    stop: Arc<AtomicBool>,
    start: Instant,
    /// Under `go ponder`, the `ponderhit` from which the time limits count.
    ponder: Option<Ponder>,
    soft: Option<Duration>,
    hard: Option<Duration>,
    /// Whether the time limits come from a clock (`wtime`/`btime`), where the soft limit
    /// may be left early, rather than from a fixed `movetime`, which is used whole.
    clocked: bool,
    nodes: Option<u64>,
    soft_nodes: Option<u64>,
    /// The node count the search last reported to [`must_stop`](Self::must_stop), for the
    /// soft node limit (shared by clones).
    nodes_seen: Arc<AtomicU64>,
    /// Maximum depth, if any.
    pub depth: Option<u32>,
    /// Only these root moves (empty: all).
    pub search_moves: Vec<Move>,
    /// How many best lines to search and report (`MultiPV`; searches without it report
    /// one line).
    pub multipv: usize,
}

impl Control {
    /// A control for `limits` in a position with `turn` to move.
    pub fn new(limits: &Limits, turn: Color, overhead: Duration, stop: Arc<AtomicBool>) -> Control {
        let (soft, hard) = limits.budget(turn, overhead);
        Control {
            stop,
            start: Instant::now(),
            ponder: limits.ponder.clone(),
            soft,
            hard,
            clocked: soft.is_some() && limits.move_time.is_none(),
            nodes: limits.nodes,
            soft_nodes: None,
            nodes_seen: Arc::default(),
            depth: limits.depth,
            search_moves: limits.search_moves.clone(),
            multipv: 1,
        }
    }

    /// A control without limits but the stop flag (for fixed-depth searches).
    pub fn unlimited(depth: Option<u32>) -> Control {
        Control {
            stop: Arc::new(AtomicBool::new(false)),
            start: Instant::now(),
            ponder: None,
            soft: None,
            hard: None,
            clocked: false,
            nodes: None,
            soft_nodes: None,
            nodes_seen: Arc::default(),
            depth,
            search_moves: Vec::new(),
            multipv: 1,
        }
    }

    /// The control of a Lazy SMP helper of this search: the same maximum depth and node
    /// budget (checked against the count shared by every thread, so that no helper runs on
    /// after the budget is spent while the main thread unwinds), no clock, and a stop flag
    /// of its own, raised when the main thread ends.
    pub fn for_helpers(&self) -> Control {
        Control { nodes: self.nodes, ..Control::unlimited(self.depth) }
    }

    /// This control with a quarter more soft time under a clock (within the hard limit),
    /// as Stockfish does when the GUI allows pondering (`Ponder`): the time spent on the
    /// opponent's clock comes back with every ponderhit. A fixed `movetime` is unchanged.
    pub fn with_ponder_bonus(self) -> Control {
        self.with_soft_scale(1.25)
    }

    /// This control with its soft limit under a clock scaled by `factor` (within the hard
    /// limit); a fixed `movetime` is unchanged.
    pub fn with_soft_scale(mut self, factor: f64) -> Control {
        if let (Some(soft), Some(hard)) = (self.soft, self.hard)
            && self.clocked
        {
            self.soft = Some(soft.mul_f64(factor).min(hard));
        }
        self
    }

    /// This control searching the `lines` best lines (at least one).
    pub fn with_multipv(mut self, lines: usize) -> Control {
        self.multipv = lines.max(1);
        self
    }

    /// The time on the clock: since the start, or under `go ponder` since the
    /// `ponderhit` (`None` before it: no time limit applies yet).
    fn clock(&self) -> Option<Duration> {
        match &self.ponder {
            None => Some(self.start.elapsed()),
            Some(ponder) => ponder.hit_at().map(|hit| hit.elapsed()),
        }
    }

    /// Whether the clock has reached `limit`.
    fn past(&self, limit: Option<Duration>) -> bool {
        limit.is_some_and(|limit| self.clock().is_some_and(|clock| clock >= limit))
    }

    /// Whether the search must stop now: `stop` was sent, the hard time limit passed or
    /// the node budget is spent.
    pub fn must_stop(&self, nodes: u64) -> bool {
        if self.soft_nodes.is_some() {
            self.nodes_seen.store(nodes, Ordering::Relaxed);
        }
        self.stop.load(Ordering::Relaxed) || self.nodes.is_some_and(|n| nodes >= n) || self.past(self.hard)
    }

    /// Whether the hard time limit has passed.
    pub fn hard_expired(&self) -> bool {
        self.past(self.hard)
    }

    /// This control with a soft node limit: no iteration starts once the search has
    /// reported `nodes` nodes to [`must_stop`](Self::must_stop) (which it does every few
    /// hundred nodes); the node budget of the limits stays the hard limit.
    pub fn with_soft_nodes(mut self, nodes: u64) -> Control {
        self.soft_nodes = Some(nodes);
        self
    }

    /// The node budget.
    pub fn nodes(&self) -> Option<u64> {
        self.nodes
    }

    /// Under a clock (neither a fixed move time nor a ponder search before its
    /// `ponderhit`): the time spent so far and the time left before the soft limit.
    pub fn soft_clock(&self) -> Option<(Duration, Duration)> {
        let soft = self.soft?;
        if !self.clocked {
            return None;
        }
        let clock = self.clock()?;
        Some((clock, soft.saturating_sub(clock)))
    }

    /// Whether the soft limit has passed (or `stop` was sent).
    pub fn soft_expired(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.past(self.soft)
    }

    /// Whether an iterative-deepening search should start another iteration. Under a
    /// clock it stops after 60% of the soft limit, since the next iteration would
    /// likely take longer than all before it; with a fixed move time it uses all of it.
    pub fn another_iteration(&self) -> bool {
        if self.stop.load(Ordering::Relaxed)
            || self.soft_nodes.is_some_and(|n| self.nodes_seen.load(Ordering::Relaxed) >= n)
        {
            return false;
        }
        let Some(clock) = self.clock() else { return true };
        match self.soft {
            None => true,
            Some(soft) if !self.clocked => clock < soft,
            Some(soft) => clock < soft.mul_f64(0.6),
        }
    }

    /// Whether `stop` was sent.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Raises the stop flag (shared with everyone holding this control).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed)
    }

    /// Milliseconds since the search started.
    pub fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_share_the_node_budget_and_depth_but_not_the_clock_or_the_stop_flag() {
        let limits =
            Limits { nodes: Some(1_000), depth: Some(7), move_time: Some(Duration::ZERO), ..Limits::default() };
        let stop = Arc::new(AtomicBool::new(false));
        let main = Control::new(&limits, Color::White, Duration::ZERO, stop);
        let helpers = main.for_helpers();
        std::thread::sleep(Duration::from_millis(2));
        assert!(main.must_stop(0), "the main thread's move time (1 ms at least) is spent");
        assert_eq!((helpers.nodes(), helpers.depth), (Some(1_000), Some(7)));
        assert!(!helpers.must_stop(999), "no clock: the main thread's spent move time does not stop helpers");
        assert!(helpers.must_stop(1_000), "the shared count reaching the budget does");
        helpers.stop();
        assert!(helpers.stopped() && !main.stopped(), "each has its own stop flag");
    }

    #[test]
    fn budget_at_ten_seconds_plus_increment() {
        let limits = Limits {
            time: [Some(Duration::from_secs(10)), Some(Duration::from_secs(10))],
            increment: [Duration::from_millis(100); 2],
            ..Limits::default()
        };
        let (soft, hard) = limits.budget(Color::White, Duration::from_millis(50));
        let (soft, hard) = (soft.unwrap(), hard.unwrap());
        assert!(
            soft >= Duration::from_millis(300) && soft <= hard && hard <= Duration::from_secs(4),
            "{soft:?} {hard:?}"
        );
        // Sudden death shares the clock over DEFAULT_MOVES_TO_GO moves, plus ¾ of the increment.
        let expected = Duration::from_millis(9_950) / DEFAULT_MOVES_TO_GO + Duration::from_millis(75);
        assert_eq!((soft, hard), (expected, expected * 2));
        // A `movestogo` from the GUI takes its place.
        let forty = Limits { moves_to_go: Some(40), ..limits.clone() };
        assert_eq!(
            forty.budget(Color::White, Duration::from_millis(50)).0,
            Some(Duration::from_millis(9_950) / 30 + Duration::from_millis(75))
        );
        // Nearly flagging: the budget stays within the clock.
        let short = Limits { time: [Some(Duration::from_millis(120)), None], ..limits };
        let (soft, hard) = short.budget(Color::White, Duration::from_millis(50));
        assert!(hard.unwrap() <= Duration::from_millis(70) && soft.unwrap() <= hard.unwrap());
    }

    #[test]
    fn soft_node_limit_ends_iterations_not_the_search() {
        let limits = Limits { nodes: Some(4000), ..Limits::default() };
        let control = Control::new(&limits, Color::White, Duration::ZERO, Arc::default()).with_soft_nodes(1000);
        assert!(!control.must_stop(999) && control.another_iteration());
        assert!(!control.must_stop(1000) && !control.another_iteration());
        assert!(control.must_stop(4000));
        let plain = Control::new(&limits, Color::White, Duration::ZERO, Arc::default());
        assert!(!plain.must_stop(3999) && plain.another_iteration());
    }

    #[test]
    fn no_iteration_starts_after_sixty_percent_of_a_clocks_soft_limit() {
        let limits = Limits { time: [Some(Duration::from_millis(4_000)), None], ..Limits::default() };
        let control = Control::new(&limits, Color::White, Duration::ZERO, Arc::default());
        // The soft limit is 200 ms; 60% of it, 120 ms, has not passed at once.
        assert_eq!(control.soft, Some(Duration::from_millis(200)));
        assert!(control.another_iteration());
        std::thread::sleep(Duration::from_millis(130));
        assert!(!control.another_iteration());
    }

    #[test]
    fn movetime_is_used_whole_and_only_the_clock_keeps_the_overhead() {
        let overhead = Duration::from_millis(50);
        let fixed = Limits::move_time(Duration::from_millis(1000));
        let full = Some(Duration::from_millis(1000));
        assert_eq!(fixed.budget(Color::White, overhead), (full, full));
        assert_eq!(fixed.budget(Color::Black, Duration::from_secs(5)), (full, full));
        // On the last move before a time control the overhead still comes off the clock.
        let clock =
            Limits { time: [Some(Duration::from_millis(1000)), None], moves_to_go: Some(1), ..Limits::default() };
        let (_, hard) = clock.budget(Color::White, overhead);
        assert_eq!(hard, Some(Duration::from_millis(950) * 4 / 5));
    }

    #[test]
    fn pondering_has_no_time_limit_until_the_ponderhit() {
        let ponder = Ponder::default();
        let limits =
            Limits { move_time: Some(Duration::from_millis(150)), ponder: Some(ponder.clone()), ..Limits::default() };
        let control = Control::new(&limits, Color::White, Duration::ZERO, Arc::default());
        std::thread::sleep(Duration::from_millis(200));
        assert!(!control.must_stop(0) && !control.hard_expired() && !control.soft_expired());
        assert!(control.another_iteration());
        ponder.hit();
        // The clock starts at the ponderhit: 150 ms from now, not from the start.
        assert!(!control.must_stop(0) && control.another_iteration());
        std::thread::sleep(Duration::from_millis(200));
        assert!(control.must_stop(0) && control.hard_expired() && !control.another_iteration());
        assert!(control.elapsed_ms() >= 400, "the reported time still counts from the start");
    }

    #[test]
    fn a_clocks_soft_limit_scales_within_the_hard_limit_and_stays_a_clock() {
        let clock = Limits { time: [Some(Duration::from_secs(30)), None], ..Limits::default() };
        let plain = Control::new(&clock, Color::White, Duration::ZERO, Arc::default());
        let half_more = plain.clone().with_soft_scale(1.5);
        assert_eq!(half_more.soft, Some(Duration::from_millis(2250)));
        let to_hard = plain.clone().with_soft_scale(3.0);
        assert_eq!((to_hard.soft, to_hard.hard), (plain.hard, plain.hard), "never past the hard limit");
        let (spent, left) = to_hard.soft_clock().expect("a soft limit at the hard one is still a clock's");
        assert!(spent < Duration::from_secs(1) && left > Duration::from_secs(2));
        assert!(!to_hard.soft_expired() && to_hard.another_iteration());
        let fixed =
            Control::new(&Limits::move_time(Duration::from_secs(1)), Color::White, Duration::ZERO, Arc::default());
        let scaled = fixed.clone().with_soft_scale(1.5);
        assert_eq!((scaled.soft, scaled.soft_clock()), (fixed.soft, None), "a fixed move time is used as asked");
    }

    #[test]
    fn allowing_pondering_adds_a_quarter_to_the_soft_limit_of_a_clock() {
        let clock = Limits { time: [Some(Duration::from_secs(30)), None], ..Limits::default() };
        let plain = Control::new(&clock, Color::White, Duration::ZERO, Arc::default());
        let bonus = plain.clone().with_ponder_bonus();
        // 30 s over DEFAULT_MOVES_TO_GO (20) moves: 1.5 s, and a quarter more with pondering.
        assert_eq!((plain.soft, bonus.soft), (Some(Duration::from_millis(1500)), Some(Duration::from_millis(1875))));
        assert_eq!(bonus.hard, plain.hard);
        let fixed =
            Control::new(&Limits::move_time(Duration::from_secs(1)), Color::White, Duration::ZERO, Arc::default());
        assert_eq!(fixed.clone().with_ponder_bonus().soft, fixed.soft);
    }
}
