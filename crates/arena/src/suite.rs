//! Test suites: which moves score how many points in each position (STS `c8` points for the
//! `c9`/`c7` moves, or plain `bm`/`am` solutions), themes, and the summary report with the
//! STS rating estimate.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move};

use crate::epd::{EpdLine, LineError, parse_line, parse_move, read_lines};

/// How a position is scored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// STS-style: each listed move earns its points; the best move earns the most (10).
    Points(Vec<(Move, u32)>),
    /// Plain suite: 1 point when the move is one of `best` (if any) and none of `avoid`.
    Solution {
        /// `bm` moves.
        best: Vec<Move>,
        /// `am` moves.
        avoid: Vec<Move>,
    },
}

/// One position of a suite.
#[derive(Clone, Debug)]
pub struct SuitePosition {
    /// 1-based line number in the file.
    pub line: usize,
    /// The `id` operand, or `line N`.
    pub id: String,
    /// The theme: the id without its number and `STS(vN.0)` prefix.
    pub theme: String,
    /// The position.
    pub position: Chess,
    /// The position as a FEN, as sent to engines.
    pub fen: String,
    /// How a move is scored.
    pub scoring: Scoring,
}

/// The points a chosen move earns in one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveScore {
    /// Points earned.
    pub points: u32,
    /// Most points any move earns.
    pub max: u32,
    /// The move is (one of) the best.
    pub best: bool,
}

impl SuitePosition {
    /// Builds a suite position from a parsed EPD line.
    pub fn from_epd(line_number: usize, epd: EpdLine) -> Result<SuitePosition, String> {
        let id = epd.operands("id").and_then(|o| o.first().cloned()).unwrap_or_else(|| format!("line {line_number}"));
        let theme = theme_of(&id);
        let moves = |opcode: &str| -> Result<Vec<Move>, String> {
            let Some(operands) = epd.operands(opcode) else { return Ok(Vec::new()) };
            operands
                .iter()
                .flat_map(|o| o.split_whitespace())
                .map(|t| parse_move(&epd.position, t).map_err(|e| format!("{opcode}: {e}")))
                .collect()
        };
        let scoring = match scored_moves(&epd)? {
            Some(points) => Scoring::Points(points),
            None => {
                let (best, avoid) = (moves("bm")?, moves("am")?);
                if best.is_empty() && avoid.is_empty() {
                    return Err("no solution: needs bm, am, or c8 points with c9/c7 moves".into());
                }
                Scoring::Solution { best, avoid }
            }
        };
        Ok(SuitePosition { line: line_number, id, theme, position: epd.position, fen: epd.fen, scoring })
    }

    /// Scores a chosen move; `None` (no legal move played) earns nothing.
    pub fn score(&self, chosen: Option<&Move>) -> MoveScore {
        match &self.scoring {
            Scoring::Points(list) => {
                let max = list.iter().map(|(_, p)| *p).max().unwrap_or(0);
                let points = chosen.and_then(|c| list.iter().find(|(m, _)| m == c)).map_or(0, |(_, p)| *p);
                MoveScore { points, max, best: chosen.is_some() && points == max }
            }
            Scoring::Solution { best, avoid } => {
                let solved = chosen.is_some_and(|c| (best.is_empty() || best.contains(c)) && !avoid.contains(c));
                MoveScore { points: u32::from(solved), max: 1, best: solved }
            }
        }
    }

    /// Reads an engine's move in UCI notation (castling as `e1g1` or `e1h1`); `None` when
    /// it is not legal here.
    pub fn engine_move(&self, uci: &str) -> Option<Move> {
        uci.parse::<UciMove>().ok()?.to_move(&self.position).ok()
    }
}

