//! The engine: networks, settings, the searches' tables and tree, and the dispatch of a
//! `go` to the selected search. The UCI options that change it are one table,
//! [`options::OPTIONS`].
//!
//! With Syzygy tables (`SyzygyPath`), a root position they cover is searched among the
//! moves that keep its best outcome ([`Tablebases::rank_root`]), whichever the search, and
//! reported with the tables' score; the evaluation search also probes its nodes (unless
//! DTZ tables ranked the root, as in Stockfish, since the root's moves are then decided).

pub mod options;
mod tuned_options;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use deepchess_core::arch::VALUE_CP_PER_LOGIT;
use shakmaty::{CastlingMode, Position};

use crate::nn::{NetworkError, Networks};
use crate::position_history::{Game, key, played};
use crate::search::compare::{self, CompareOptions, CompareTable};
use crate::search::eval::{self, EvalOptions};
use crate::search::history::Histories;
use crate::search::mcts::{Mcts, MctsOptions};
use crate::search::policy::{self, PolicyMode};
use crate::search::tt::{Table, unpack_move};
use crate::search::{Control, Info, Limits, Report, Reporter, Score, SearchResult, wdl};
use crate::tablebase::{ProbeOptions, SearchProbe, Tablebases};

/// Which search plays (the UCI option `Search`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SearchKind {
    /// Comparison alpha-beta (DeepChess), `Search compare`.
    CompareAlphaBeta,
    /// Alpha-beta on the evaluation net's scores, `Search eval`.
    EvalAlphaBeta,
    /// Monte Carlo tree search, `Search mcts`.
    Mcts,
    /// Policy player (no search), `Search policy`.
    Policy,
}

/// The settings the searches read; the options that change them are in [`options::OPTIONS`],
/// whose defaults are these (checked by a test).
#[derive(Clone, Debug, PartialEq)]
struct Settings {
    search: SearchKind,
    /// Switches of the alpha-beta searches: all of them drive the evaluation search;
    /// `tt` and `ordering` drive the comparison search too.
    eval: EvalOptions,
    policy: PolicyMode,
    /// The comparison search compares with the student (`Comparator`).
    compare_student: bool,
    /// The comparison search's selective techniques (`CompareSelective`).
    compare_selective: bool,
    /// Threads of the evaluation search.
    threads: usize,
    /// Time kept in hand per move for communication delays.
    move_overhead: Duration,
    /// Lines searched and reported (`MultiPV`).
    multipv: usize,
    /// Win/draw/loss chances in `info` (`UCI_ShowWDL`).
    show_wdl: bool,
    /// Chess960 castling in positions and moves (`UCI_Chess960`).
    chess960: bool,
    /// The GUI may send `go ponder` (`Ponder`).
    ponder: bool,
    /// Where the endgame tables are probed (`SyzygyProbeDepth`, `SyzygyProbeLimit`,
    /// `Syzygy50MoveRule`).
    tablebase: ProbeOptions,
}

/// Transposition table size in MB of a new engine.
const DEFAULT_HASH_MB: usize = 16;

/// The engine: networks, settings, the searches' tables and tree. Settings change only
/// through [`Engine::set_option`], which validates against the option table and keeps
/// tables and networks in step with it.
pub struct Engine {
    settings: Settings,
    networks: Networks,
    /// The evaluation search's table (`Hash` MB).
    tt: Table,
    /// The evaluation search's histories, one per thread (`Threads`, allocated when it is
    /// set), kept (halved) between the moves of a game when the `KeepHistories` option says so.
    histories: Vec<Histories>,
    /// The key of the position the evaluation search searched last: the histories are
    /// kept only for a search of that position or of one that the game reached from it.
    last_root: Option<u64>,
    /// The comparison search's table (`Hash` MB).
    compare_table: CompareTable,
    /// The MCTS player, with its settings and the tree kept between moves.
    mcts: Mcts,
    /// The Syzygy endgame tables (`SyzygyPath`), if any.
    tablebases: Option<Tablebases>,
    /// Messages for the user from the options set since the last [`Engine::take_notes`].
    notes: Vec<String>,
}

