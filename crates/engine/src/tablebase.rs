//! Syzygy endgame tables (`SyzygyPath`), read by `shakmaty-syzygy`: loading them from
//! directories, ranking the root moves by distance to zeroing (as Stockfish's
//! `Tablebases::root_probe`, with a win/draw/loss ranking when the DTZ tables are missing),
//! the win/draw/loss probes of the evaluation search, and the outcome that `deepchess
//! match` adjudicates with.
//!
//! Tables are read with plain file reads rather than memory maps: no `unsafe`, and a
//! file that cannot be read is a failed probe (the search goes on without it), never a
//! `SIGBUS`.

use std::sync::atomic::{AtomicU64, Ordering};

use shakmaty::{Chess, Color, Move, Position};
use shakmaty_syzygy::{Dtz, Material, Tablebase, Wdl};

use crate::position_history::{Game, key};
use crate::search::TB_WIN;

/// Separates the directories of `SyzygyPath` (`:` on Unix, `;` on Windows, as Stockfish).
pub const PATH_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// Rank of a certain win at the root, as Stockfish's `MAX_DTZ`: above any distance.
const MAX_DTZ: i32 = 1 << 18;

/// A position's outcome with best play, the side to move's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The side to move wins.
    Win,
    /// Drawn.
    Draw,
    /// The side to move loses.
    Loss,
}

impl Outcome {
    /// The outcome of `wdl`: a cursed win or a blessed loss (decided only beyond the
    /// fifty-move rule) is a draw under the rule (`rule50`) and decisive without it.
    pub fn of(wdl: Wdl, rule50: bool) -> Outcome {
        match wdl {
            Wdl::Win => Outcome::Win,
            Wdl::CursedWin if !rule50 => Outcome::Win,
            Wdl::Loss => Outcome::Loss,
            Wdl::BlessedLoss if !rule50 => Outcome::Loss,
            _ => Outcome::Draw,
        }
    }
}

/// The `Syzygy*` options that decide where the evaluation search probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Shallowest remaining depth at which positions with as many pieces as the limit are
    /// probed (`SyzygyProbeDepth`; fewer pieces are probed at any depth).
    pub depth: i32,
    /// Most pieces of a probed position (`SyzygyProbeLimit`).
    pub limit: usize,
    /// Cursed wins and blessed losses are draws (`Syzygy50MoveRule`).
    pub rule50: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions { depth: 1, limit: 7, rule50: true }
    }
}

/// The tables and the options of the evaluation search's probes.
#[derive(Clone, Copy, Debug)]
pub struct SearchProbe<'a> {
    /// The tables.
    pub tables: &'a Tablebases,
    /// Where to probe.
    pub options: ProbeOptions,
}

impl SearchProbe<'_> {
    /// The outcome of a node with `depth` plies left, as Stockfish probes: only right after
    /// a capture or pawn move (the halfmove clock at zero, so that the value is exact), no
    /// castling rights, at most the limit of pieces (the limit itself only at `depth` of at
    /// least the probe depth). `None` when not probed or no table answers.
    #[inline]
    pub fn outcome(&self, position: &Chess, depth: i32) -> Option<Outcome> {
        if position.halfmoves() != 0 || !position.castles().castling_rights().is_empty() {
            return None;
        }
        let limit = self.options.limit.min(self.tables.max_pieces());
        let count = pieces(position);
        if count > limit || (count == limit && depth < self.options.depth) {
            return None;
        }
        self.tables.wdl_after_zeroing(position).map(|wdl| Outcome::of(wdl, self.options.rule50))
    }
}

/// The tables of the `SyzygyPath` directories, with the number of successful probes.
pub struct Tablebases {
    tables: Tablebase<Chess>,
    /// Win/draw/loss tables (`.rtbw`) found.
    wdl_tables: usize,
    /// Distance-to-zeroing tables (`.rtbz`) found.
    dtz_tables: usize,
    /// The directories, as given.
    path: String,
    /// Successful probes since [`Tablebases::reset_hits`] (`tbhits`).
    hits: AtomicU64,
}

impl std::fmt::Debug for Tablebases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

impl Tablebases {
    /// The tables of the directories in `path`, separated by [`PATH_SEPARATOR`]. An error
    /// names the directory or file that could not be read, or says that none held a table.
    pub fn open(path: &str) -> Result<Tablebases, String> {
        let mut tables = Tablebase::new();
        let (mut wdl_tables, mut dtz_tables) = (0, 0);
        for directory in path.split(PATH_SEPARATOR).map(str::trim).filter(|d| !d.is_empty()) {
            let entries = std::fs::read_dir(directory)
                .map_err(|error| format!("cannot read the directory `{directory}`: {error}"))?;
            for entry in entries {
                let file = entry.map_err(|error| format!("cannot list `{directory}`: {error}"))?.path();
                let count = match file.extension().and_then(|e| e.to_str()) {
                    Some("rtbw") => &mut wdl_tables,
                    Some("rtbz") => &mut dtz_tables,
                    _ => continue,
                };
                match tables.add_file(&file) {
                    Ok(()) => *count += 1,
                    // A name that is not a table's (`notes.rtbw`) is skipped, as other files.
                    Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {}
                    Err(error) => return Err(format!("cannot use the table `{}`: {error}", file.display())),
                }
            }
        }
        if wdl_tables + dtz_tables == 0 {
            return Err(format!("no Syzygy tables (.rtbw, .rtbz) in `{path}`"));
        }
        Ok(Tablebases { tables, wdl_tables, dtz_tables, path: path.to_owned(), hits: AtomicU64::new(0) })
    }