/// The scored moves of an STS-style line: `c8` points with `c9` (UCI) or `c7` (SAN) moves,
/// or the `c0` text `"f5=10, Be5+=2"`. `None` when the line has none of them.
fn scored_moves(epd: &EpdLine) -> Result<Option<Vec<(Move, u32)>>, String> {
    let words = |opcode: &str| -> Option<Vec<String>> {
        epd.operands(opcode).map(|o| o.iter().flat_map(|s| s.split_whitespace()).map(str::to_owned).collect())
    };
    if let Some(points) = words("c8") {
        let (opcode, moves) = match (words("c9"), words("c7")) {
            (Some(m), _) => ("c9", m),
            (None, Some(m)) => ("c7", m),
            (None, None) => return Err("c8 points without c9 or c7 moves".into()),
        };
        if moves.len() != points.len() {
            return Err(format!("{} c8 points for {} {opcode} moves", points.len(), moves.len()));
        }
        return moves
            .iter()
            .zip(&points)
            .map(|(m, p)| {
                let m = parse_move(&epd.position, m).map_err(|e| format!("{opcode}: {e}"))?;
                let p = p.parse().map_err(|_| format!("c8: \"{p}\" is not a number of points"))?;
                Ok((m, p))
            })
            .collect::<Result<_, String>>()
            .map(Some);
    }
    let Some(c0) = epd.operands("c0").and_then(|o| o.first()) else { return Ok(None) };
    let pairs: Option<Vec<(&str, &str)>> = c0.split(',').map(|p| p.trim().split_once('=')).collect();
    let Some(pairs) = pairs else { return Ok(None) }; // a free-text comment, not scores
    pairs
        .into_iter()
        .map(|(m, p)| {
            let m = parse_move(&epd.position, m.trim()).map_err(|e| format!("c0: {e}"))?;
            let p = p.trim().parse().map_err(|_| format!("c0: \"{p}\" is not a number of points"))?;
            Ok((m, p))
        })
        .collect::<Result<_, String>>()
        .map(Some)
}

/// The theme of an id: `"STS(v1.0) Undermine.001"` → `"Undermine"`; `"WAC.001"` → `"WAC"`.
pub fn theme_of(id: &str) -> String {
    let name = match id.split_once(") ") {
        Some((prefix, rest)) if prefix.starts_with("STS") => rest,
        _ => id,
    };
    let name = match name.rsplit_once(['.', ' ', '-']) {
        Some((head, number)) if !head.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => name,
    };
    name.trim().to_owned()
}

/// The STS theme number of an id: `"STS(v2.2) Open Files and Diagonals.001"` → 2.
fn sts_number(id: &str) -> Option<u32> {
    let version = id.strip_prefix("STS(v")?.split([')', '.']).next()?;
    version.parse().ok()
}

/// A suite read from a file, with the lines that could not be used.
#[derive(Debug)]
pub struct Suite {
    /// The usable positions.
    pub positions: Vec<SuitePosition>,
    /// The bad lines, skipped.
    pub errors: Vec<LineError>,
}

impl Suite {
    /// Reads an EPD suite; bad lines are collected in `errors` and skipped.
    pub fn read(path: &Path) -> std::io::Result<Suite> {
        let mut suite = Suite { positions: Vec::new(), errors: Vec::new() };
        for (line, text) in read_lines(path)? {
            match text.and_then(|text| parse_line(&text)).and_then(|epd| SuitePosition::from_epd(line, epd)) {
                Ok(p) => suite.positions.push(p),
                Err(message) => suite.errors.push(LineError { line, message }),
            }
        }
        // STS themes are numbered; a theme spelt two ways (STS 3 is) stays one theme.
        let mut names: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
        for p in &mut suite.positions {
            if let Some(number) = sts_number(&p.id) {
                p.theme = names.entry(number).or_insert_with(|| p.theme.clone()).clone();
            }
        }
        Ok(suite)
    }
}

/// The outcome of one suite position.
#[derive(Clone, Debug, Serialize)]
pub struct PositionResult {
    /// 1-based line number in the EPD file.
    pub line: usize,
    /// The position's id.
    pub id: String,
    /// Its theme.
    pub theme: String,
    /// The engine's move in UCI notation, as sent (absent when the engine failed).
    pub chosen: Option<String>,
    /// The engine's move in SAN, when legal.
    pub chosen_san: Option<String>,
    /// Points earned.
    pub points: u32,
    /// Most points possible.
    pub max: u32,
    /// The best move was found.
    pub best: bool,
    /// Milliseconds from `go` to `bestmove`.
    pub time_ms: u64,
    /// Nodes searched, as last reported.
    pub nodes: Option<u64>,
    /// Depth reached, as last reported.
    pub depth: Option<u32>,
    /// Last score reported, side to move's view (`cp 35` or `mate -3`).
    pub score: Option<String>,
    /// Why no legal move was obtained (crash, timeout, illegal move).
    pub error: Option<String>,
}

