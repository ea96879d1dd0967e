//! The tree shared by the search's threads (`Threads`): each thread runs whole playouts,
//! selecting and expanding with the tree locked (the playout's visit counted on its path
//! on the way down, a virtual loss that sends the other threads elsewhere until the
//! result comes back), doing the costly work unlocked (the leaf's evaluation, a node's
//! expansion, its predictor priors), then adding the result and descending for the next
//! playout under one lock. Helper threads run from the search's start to its end; the
//! main thread alone decides when to stop, reports and recycles the tree's memory, which
//! it does only while no playout is in flight (compaction renumbers the nodes).

use std::sync::atomic::{AtomicBool, Ordering};

use shakmaty::Chess;
use spin::mutex::{SpinMutex, SpinMutexGuard};

/// The tree's lock: held for a few microseconds at a time, so waiting spins (yielding
/// the core between tries) rather than sleeping.
type Mutex<T> = SpinMutex<T, spin::relax::Yield>;
/// The tree locked.
type MutexGuard<'a, T> = SpinMutexGuard<'a, T, spin::relax::Yield>;

use super::playout::{Outcome, Setting, Step, Worker, backup, descend, finish, go_on, prepare};
use super::tree::Tree;

/// The tree and what the threads tell each other about it.
pub struct State {
    /// The search tree.
    pub tree: Tree,
    /// Deepest node a playout of the search reached, in plies from the root.
    pub seldepth: usize,
    /// Playouts completed by all threads.
    pub playouts: u64,
    /// Playouts between their descent and their backup.
    in_flight: usize,
    /// Whether the helpers wait (the main thread is about to renumber the nodes).
    pause: bool,
}

/// The tree under its lock, the stop signal and the node budget.
pub struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    /// Playouts the helpers start at most (`go nodes`).
    node_budget: Option<u64>,
}

impl State {
    /// Playouts done or under way.
    pub fn started(&self) -> u64 {
        self.playouts + self.in_flight as u64
    }

    /// Lets helpers paused by [`Shared::quiesce`] go on.
    pub fn resume(&mut self) {
        self.pause = false;
    }

    /// Adds the result of `worker`'s playout in flight to the tree.
    pub fn backup(&mut self, worker: &mut Worker, outcome: Outcome) {
        backup(&mut self.tree, worker, outcome);
        self.in_flight -= 1;
        self.playouts += 1;
        self.seldepth = self.seldepth.max(worker.seldepth);
    }
}

impl Shared {
    /// Shares `tree` for a search whose helpers start no playout once `node_budget`
    /// playouts are done or under way.
    pub fn new(tree: Tree, node_budget: Option<u64>) -> Shared {
        let state = State { tree, seldepth: 0, playouts: 0, in_flight: 0, pause: false };
        Shared { state: Mutex::new(state), stop: AtomicBool::new(false), node_budget }
    }

    /// The state, locked.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Tells the helpers to stop after their playout in flight.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The tree, the playouts and the deepest ply reached, once every thread is done.
    pub fn into_parts(self) -> (Tree, u64, usize) {
        let state = self.state.into_inner();
        (state.tree, state.playouts, state.seldepth)
    }

    /// Pauses the helpers and waits until no playout is in flight, so that the tree's
    /// nodes can be renumbered; [`State::resume`] lets them go on.
    pub fn quiesce<'a>(&'a self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        state.pause = true;
        while state.in_flight > 0 {
            drop(state);
            std::thread::yield_now();
            state = self.lock();
        }
        state
    }

    /// Starts a playout from `root`: its descent under `state` (locked by the caller),
    /// then its leaf evaluated unlocked; returns the result for [`State::backup`].
    pub fn descend_and_evaluate<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        setting: &Setting<'_>,
        worker: &mut Worker,
        root: &Chess,
    ) -> Outcome {
        let mut position = root.clone();
        state.in_flight += 1;
        let mut step = descend(&mut state.tree, setting, worker, &mut position);
        let leaf = loop {
            let need = match step {
                Step::Leaf(leaf) => break leaf,
                Step::Need(need) => need,
            };
            // The path's visits are counted and its nodes stay where they are meanwhile
            // (nothing is renumbered while a playout is in flight).
            drop(state);
            let prepared = prepare(need, setting, worker, &position);
            state = self.lock();
            step = go_on(&mut state.tree, setting, worker, &mut position, Some(prepared));
        };
        drop(state);
        finish(setting, worker, &position, leaf)
    }

    /// A helper thread's search: playouts until the stop signal, waiting while paused;
    /// each playout's backup and the next one's descent under one lock.
    pub fn help(&self, setting: &Setting<'_>, worker: &mut Worker, root: &Chess) {
        let mut pending = None;
        loop {
            let mut state = self.lock();
            if let Some(result) = pending.take() {
                state.backup(worker, result);
            }
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            if state.pause || self.node_budget.is_some_and(|n| state.started() >= n) {
                drop(state);
                std::thread::yield_now();
                continue;
            }
            pending = Some(self.descend_and_evaluate(state, setting, worker, root));
        }
    }
}