    /// What was loaded, for the user: `Syzygy: 35 WDL and 35 DTZ tables (up to 4 pieces)
    /// from /path`.
    pub fn summary(&self) -> String {
        format!(
            "Syzygy: {} WDL and {} DTZ tables (up to {} pieces) from {}",
            self.wdl_tables,
            self.dtz_tables,
            self.max_pieces(),
            self.path
        )
    }

    /// Most pieces (kings included) of a loaded table.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// Successful probes since the last [`Tablebases::reset_hits`].
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Starts counting probes again (a new search).
    pub fn reset_hits(&self) {
        self.hits.store(0, Ordering::Relaxed);
    }

    /// Whether tables may hold `position`: at most `limit` pieces (and no more than the
    /// largest table), no castling rights.
    pub fn covers(&self, position: &Chess, limit: usize) -> bool {
        pieces(position) <= limit.min(self.max_pieces()) && position.castles().castling_rights().is_empty()
    }

    /// The win/draw/loss value of `position` as if it were reached by a capture or a pawn
    /// move (the halfmove clock is not read); `None` when no table answers.
    pub fn wdl_after_zeroing(&self, position: &Chess) -> Option<Wdl> {
        self.counted(self.tables.probe_wdl_after_zeroing(position).ok())
    }

    /// The distance to zeroing of `position` (plies to a capture or pawn move with best
    /// play, negative when losing, rounded in some tables); `None` when no table answers.
    fn dtz(&self, position: &Chess) -> Option<i32> {
        self.counted(self.tables.probe_dtz(position).ok()).map(|dtz| dtz.ignore_rounding().0)
    }

    fn counted<T>(&self, probe: Option<T>) -> Option<T> {
        if probe.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        probe
    }

    /// The outcome of the game at `position` under the fifty-move rule, the side to move's
    /// view, when the tables know it: the halfmove clock counts (a DTZ probe), or, with
    /// the clock at zero, a WDL probe suffices. `None` when the tables do not cover the
    /// position or cannot say (a missing table, a clock with a rounded distance).
    pub fn outcome(&self, position: &Chess) -> Option<Outcome> {
        if !self.covers(position, usize::MAX) {
            return None;
        }
        let wdl = if position.halfmoves() == 0 {
            self.wdl_after_zeroing(position)?
        } else {
            self.counted(self.tables.probe_wdl(position).ok())?.unambiguous()?
        };
        Some(Outcome::of(wdl, true))
    }

    /// The material of `position` with White first and `v` between the sides: `KRvK`.
    pub fn material(position: &Chess) -> String {
        Material::from_board(position.board()).to_string()
    }

    /// The root moves of `game` that keep its best outcome, ranked by distance to zeroing
    /// (Stockfish's `root_probe`): a win that the fifty-move rule cannot spoil ranks
    /// highest whatever its distance; past that, shorter wins and longer losses rank
    /// higher. Without DTZ tables the moves are ranked by win/draw/loss alone. `None` when
    /// the tables do not cover the root or a probe fails.
    pub fn rank_root(&self, game: &Game, limit: usize, rule50: bool) -> Option<RootRanking> {
        let root = game.position();
        if !self.covers(root, limit) {
            return None;
        }
        let (ranked, by_dtz) = match self.rank_by_dtz(game) {
            Some(ranked) => (ranked, true),
            None => (self.rank_by_wdl(root)?, false),
        };
        let best = ranked.iter().map(|r| r.rank).max()?;
        let mut kept: Vec<&RankedMove> = ranked.iter().filter(|r| r.rank == best).collect();
        // Shorter wins and longer losses first: ascending distance is both.
        kept.sort_by_key(|r| r.dtz);
        Some(RootRanking { moves: kept.iter().map(|r| r.m).collect(), score: rank_score(best, rule50), by_dtz })
    }

