//! The searches: evaluation alpha-beta, comparison alpha-beta (DeepChess), MCTS and the
//! policy players, with what they share: limits, time control, scores and results.

pub mod compare;
pub mod eval;
pub mod history;
pub mod limits;
pub mod mcts;

pub mod ordering;
pub mod policy;
pub mod see;
pub mod time_manager;

pub mod tt;

use shakmaty::Move;
use shakmaty::uci::UciMove;

pub use limits::{Control, Limits, Ponder};

/// Score bound for a mate: a mate in `n` plies scores `MATE - n` for the winner.
pub const MATE: i32 = 30_000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// Deepest ply a search goes to.
pub const MAX_PLY: usize = 128;

/// A score for UCI: centipawns or mate in moves (negative: getting mated), side to move's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (negative when the side to move gets mated).
    Mate(i32),
}

impl Score {
    /// From an internal score (centipawns, or `±(MATE - plies)`).
    pub fn from_internal(score: i32) -> Score {
        if score > MATE_BOUND {
            Score::Mate((MATE - score + 1) / 2)
        } else if score < -MATE_BOUND {
            Score::Mate(-((MATE + score + 1) / 2))
        } else {
            Score::Cp(score)
        }
    }

    /// The UCI text: `cp N` or `mate N`.
    pub fn uci(self) -> String {
        match self {
            Score::Cp(cp) => format!("cp {cp}"),
            Score::Mate(n) => format!("mate {n}"),
        }
    }
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The move to play.
    pub best: Move,
    /// Score from the side to move's view.
    pub score: Score,
    /// Principal variation, starting with `best`.
    pub pv: Vec<Move>,
    /// Depth completed (plies for the alpha-beta searches, 0 for the policy players;
    /// for MCTS the depth of the principal variation).
    pub depth: u32,
    /// Nodes searched (positions visited; playouts for MCTS).
    pub nodes: u64,
}

/// Progress of a search, sent as UCI `info` lines.
#[derive(Clone, Debug)]
pub struct Info {
    /// Depth completed.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Score, side to move's view.
    pub score: Score,
    /// Nodes so far.
    pub nodes: u64,
    /// Milliseconds since the search started.
    pub time_ms: u64,
    /// Principal variation.
    pub pv: Vec<Move>,
}

impl Info {
    /// The UCI `info` line.
    pub fn uci(&self) -> String {
        let nps = self.nodes * 1000 / self.time_ms.max(1);
        let mut line = format!(
            "info depth {} seldepth {} score {} nodes {} nps {nps} time {}",
            self.depth,
            self.seldepth.max(self.depth),
            self.score.uci(),
            self.nodes,
            self.time_ms
        );
        if !self.pv.is_empty() {
            line.push_str(" pv");
            for m in &self.pv {
                line.push(' ');
                line.push_str(&uci_move(m));
            }
        }
        line
    }
}

/// A move in UCI notation (castling as the king's two-square move).
pub fn uci_move(m: &Move) -> String {
    UciMove::from_standard(*m).to_string()
}

/// Receives progress reports.
pub type Reporter<'a> = &'a mut dyn FnMut(&Info);
