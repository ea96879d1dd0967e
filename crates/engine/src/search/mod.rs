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

pub mod tt;

use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move};

pub use limits::{Control, Limits, Ponder};

/// Score bound for a mate: a mate in `n` plies scores `MATE - n` for the winner.
pub const MATE: i32 = 30_000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// Deepest ply a search goes to.
pub const MAX_PLY: usize = 128;
/// Score of a tablebase win at the root: one found `n` plies deep scores `TB_WIN - n`,
/// between the evaluations and the mates.
pub const TB_WIN: i32 = MATE_BOUND - 1;
/// Scores at or beyond this are tablebase wins (or mates); evaluations stay within it.
pub const TB_WIN_BOUND: i32 = TB_WIN - MAX_PLY as i32;

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

    /// A key that orders scores from the side to move's view: any mate it delivers above
    /// every centipawn score (the shorter the better), any mate against it below (the
    /// longer the better).
    fn rank(self) -> i64 {
        const BEYOND: i64 = 1 << 40;
        match self {
            Score::Cp(cp) => i64::from(cp),
            Score::Mate(n) if n > 0 => BEYOND - i64::from(n),
            Score::Mate(n) => -BEYOND - i64::from(n),
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

impl Ord for Score {
    fn cmp(&self, other: &Score) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Score) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
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
    /// Which line this is when several are searched (`MultiPV`), from 1 (the best).
    pub multipv: u32,
    /// Score, side to move's view.
    pub score: Score,
    /// Win, draw and loss chances in permille (`UCI_ShowWDL`), from [`wdl`].
    pub wdl: Option<[u32; 3]>,
    /// Nodes so far.
    pub nodes: u64,
    /// Milliseconds since the search started.
    pub time_ms: u64,
    /// How full the search's table (or MCTS tree) is, in permille.
    pub hashfull: Option<u32>,
    /// Endgame table probes that answered (`tbhits`), when tables are loaded.
    pub tbhits: Option<u64>,
    /// Principal variation.
    pub pv: Vec<Move>,
}

impl Info {
    /// A report of the first line, without table fill, tablebase hits or win/draw/loss
    /// chances.
    pub fn new(depth: u32, seldepth: u32, score: Score, nodes: u64, time_ms: u64, pv: Vec<Move>) -> Info {
        Info { depth, seldepth, multipv: 1, score, wdl: None, nodes, time_ms, hashfull: None, tbhits: None, pv }
    }

    /// The UCI `info` line, castling written as the king's two-square move.
    pub fn uci(&self) -> String {
        self.to_uci(CastlingMode::Standard)
    }

    /// The UCI `info` line, castling written as `mode` wants it (`UCI_Chess960`: the king
    /// takes its rook).
    pub fn to_uci(&self, mode: CastlingMode) -> String {
        let nps = self.nodes * 1000 / self.time_ms.max(1);
        let mut line = format!(
            "info depth {} seldepth {} multipv {} score {}",
            self.depth,
            self.seldepth.max(self.depth),
            self.multipv.max(1),
            self.score.uci(),
        );
        if let Some([w, d, l]) = self.wdl {
            line.push_str(&format!(" wdl {w} {d} {l}"));
        }
        line.push_str(&format!(" nodes {} nps {nps}", self.nodes));
        if let Some(hashfull) = self.hashfull {
            line.push_str(&format!(" hashfull {hashfull}"));
        }
        if let Some(tbhits) = self.tbhits {
            line.push_str(&format!(" tbhits {tbhits}"));
        }
        line.push_str(&format!(" time {}", self.time_ms));
        if !self.pv.is_empty() {
            line.push_str(" pv");
            for m in &self.pv {
                line.push(' ');
                line.push_str(&uci_move_in(m, mode));
            }
        }
        line
    }
}

/// What a search reports while it runs.
#[derive(Clone, Debug)]
pub enum Report {
    /// Progress: one line of the search (one per line under `MultiPV`).
    Info(Info),
    /// A message for the user (`info string`).
    String(String),
}

impl Report {
    /// The UCI line, castling written as the king's two-square move.
    pub fn uci(&self) -> String {
        self.to_uci(CastlingMode::Standard)
    }

    /// The UCI line, castling written as `mode` wants it.
    pub fn to_uci(&self, mode: CastlingMode) -> String {
        match self {
            Report::Info(info) => info.to_uci(mode),
            Report::String(text) => format!("info string {text}"),
        }
    }
}

/// Win, draw and loss chances in permille (summing to 1000) for `score`, where the
/// expected score is `E = sigmoid(cp / cp_per_logit)` (the value net's training target):
/// `W = E²`, `D = 2·E·(1 − E)`, `L = (1 − E)²`, so that `W + D/2 = E` exactly and an
/// equal position is drawn half the time. A mate for the side to move is `1000 0 0`,
/// against it `0 0 1000`.
pub fn wdl(score: Score, cp_per_logit: f32) -> [u32; 3] {
    let expected = match score {
        Score::Mate(n) if n > 0 => return [1000, 0, 0],
        Score::Mate(_) => return [0, 0, 1000],
        Score::Cp(cp) => 1.0 / (1.0 + (-f64::from(cp) / f64::from(cp_per_logit)).exp()),
    };
    let win = (1000.0 * expected * expected).round() as i64;
    let loss = (1000.0 * (1.0 - expected) * (1.0 - expected)).round() as i64;
    let draw = 1000 - win - loss;
    // Rounding both ends up can overshoot by one.
    let win = if draw < 0 { win + draw } else { win };
    [win as u32, draw.max(0) as u32, loss as u32]
}

/// A move in UCI notation (castling as the king's two-square move).
pub fn uci_move(m: &Move) -> String {
    UciMove::from_standard(*m).to_string()
}

/// A move in UCI notation, castling as `mode` wants it: the king's two-square move
/// (standard) or the king taking its rook (Chess960).
pub fn uci_move_in(m: &Move, mode: CastlingMode) -> String {
    UciMove::from_move(*m, mode).to_string()
}

/// Receives progress reports.
pub type Reporter<'a> = &'a mut dyn FnMut(&Report);

/// Makes `m` followed by the line at `ply + 1` the principal variation at `ply` (the
/// alpha-beta searches keep one line per ply).
pub fn set_pv(pv: &mut [Vec<Move>], ply: usize, m: Move) {
    let (head, tail) = pv.split_at_mut(ply + 1);
    head[ply].clear();
    head[ply].push(m);
    head[ply].extend_from_slice(&tail[0]);
}

/// OpenBench's SPSA input of tuned numbers, one a line: `name, int, value, min, max, step,
/// 0.002` for each `((name, value), (min, max, step))`.
pub(crate) fn spsa_inputs<'a>(numbers: impl Iterator<Item = ((&'a str, i64), (i64, i64, i64))>) -> String {
    numbers
        .map(|((name, value), (min, max, step))| format!("{name}, int, {value}, {min}, {max}, {step}, 0.002\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Position, Square};

    use super::*;

    #[test]
    fn wdl_sums_to_a_thousand_and_keeps_the_expected_score() {
        let k = 113.0;
        assert_eq!(wdl(Score::Cp(0), k), [250, 500, 250]);
        assert_eq!(wdl(Score::Mate(3), k), [1000, 0, 0]);
        assert_eq!(wdl(Score::Mate(-2), k), [0, 0, 1000]);
        let mut previous = [0, 0, 1000];
        for cp in (-3000..=3000).step_by(7) {
            let [w, d, l] = wdl(Score::Cp(cp), k);
            assert_eq!(w + d + l, 1000, "{cp}");
            assert!(w >= previous[0] && l <= previous[2], "{cp}: monotonic");
            let expected = 1.0 / (1.0 + (-f64::from(cp) / f64::from(k)).exp());
            let score = (f64::from(w) + f64::from(d) / 2.0) / 1000.0;
            assert!((score - expected).abs() <= 0.001, "{cp}: {score} against {expected}");
            previous = [w, d, l];
        }
        assert_eq!(wdl(Score::Cp(i32::MAX), k), [1000, 0, 0]);
        // A mirrored score swaps wins and losses.
        assert_eq!(wdl(Score::Cp(150), k), {
            let [w, d, l] = wdl(Score::Cp(-150), k);
            [l, d, w]
        });
    }

    #[test]
    fn scores_order_from_the_side_to_moves_view() {
        let ordered = [
            Score::Mate(-1),
            Score::Mate(-7),
            Score::Cp(-30_000),
            Score::Cp(0),
            Score::Cp(30_000),
            Score::Mate(9),
            Score::Mate(1),
        ];
        for pair in ordered.windows(2) {
            assert!(pair[0] < pair[1], "{:?} < {:?}", pair[0], pair[1]);
        }
        // the order agrees with the internal scores it comes from
        for (a, b) in [(MATE - 3, MATE - 5), (500, -500), (-(MATE - 8), -(MATE - 2))] {
            assert!(Score::from_internal(a) > Score::from_internal(b), "{a} > {b}");
        }
    }

    #[test]
    fn info_lines_carry_multipv_wdl_hashfull_and_castling_in_either_notation() {
        let position: Chess = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let castle = position.legal_moves().into_iter().find(|m| m.is_castle() && m.to() == Square::H1).unwrap();
        let info = Info {
            multipv: 2,
            wdl: Some([600, 300, 100]),
            hashfull: Some(42),
            tbhits: Some(7),
            ..Info::new(5, 9, Score::Cp(37), 2000, 1000, vec![castle])
        };
        assert_eq!(
            info.uci(),
            "info depth 5 seldepth 9 multipv 2 score cp 37 wdl 600 300 100 nodes 2000 nps 2000 hashfull 42 tbhits 7 time 1000 pv e1g1"
        );
        assert!(info.to_uci(CastlingMode::Chess960).ends_with(" pv e1h1"));
        let plain = Info::new(1, 0, Score::Mate(-1), 10, 0, vec![]);
        assert_eq!(plain.uci(), "info depth 1 seldepth 1 multipv 1 score mate -1 nodes 10 nps 10000 time 0");
        assert_eq!(Report::String("hello".into()).uci(), "info string hello");
    }
}