    /// Each root move with the distance to zeroing after it, counted from the root, and
    /// its rank; `None` when a DTZ probe fails.
    fn rank_by_dtz(&self, game: &Game) -> Option<Vec<RankedMove>> {
        let root = game.position();
        let clock = root.halfmoves() as i32;
        let history = game.history();
        let reversible = &history[history.len().saturating_sub(root.halfmoves() as usize)..];
        let repeated = reversible.contains(&key(root));
        let mut ranked = Vec::new();
        for m in root.legal_moves() {
            let mut child = root.clone();
            child.play_unchecked(m);
            let dtz = if child.is_checkmate() {
                1
            } else if child.halfmoves() == 0 {
                Dtz::before_zeroing(-self.wdl_after_zeroing(&child)?).0
            } else if child.is_stalemate() || threefold(reversible, root, &child) {
                0
            } else {
                let dtz = -self.dtz(&child)?;
                dtz + dtz.signum()
            };
            let rank = if dtz > 0 {
                if dtz + clock <= 99 && !repeated { MAX_DTZ } else { MAX_DTZ - (dtz + clock) }
            } else if dtz < 0 {
                if -dtz * 2 + clock < 100 { -MAX_DTZ } else { -MAX_DTZ + (-dtz + clock) }
            } else {
                0
            };
            ranked.push(RankedMove { m, dtz, rank });
        }
        Some(ranked)
    }

    /// Each root move ranked by the win/draw/loss value after it (as if after a zeroing
    /// move); `None` when a probe fails.
    fn rank_by_wdl(&self, root: &Chess) -> Option<Vec<RankedMove>> {
        let mut ranked = Vec::new();
        for m in root.legal_moves() {
            let mut child = root.clone();
            child.play_unchecked(m);
            let wdl = if child.is_checkmate() { Wdl::Win } else { -self.wdl_after_zeroing(&child)? };
            let rank = match wdl {
                Wdl::Loss => -MAX_DTZ,
                Wdl::BlessedLoss => -MAX_DTZ + 101,
                Wdl::Draw => 0,
                Wdl::CursedWin => MAX_DTZ - 101,
                Wdl::Win => MAX_DTZ,
            };
            ranked.push(RankedMove { m, dtz: Dtz::before_zeroing(wdl).0, rank });
        }
        Some(ranked)
    }
}

/// The root moves that the tables keep, and the root's score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootRanking {
    /// The moves that keep the best outcome, the shortest win (longest loss) first.
    pub moves: Vec<Move>,
    /// The root's score, the side to move's view, in the evaluation search's units:
    /// `±TB_WIN` for a win or loss, a few centipawns for a win or loss that the fifty-move
    /// rule spoils (with `Syzygy50MoveRule`), 0 for a draw.
    pub score: i32,
    /// Whether DTZ tables ranked the moves (else the win/draw/loss tables alone).
    pub by_dtz: bool,
}

/// A root move, the distance to zeroing after it (from the root) and its rank.
struct RankedMove {
    m: Move,
    dtz: i32,
    rank: i32,
}

/// The score of a root rank (Stockfish's `tbScore`): a win or loss at the fifty-move
/// rule's bound (every decisive rank without `rule50`) is `±TB_WIN`; below it, a
/// spoiled win scores 1 to 49 centipawns, growing as it nears a real win.
fn rank_score(rank: i32, rule50: bool) -> i32 {
    let bound = if rule50 { MAX_DTZ - 100 } else { 1 };
    if rank >= bound {
        TB_WIN
    } else if rank > 0 {
        (rank - (MAX_DTZ - 200)).max(3) * 100 / 200
    } else if rank == 0 {
        0
    } else if rank > -bound {
        (rank + (MAX_DTZ - 200)).min(-3) * 100 / 200
    } else {
        -TB_WIN
    }
}

/// Whether `child` (after a reversible move from `root`) occurs for the third time, given
/// the positions since the last zeroing move before `root`.
fn threefold(reversible: &[u64], root: &Chess, child: &Chess) -> bool {
    let child_key = key(child);
    let earlier = reversible.iter().chain(std::iter::once(&key(root))).filter(|k| **k == child_key).count();
    earlier >= 2
}

/// Pieces on the board, kings included.
fn pieces(position: &Chess) -> usize {
    position.board().occupied().count()
}

/// Which side wins `outcome` for the side to move `turn`, if anyone.
pub fn winner(outcome: Outcome, turn: Color) -> Option<Color> {
    match outcome {
        Outcome::Win => Some(turn),
        Outcome::Loss => Some(!turn),
        Outcome::Draw => None,
    }
}

/// Environment variable naming the directory of the Syzygy tables the tests use
/// (python-chess's 3- and 4-piece test tables, as `.ci/run` fetches them).
pub const TEST_PATH_VARIABLE: &str = "DEEPCHESS_SYZYGY_TEST_PATH";

/// The directory of the tests' Syzygy tables ([`TEST_PATH_VARIABLE`]), or `None` after
/// printing why a test that needs them skips: the one helper of every test that does.
pub fn test_path() -> Option<String> {
    match std::env::var(TEST_PATH_VARIABLE) {
        Ok(path) if std::path::Path::new(&path).is_dir() => Some(path),
        Ok(path) => {
            println!("skipped: {TEST_PATH_VARIABLE} `{path}` is not a directory");
            None
        }
        Err(_) => {
            println!("skipped: {TEST_PATH_VARIABLE} is not set (a directory of Syzygy tables, as .ci/run fetches)");
            None
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