impl Engine {
    /// An engine playing with `networks` and default options.
    pub fn new(networks: Networks) -> Engine {
        Engine {
            settings: Settings {
                search: SearchKind::EvalAlphaBeta,
                eval: EvalOptions::DEFAULT,
                policy: PolicyMode::default(),
                compare_student: true,
                compare_selective: true,
                threads: 1,
                move_overhead: Duration::from_millis(10),
                multipv: 1,
                show_wdl: false,
                chess960: false,
                ponder: false,
                tablebase: ProbeOptions::default(),
            },
            networks,
            tt: Table::new(DEFAULT_HASH_MB),
            histories: vec![Histories::default()],
            last_root: None,
            compare_table: CompareTable::new(DEFAULT_HASH_MB),
            mcts: Mcts::new(MctsOptions::default(), 0),
            tablebases: None,
            notes: Vec::new(),
        }
    }

    /// An engine playing with the networks in `models` (`None`: the embedded ones) and
    /// default options.
    pub fn load(models: Option<&Path>) -> Result<Engine, NetworkError> {
        Networks::load_or_embedded(models).map(Engine::new)
    }

    /// The networks.
    pub fn networks(&self) -> &Networks {
        &self.networks
    }

    /// The evaluation search's switches as the options set them.
    pub fn eval_search_options(&self) -> EvalOptions {
        self.settings.eval
    }