/// One row of the report: a theme or the total.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReportRow {
    /// Theme name or `total`.
    pub name: String,
    /// Positions.
    pub positions: usize,
    /// Points earned.
    pub points: u64,
    /// Most points possible.
    pub max: u64,
    /// Best moves found.
    pub best: usize,
}

impl ReportRow {
    /// Points as a percentage of the maximum.
    pub fn percent(&self) -> f64 {
        if self.max == 0 { 0.0 } else { 100.0 * self.points as f64 / self.max as f64 }
    }

    fn add(&mut self, r: &PositionResult) {
        self.positions += 1;
        self.points += u64::from(r.points);
        self.max += u64::from(r.max);
        self.best += usize::from(r.best);
    }
}

/// The STS rating estimate from the percentage of points (calibrated for CCRL 40/4).
pub fn sts_rating(percent: f64) -> f64 {
    44.523 * percent - 242.85
}

/// Per-theme rows (in order of first appearance) and the total.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// One row per theme.
    pub themes: Vec<ReportRow>,
    /// All positions.
    pub total: ReportRow,
    /// Positions where the engine failed.
    pub failures: usize,
}

impl Report {
    /// Summarises results.
    pub fn new(results: &[PositionResult]) -> Report {
        let empty = |name: &str| ReportRow { name: name.to_owned(), positions: 0, points: 0, max: 0, best: 0 };
        let mut themes: Vec<ReportRow> = Vec::new();
        let mut total = empty("total");
        for r in results {
            let index = match themes.iter().position(|t| t.name == r.theme) {
                Some(i) => i,
                None => {
                    themes.push(empty(&r.theme));
                    themes.len() - 1
                }
            };
            themes[index].add(r);
            total.add(r);
        }
        Report { themes, total, failures: results.iter().filter(|r| r.error.is_some()).count() }
    }

    /// The STS rating estimate of the total.
    pub fn rating(&self) -> f64 {
        sts_rating(self.total.percent())
    }

    /// The table and the summary line `score=<points>/<max> best=<n> rating=<r>` (last).
    pub fn render(&self) -> String {
        let width = self.themes.iter().map(|t| t.name.len()).max().unwrap_or(0).max(5);
        let mut out = String::new();
        let row = |out: &mut String, r: &ReportRow| {
            let _ = writeln!(
                out,
                "{:<width$}  {:>9}  {:>6}  {:>6}  {:>5}  {:>6.1}",
                r.name,
                r.positions,
                r.points,
                r.max,
                r.best,
                r.percent()
            );
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:>9}  {:>6}  {:>6}  {:>5}  {:>6}",
            "theme", "positions", "points", "max", "best", "%"
        );
        for t in &self.themes {
            row(&mut out, t);
        }
        let _ = writeln!(out, "{}", "-".repeat(width + 45));
        row(&mut out, &self.total);
        if self.failures > 0 {
            let _ = writeln!(out, "engine failures (no legal move): {}", self.failures);
        }
        let _ =
            writeln!(out, "STS rating estimate (44.523 x {:.2}% - 242.85): {:.0}", self.total.percent(), self.rating());
        let _ = write!(
            out,
            "score={}/{} best={} rating={:.0}",
            self.total.points,
            self.total.max,
            self.total.best,
            self.rating()
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(text: &str) -> SuitePosition {
        SuitePosition::from_epd(1, parse_line(text).unwrap()).unwrap()
    }

    #[test]
    fn themes() {
        assert_eq!(theme_of("STS(v1.0) Undermine.001"), "Undermine");
        assert_eq!(theme_of("STS(v12.0) Center Control.100"), "Center Control");
        assert_eq!(theme_of("WAC.001"), "WAC");
        assert_eq!(theme_of("line 4"), "line");
        assert_eq!(theme_of("puzzle"), "puzzle");
        assert_eq!(sts_number("STS(v2.2) Open Files and Diagonals.001"), Some(2));
        assert_eq!(sts_number("STS(v15.0) AT.100"), Some(15));
        assert_eq!(sts_number("WAC.001"), None);
    }

    #[test]
    fn sts_points_from_c9_c7_and_c0() {
        let base = "1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id \"STS(v1.0) Undermine.001\";";
        let c9 = position(&format!("{base} c8 \"10 2 3 2\"; c9 \"f4f5 d4e5 d4f2 f3g4\";"));
        let c7 = position(&format!("{base} c7 \"f5 Be5+ Bf2 Bg4\"; c8 \"10 2 3 2\";"));
        let c0 = position(&format!("{base} c0 \"f5=10, Be5+=2, Bf2=3, Bg4=2\";"));
        for p in [&c9, &c7, &c0] {
            assert_eq!(p.theme, "Undermine");
            let f5 = p.engine_move("f4f5").unwrap();
            assert_eq!(p.score(Some(&f5)), MoveScore { points: 10, max: 10, best: true });
            let bf2 = p.engine_move("d4f2").unwrap();
            assert_eq!(p.score(Some(&bf2)), MoveScore { points: 3, max: 10, best: false });
            let other = p.engine_move("e2e3").unwrap();
            assert_eq!(p.score(Some(&other)).points, 0);
            assert_eq!(p.score(None).points, 0);
        }
    }

    #[test]
    fn plain_bm_and_am() {
        let bm = position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4 d4; id \"T.1\";");
        let e4 = bm.engine_move("e2e4").unwrap();
        let nf3 = bm.engine_move("g1f3").unwrap();
        assert_eq!(bm.score(Some(&e4)), MoveScore { points: 1, max: 1, best: true });
        assert_eq!(bm.score(Some(&nf3)).points, 0);
        let am = position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - am g2g4;");
        assert_eq!(am.score(Some(&nf3)).points, 1);
        assert_eq!(am.score(Some(&am.engine_move("g2g4").unwrap())).points, 0);
    }

