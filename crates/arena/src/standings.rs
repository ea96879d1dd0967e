//! Match results as tables: standings with W/D/L, score and Elo (95% interval), the
//! crosstable, the thesis's table 6.6 form (rows as White, +1 win, 0 draw, −1 loss) and the
//! ways games ended.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::elo::{EloEstimate, Record};
use crate::tournament::FinishedGame;

/// Results of a match between named players.
#[derive(Clone, Debug, Serialize)]
pub struct Standings {
    /// Player names.
    pub names: Vec<String>,
    /// `pair[i][j]`: player i's record against player j, both colours.
    pub pair: Vec<Vec<Record>>,
    /// `as_white[i][j]`: player i's record as White against player j as Black.
    pub as_white: Vec<Vec<Record>>,
    /// How games ended (reason without engine-specific detail) and how often.
    pub endings: BTreeMap<String, usize>,
}

/// Title of the crosstable.
const CROSSTABLE: &str = "crosstable (points of the row player against the column player, both colours)";
/// Title of the table in the thesis's form.
const TABLE_6_6: &str =
    "table 6.6 form: row player as White vs column player as Black, sum of +1 win / 0 draw / -1 loss (W-D-L)";

/// A reason without its details: `engine X crashed ...` → `crash`.
fn ending_kind(game: &FinishedGame) -> String {
    use crate::game::Termination::*;
    match game.record.end.termination {
        Normal => game.record.end.reason.clone(),
        Adjudication => game.record.end.reason.split(" (").next().unwrap_or_default().to_owned(),
        TimeForfeit => "time forfeit / no answer".into(),
        RulesInfraction => "illegal move".into(),
        Abandoned => "engine crash or failed start".into(),
    }
}

impl Standings {
    /// Tallies finished games.
    pub fn new(names: &[String], games: &[FinishedGame]) -> Standings {
        let n = names.len();
        let mut s = Standings {
            names: names.to_vec(),
            pair: vec![vec![Record::default(); n]; n],
            as_white: vec![vec![Record::default(); n]; n],
            endings: BTreeMap::new(),
        };
        for g in games {
            let (w, b, sign) = (g.pairing.white, g.pairing.black, g.record.end.result.white_sign());
            s.pair[w][b].add(sign);
            s.pair[b][w].add(-sign);
            s.as_white[w][b].add(sign);
            *s.endings.entry(ending_kind(g)).or_default() += 1;
        }
        s
    }

    /// Player i's record against everyone.
    pub fn total(&self, i: usize) -> Record {
        self.pair[i].iter().fold(Record::default(), |acc, r| Record {
            wins: acc.wins + r.wins,
            draws: acc.draws + r.draws,
            losses: acc.losses + r.losses,
        })
    }

    /// The tables as text.
    pub fn render(&self) -> String {
        let n = self.names.len();
        let width = self.names.iter().map(String::len).max().unwrap_or(0).max(6);
        let mut out = String::new();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|a, b| self.total(*b).score().total_cmp(&self.total(*a).score()));
        let _ = writeln!(
            out,
            "{:>4}  {:<width$}  {:>5}  {:>4}  {:>4}  {:>4}  {:>6}  {:>6}  Elo vs field [95%]",
            "rank", "player", "games", "W", "D", "L", "score", "%"
        );
        for (rank, &i) in order.iter().enumerate() {
            let r = self.total(i);
            let _ = writeln!(
                out,
                "{:>4}  {:<width$}  {:>5}  {:>4}  {:>4}  {:>4}  {:>6.1}  {:>6.1}  {}",
                rank + 1,
                self.names[i],
                r.games(),
                r.wins,
                r.draws,
                r.losses,
                r.points(),
                100.0 * r.score(),
                r.elo().map_or("-".into(), |e| e.to_string())
            );
        }
        let labels: Vec<String> =
            self.names.iter().enumerate().map(|(i, name)| format!("[{}] {name}", i + 1)).collect();
        let matrix = |out: &mut String, title: &str, records: &[Vec<Record>], cell_text: &dyn Fn(Record) -> String| {
            let (label_width, cell) = (labels.iter().map(String::len).max().unwrap_or(0), 12);
            let _ = write!(out, "\n{title}\n{:<label_width$}", "");
            for j in 0..n {
                let _ = write!(out, "  {:>cell$}", format!("[{}]", j + 1));
            }
            for (i, label) in labels.iter().enumerate() {
                let _ = write!(out, "\n{label:<label_width$}");
                for (j, &r) in records[i].iter().enumerate() {
                    let r = if i == j { Record::default() } else { r };
                    let text = if r.games() == 0 { "-".into() } else { cell_text(r) };
                    let _ = write!(out, "  {text:>cell$}");
                }
            }
            out.push('\n');
        };
        matrix(&mut out, CROSSTABLE, &self.pair, &|r| format!("{}/{}", r.points(), r.games()));
        matrix(&mut out, TABLE_6_6, &self.as_white, &|r| {
            format!("{:+} ({}-{}-{})", i64::from(r.wins) - i64::from(r.losses), r.wins, r.draws, r.losses)
        });
        out.push('\n');
        for i in 0..n {
            for j in i + 1..n {
                let r = self.pair[i][j];
                if r.games() == 0 {
                    continue;
                }
                let elo = r.elo().map_or("-".into(), |e: EloEstimate| e.to_string());
                let _ = writeln!(
                    out,
                    "{} vs {}: W/D/L {}/{}/{}, score {}/{} ({:.1}%), Elo difference {elo} (95%)",
                    self.names[i],
                    self.names[j],
                    r.wins,
                    r.draws,
                    r.losses,
                    r.points(),
                    r.games(),
                    100.0 * r.score()
                );
            }
        }
        let endings: Vec<String> = self.endings.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(out, "endings: {}", endings.join(", "));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameEnd, GameRecord, GameResult, Termination};
    use crate::tournament::Pairing;

    fn game(white: usize, black: usize, result: GameResult, termination: Termination, reason: &str) -> FinishedGame {
        FinishedGame {
            pairing: Pairing { round: 1, white, black, opening: 0 },
            record: GameRecord {
                white: String::new(),
                black: String::new(),
                start_fen: String::new(),
                moves: Vec::new(),
                end: GameEnd::new(result, termination, reason, None),
            },
        }
    }

    #[test]
    fn counts_are_consistent() {
        let names = vec!["A".to_owned(), "B".to_owned()];
        let games = [
            game(0, 1, GameResult::WhiteWins, Termination::Normal, "checkmate"),
            game(1, 0, GameResult::WhiteWins, Termination::Abandoned, "engine A crashed"),
            game(0, 1, GameResult::Draw, Termination::Adjudication, "draw by move limit (10 moves)"),
        ];
        let s = Standings::new(&names, &games);
        assert_eq!(s.total(0), Record { wins: 1, draws: 1, losses: 1 });
        assert_eq!(s.total(1), Record { wins: 1, draws: 1, losses: 1 });
        assert_eq!(s.as_white[0][1], Record { wins: 1, draws: 1, losses: 0 });
        assert_eq!(s.as_white[1][0], Record { wins: 1, draws: 0, losses: 0 });
        assert_eq!(s.endings.values().sum::<usize>(), 3);
        let text = s.render();
        assert!(text.contains("A vs B: W/D/L 1/1/1, score 1.5/3 (50.0%)"), "{text}");
        assert!(text.contains("+1 (1-1-0)"), "{text}");
        assert!(text.ends_with("endings: checkmate 1, draw by move limit 1, engine crash or failed start 1"), "{text}");
    }
}