    /// How positions and moves are read and written: Chess960 castling (the king takes
    /// its rook) under `UCI_Chess960`, standard otherwise.
    pub fn castling_mode(&self) -> CastlingMode {
        if self.settings.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard }
    }

    /// Forgets everything learnt about the previous game (tables and tree).
    pub fn new_game(&mut self) {
        self.clear_hash();
    }

    /// Empties the tables (keeping their memory) and drops the MCTS tree (`Clear Hash`).
    /// The histories and counter moves are emptied too; killers live only as long as one
    /// search.
    pub fn clear_hash(&mut self) {
        self.tt.clear();
        self.histories.iter_mut().for_each(Histories::clear);
        self.compare_table.clear();
        self.mcts.clear();
    }

    /// Sets the UCI option `name` (case-insensitive, or one of its aliases) to `value`; an
    /// error names the option and the allowed values and leaves the engine unchanged.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        let option = options::find(name).ok_or_else(|| format!("unknown option `{}`", name.trim()))?;
        option.apply(self, value)
    }

    /// Messages for the user from the options set since the last call (what `SyzygyPath`
    /// loaded), to be shown as `info string`.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The endgame tables, if any are loaded.
    pub fn tablebases(&self) -> Option<&Tablebases> {
        self.tablebases.as_ref()
    }

    /// Loads the Syzygy tables of the directories in `path` (`SyzygyPath`; empty or
    /// `<empty>`: none) and notes what was found; when they cannot be read, an error names
    /// the directory or file and the previous tables stay.
    fn load_tablebases(&mut self, path: &str) -> Result<(), String> {
        if path.is_empty() || path == "<empty>" {
            self.tablebases = None;
            return Ok(());
        }
        let tables = Tablebases::open(path).map_err(|error| format!("{error}; the previous tables are kept"))?;
        self.notes.push(tables.summary());
        self.tablebases = Some(tables);
        Ok(())
    }

    /// `threads` threads for the evaluation search (`Threads`), with their histories
    /// allocated now rather than in the first search, and for MCTS (one shared tree).
    fn set_threads(&mut self, threads: usize) {
        self.settings.threads = threads;
        self.histories.resize_with(threads.max(1), Histories::default);
        self.mcts.set_threads(threads);
    }

    /// Clears the histories unless `game` continues the game of the last evaluation search
    /// (its position, or a later one): what a search of another game's position learnt
    /// orders this one's moves worse than nothing (`ucinewgame` is not always sent).
    fn forget_histories_unless_continued(&mut self, game: &Game) {
        let root = key(game.position());
        let continued = self.last_root.is_some_and(|last| last == root || game.history().contains(&last));
        if !continued {
            self.histories.iter_mut().for_each(Histories::clear);
        }
        self.last_root = Some(root);
    }

    /// New, empty tables of `megabytes` MB each (the `Hash` option); when the memory cannot
    /// be had, an error says so and the previous tables stay.
    fn resize_tables(&mut self, megabytes: usize) -> Result<(), String> {
        let refused = |_| format!("cannot allocate two tables of {megabytes} MB; the previous tables are kept");
        let tt = Table::try_new(megabytes).map_err(refused)?;
        let compare_table = CompareTable::try_new(megabytes).map_err(refused)?;
        (self.tt, self.compare_table) = (tt, compare_table);
        self.mcts.set_memory(megabytes);
        Ok(())
    }

    /// Searches the game's position; `None` when it has no legal move.
    pub fn go(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: Arc<AtomicBool>,
        reporter: Reporter<'_>,
    ) -> Option<SearchResult> {
        let position = game.position();
        if position.legal_moves().is_empty() {
            return None;
        }
        if matches!(self.settings.search, SearchKind::EvalAlphaBeta) {
            self.forget_histories_unless_continued(game);
        }
        let settings = &self.settings;
        let mut control =
            Control::new(limits, position.turn(), settings.move_overhead, stop).with_multipv(settings.multipv);
        if settings.ponder {
            control = control.with_ponder_bonus();
        }
        let tablebases = self.tablebases.as_ref();
        if let Some(tables) = tablebases {
            tables.reset_hits();
        }
        let ranking = tablebases
            .and_then(|tables| tables.rank_root(game, settings.tablebase.limit, settings.tablebase.rule50))
            .and_then(|mut ranking| {
                let asked = &control.search_moves;
                ranking.moves.retain(|m| asked.is_empty() || asked.contains(m));
                // `searchmoves` that the tables would all refuse are searched as asked, unranked.
                (!ranking.moves.is_empty()).then_some(ranking)
            });
        if let Some(ranking) = &ranking {
            control.search_moves = ranking.moves.clone();
        }
        let search_probe = tablebases
            .filter(|_| !ranking.as_ref().is_some_and(|ranking| ranking.by_dtz))
            .map(|tables| SearchProbe { tables, options: settings.tablebase });
        // The tables' score for the root stands for any score short of a mate.
        let root_score = ranking.as_ref().map(|ranking| Score::from_internal(ranking.score));
        let with_tables = |score: Score| match (root_score, score) {
            (Some(tables), Score::Cp(_)) => tables,
            _ => score,
        };
        // Centipawns per unit of the expected score's logit in this search's scores: the
        // value net's scale, or for MCTS the fixed one its visit values are turned back with.
        let cp_per_logit = match settings.search {
            SearchKind::Mcts => VALUE_CP_PER_LOGIT,
            _ => self.networks.value.centipawns_per_unit(),
        };
        let show_wdl = settings.show_wdl;
        let outer = reporter;
        let reporter = &mut |report: &Report| match report {
            Report::Info(info) => {
                let score = with_tables(info.score);
                let wdl = if show_wdl { Some(wdl(score, cp_per_logit)) } else { info.wdl };
                let tbhits = tablebases.map(Tablebases::hits);
                outer(&Report::Info(Info { score, wdl, tbhits, ..info.clone() }))
            }
            _ => outer(report),
        };
        let mut result = match settings.search {
            SearchKind::EvalAlphaBeta => {
                let tables = (&self.tt, &mut self.histories[..]);
                eval::search(
                    &self.networks,
                    game,
                    settings.eval,
                    tables.0,
                    tables.1,
                    &control,
                    settings.threads,
                    search_probe,
                    reporter,
                )
            }
            SearchKind::CompareAlphaBeta => {
                let options = CompareOptions {
                    tt: settings.eval.tt,
                    ordering: settings.eval.ordering,
                    student: settings.compare_student,
                    selective: settings.compare_selective,
                };
                compare::search(&self.networks, game, options, &mut self.compare_table, &control, reporter)
            }
            SearchKind::Mcts => self.mcts.search(&self.networks, game, &control, reporter),
            SearchKind::Policy => {
                let result = policy::choose(&self.networks, position, settings.policy, &control.search_moves);
                let pv = result.pv.clone();
                reporter(&Report::Info(Info::new(0, 0, result.score, result.nodes, control.elapsed_ms(), pv)));
                result
            }
        };
        result.score = with_tables(result.score);
        if result.pv.len() == 1 && settings.search == SearchKind::EvalAlphaBeta && settings.eval.tt {
            // A principal variation cut short by the table: its entry for the position after
            // the best move gives the reply to ponder on.
            let after = played(position, result.best);
            let reply = self.tt.probe(key(&after), 1).and_then(|entry| unpack_move(&after, entry.packed_move));
            result.pv.extend(reply);
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use shakmaty::Move;

    use super::*;
    use crate::search::{MATE, Score};

    fn engine() -> Engine {
        Engine::new(Networks::random(5))
    }

    /// Searches `game` and returns the result and the reports.
    fn go(engine: &mut Engine, game: &Game, limits: &Limits) -> (SearchResult, Vec<Report>) {
        let mut reports = Vec::new();
        let result = engine.go(game, limits, Arc::default(), &mut |report| reports.push(report.clone()));
        (result.expect("a legal move"), reports)
    }

    fn infos(reports: &[Report]) -> Vec<&Info> {
        reports
            .iter()
            .filter_map(|r| match r {
                Report::Info(info) => Some(info),
                Report::String(_) => None,
            })
            .collect()
    }

    #[test]
    fn multipv_searches_distinct_lines_best_first_and_plays_the_first() {
        let mut engine = engine();
        engine.set_option("MultiPV", "3").unwrap();
        let game = Game::from_uci(None, &["e2e4", "e7e5"]).unwrap();
        let (result, reports) = go(&mut engine, &game, &Limits::depth(4));
        let all = infos(&reports);
        for depth in 1..=4 {
            let lines: Vec<&&Info> = all.iter().filter(|i| i.depth == depth).collect();
            assert_eq!(lines.iter().map(|i| i.multipv).collect::<Vec<_>>(), [1, 2, 3], "depth {depth}");
            let firsts: Vec<Move> = lines.iter().map(|i| i.pv[0]).collect();
            assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{lines:?}");
            let cp = |i: &Info| match i.score {
                Score::Cp(cp) => cp,
                Score::Mate(n) => n.signum() * MATE,
            };
            assert!(cp(lines[0]) >= cp(lines[1]) && cp(lines[1]) >= cp(lines[2]), "{lines:?}");
            for line in &lines {
                assert!(line.hashfull.is_some() && line.seldepth >= line.depth, "{line:?}");
                let mut position = game.position().clone();
                for m in &line.pv {
                    assert!(position.is_legal(*m), "{line:?}");
                    position.play_unchecked(*m);
                }
            }
        }
        let last = all.iter().find(|i| i.depth == 4 && i.multipv == 1).unwrap();
        assert_eq!((result.best, result.score), (last.pv[0], last.score));
        // No more lines than root moves (two here), and only among `searchmoves`.
        let game = Game::from_uci(Some("k7/8/2Q5/8/8/8/8/6K1 b - - 0 1"), &[]).unwrap();
        assert_eq!(game.position().legal_moves().len(), 2);
        let (_, reports) = go(&mut engine, &game, &Limits::depth(3));
        assert!(infos(&reports).iter().all(|i| i.multipv <= 2) && infos(&reports).len() == 6, "{reports:?}");
        let start = Game::default();
        let only: Vec<Move> = start.position().legal_moves().into_iter().take(2).collect();
        let limits = Limits { search_moves: only.clone(), ..Limits::depth(2) };
        let (result, reports) = go(&mut engine, &start, &limits);
        assert!(infos(&reports).iter().all(|i| i.multipv <= 2 && only.contains(&i.pv[0])), "{reports:?}");
        assert!(only.contains(&result.best));
    }

    #[test]
    fn histories_carry_over_to_later_positions_of_the_game_only() {
        let limits = Limits::depth(6);
        let italian = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
        let unrelated = Game::from_uci(Some("2r3k1/pp3ppp/4p3/3pP3/3P4/P4N2/1P3PPP/2R3K1 b - - 0 24"), &[]).unwrap();
        let position = Game::from_uci(Some(italian), &[]).unwrap();
        let later = Game::from_uci(Some(italian), &["e1g1", "f8c5"]).unwrap();
        let fresh = |game: &Game| go(&mut engine(), game, &limits).0.nodes;
        let mut engine = engine();
        go(&mut engine, &unrelated, &limits);
        // Nothing of the unrelated search is left to steer this one: it is a fresh search.
        assert_eq!(go(&mut engine, &position, &limits).0.nodes, fresh(&position));
        // Two plies later in the same game the halved histories still order the moves.
        assert_ne!(go(&mut engine, &later, &limits).0.nodes, fresh(&later));
    }

    #[test]
    fn clear_hash_empties_the_tables_in_place_and_the_tree() {
        let mut engine = engine();
        engine.set_option("Hash", "1").unwrap();
        go(&mut engine, &Game::default(), &Limits::depth(7));
        let hashfull = engine.tt.hashfull();
        assert!(hashfull > 10, "{hashfull}");
        engine.set_option("Search", "mcts").unwrap();
        go(&mut engine, &Game::default(), &Limits { nodes: Some(50), ..Limits::default() });
        assert!(engine.mcts.tree_size() > 1);
        let (tt, compare) = (format!("{:?}", engine.tt), format!("{:?}", engine.compare_table));
        engine.set_option("Clear Hash", "").unwrap();
        assert_eq!((engine.tt.hashfull(), engine.mcts.tree_size()), (0, 0));
        assert_eq!((format!("{:?}", engine.tt), format!("{:?}", engine.compare_table)), (tt, compare));
    }

    #[test]
    fn show_wdl_adds_chances_that_match_the_score() {
        let mut engine = engine();
        let game = Game::default();
        let (_, reports) = go(&mut engine, &game, &Limits::depth(2));
        assert!(infos(&reports).iter().all(|i| i.wdl.is_none()));
        engine.set_option("UCI_ShowWDL", "true").unwrap();
        let scale = engine.networks.value.centipawns_per_unit();
        for search in ["eval", "compare", "policy", "mcts"] {
            engine.set_option("Search", search).unwrap();
            let limits = Limits { nodes: (search == "mcts").then_some(100), ..Limits::depth(2) };
            let (_, reports) = go(&mut engine, &game, &limits);
            let scale = if search == "mcts" { VALUE_CP_PER_LOGIT } else { scale };
            for info in infos(&reports) {
                assert_eq!(info.wdl, Some(wdl(info.score, scale)), "{search}: {info:?}");
                assert!(info.to_uci(CastlingMode::Standard).contains(" wdl "), "{search}");
            }
        }
        // Mate in one: certain.
        engine.set_option("Search", "eval").unwrap();
        let mate = Game::from_uci(Some("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"), &[]).unwrap();
        let (_, reports) = go(&mut engine, &mate, &Limits::depth(2));
        assert_eq!(infos(&reports).last().unwrap().wdl, Some([1000, 0, 0]));
    }

    #[test]
    fn the_reply_to_ponder_comes_from_the_table_when_the_pv_is_one_move() {
        let mut engine = engine();
        let game = Game::default();
        go(&mut engine, &game, &Limits::depth(5));
        let (result, reports) = go(&mut engine, &game, &Limits::depth(1));
        // Depth 1 in the start position: quiescence adds nothing to the best move.
        assert_eq!(infos(&reports).last().unwrap().pv.len(), 1);
        assert_eq!(result.pv.len(), 2, "{result:?}");
        let after = played(game.position(), result.best);
        assert!(after.is_legal(result.pv[1]));
    }

    /// An engine with the test tables (`DEEPCHESS_SYZYGY_TEST_PATH`), or `None` after
    /// saying why the test skips.
    fn engine_with_tables() -> Option<Engine> {
        crate::tablebase::tests::test_tables()?;
        let mut engine = engine();
        engine.set_option("SyzygyPath", &crate::tablebase::test_path()?).unwrap();
        Some(engine)
    }

    #[test]
    fn syzygy_path_loads_notes_and_keeps_the_tables_on_error() {
        let mut engine = engine();
        let error = engine.set_option("SyzygyPath", "/nonexistent/syzygy").unwrap_err();
        assert!(error.starts_with("option SyzygyPath: cannot read the directory `/nonexistent/syzygy`"), "{error}");
        assert!(error.ends_with("; the previous tables are kept") && engine.tablebases().is_none(), "{error}");
        let Some(mut engine) = engine_with_tables() else { return };
        let notes = engine.take_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("Syzygy: 35 WDL and 35 DTZ tables (up to 4 pieces) from "), "{notes:?}");
        assert!(engine.set_option("SyzygyPath", "/nonexistent/syzygy").is_err());
        assert_eq!(engine.tablebases().map(Tablebases::max_pieces), Some(4), "the previous tables stay");
        assert!(engine.take_notes().is_empty());
        engine.set_option("SyzygyPath", "<empty>").unwrap();
        assert!(engine.tablebases().is_none());
    }

    /// The best move's UCI text, the last report's score and its `tbhits`.
    fn tablebase_search(engine: &mut Engine, fen: &str, limits: &Limits) -> (String, Score, Option<u64>) {
        let game = Game::from_uci(Some(fen), &[]).unwrap();
        let (result, reports) = go(engine, &game, limits);
        let last = infos(&reports).last().copied().cloned().unwrap();
        assert_eq!(last.score, result.score, "{fen}");
        (crate::search::uci_move(&result.best), result.score, last.tbhits)
    }

    #[test]
    fn every_search_plays_among_the_moves_the_tables_keep() {
        let Some(mut engine) = engine_with_tables() else { return };
        // KRvK 95 plies after the last capture: only Ra5 and Ke2 come near a win (python-chess).
        let fen = "8/8/8/4k3/8/8/8/R3K3 w - - 95 80";
        for search in ["eval", "compare", "mcts", "policy"] {
            engine.set_option("Search", search).unwrap();
            let limits = Limits { nodes: (search == "mcts").then_some(50), ..Limits::depth(3) };
            let (best, score, tbhits) = tablebase_search(&mut engine, fen, &limits);
            assert!(["a1a5", "e1e2"].contains(&best.as_str()), "{search}: {best}");
            assert!(matches!(score, Score::Cp(1..50)), "{search}: a spoilt win, {score:?}");
            assert!(tbhits.is_some_and(|hits| hits >= 15), "{search}: the root's probes count, {tbhits:?}");
        }
        // Drawn by the tables: KBvK (insufficient material) and KRvKR score 0.
        engine.set_option("Search", "eval").unwrap();
        for fen in ["4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", "8/8/3k4/8/8/3K4/3R4/6r1 w - - 0 1"] {
            assert_eq!(tablebase_search(&mut engine, fen, &Limits::depth(4)).1, Score::Cp(0), "{fen}");
        }
        // KQvK: the mate in one.
        let (best, score, _) = tablebase_search(&mut engine, "k7/8/1K6/8/8/8/7Q/8 w - - 0 1", &Limits::depth(2));
        assert_eq!((best.as_str(), score), ("h2h8", Score::Mate(1)));
    }

    #[test]
    fn the_evaluation_search_scores_a_capture_into_a_won_table_position() {
        let Some(mut engine) = engine_with_tables() else { return };
        // KQvKRP has no table here; Qxd5+ leaves a won KQvKP, black to move.
        let fen = "k7/7p/8/3r4/8/8/8/3Q2K1 w - - 0 1";
        let (best, score, tbhits) = tablebase_search(&mut engine, fen, &Limits::depth(3));
        assert_eq!((best.as_str(), score), ("d1d5", Score::Cp(crate::search::TB_WIN - 1)));
        assert!(tbhits.is_some_and(|hits| hits > 0), "{tbhits:?}");
        // Without the tables the same search sees no table win.
        engine.set_option("SyzygyPath", "").unwrap();
        engine.clear_hash();
        let (_, score, tbhits) = tablebase_search(&mut engine, fen, &Limits::depth(3));
        assert!(matches!(score, Score::Cp(cp) if cp < crate::search::TB_WIN_BOUND), "{score:?}");
        assert_eq!(tbhits, None);
    }

    #[test]
    fn chess960_is_the_castling_mode_of_the_option() {
        let mut engine = engine();
        assert_eq!(engine.castling_mode(), CastlingMode::Standard);
        engine.set_option("UCI_Chess960", "true").unwrap();
        assert_eq!(engine.castling_mode(), CastlingMode::Chess960);
    }
}