    #[test]
    fn suite_file_keeps_one_theme_per_sts_number_and_reports_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.epd");
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        let text = format!(
            "{start} bm e4; id \"STS(v3.0) Knight Outposts/Repositioning.001\";\n\
             {start} bm e5;\n\
             {start} bm d4; id \"STS(v3.0) Knight Repositioning/Outposts.002\";\n"
        );
        std::fs::write(&path, text).unwrap();
        let suite = Suite::read(&path).unwrap();
        assert_eq!(suite.positions.len(), 2);
        assert!(suite.positions.iter().all(|p| p.theme == "Knight Outposts/Repositioning"));
        assert_eq!(suite.errors[0].line, 2);
        assert!(suite.errors[0].to_string().starts_with("line 2: bm: \"e5\""), "{}", suite.errors[0]);
    }

    #[test]
    fn bad_solutions_are_errors() {
        let no_solution = parse_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id \"x\";").unwrap();
        assert!(SuitePosition::from_epd(1, no_solution).unwrap_err().contains("no solution"));
        let mismatch =
            parse_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - c8 \"10 3\"; c9 \"e2e4\";").unwrap();
        assert!(SuitePosition::from_epd(1, mismatch).unwrap_err().contains("2 c8 points for 1 c9 moves"));
        let illegal = parse_line("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm Ke2;").unwrap();
        assert!(SuitePosition::from_epd(1, illegal).unwrap_err().contains("bm: \"Ke2\""));
    }

    #[test]
    fn report_totals_and_rating() {
        let result = |theme: &str, points, best| PositionResult {
            line: 1,
            id: String::new(),
            theme: theme.into(),
            chosen: None,
            chosen_san: None,
            points,
            max: 10,
            best,
            time_ms: 0,
            nodes: None,
            depth: None,
            score: None,
            error: None,
        };
        let report =
            Report::new(&[result("A", 10, true), result("B", 4, false), result("A", 0, false), result("B", 10, true)]);
        assert_eq!(report.themes.len(), 2);
        assert_eq!((report.themes[0].points, report.themes[0].max, report.themes[0].best), (10, 20, 1));
        assert_eq!((report.total.points, report.total.max, report.total.best), (24, 40, 2));
        assert!((report.rating() - (44.523 * 60.0 - 242.85)).abs() < 1e-9);
        assert!(report.render().ends_with("score=24/40 best=2 rating=2429"), "{}", report.render());
    }
}
