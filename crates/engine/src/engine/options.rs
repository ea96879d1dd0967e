//! The UCI options, one table: each option's name (and earlier names), type, default,
//! allowed values, a line of documentation and its effect on the engine. The table makes
//! the `option name … type …` lines sent after `uci`, checks and applies `setoption`, and
//! is what `deepchess sts`, `deepchess match` and the tests read. Adding an option is
//! one entry in [`OPTIONS`] (a switch of the evaluation search: one line of
//! [`eval_switches!`](crate::search::eval::switches)).

use std::path::Path;
use std::time::Duration;

use super::tuned_options::{EVAL_PARAMS, MCTS_PARAMS};
use super::{DEFAULT_HASH_MB, Engine, SearchKind};
use crate::nn::Networks;
use crate::search::eval::{DEFAULT_PREDICTOR_DEPTH, eval_switches};
use crate::search::mcts::{FinalMove, LeafEval};
use crate::search::policy::PolicyMode;

/// What an option does to the engine, given a value already checked against the option's
/// type; only the engine calls it.
#[derive(Clone, Copy)]
pub struct Effect<T>(fn(&mut Engine, T));

/// What a string option does to the engine: it reads the text itself and says what is
/// wrong with it (the error is prefixed with the option's name).
#[derive(Clone, Copy)]
pub struct TextEffect(fn(&mut Engine, &str) -> Result<(), String>);

/// What a spin option does to the engine, given a value in range: it may still refuse it
/// (a table too large to allocate) and say why; a refused value changes nothing.
#[derive(Clone, Copy)]
pub struct SpinEffect(fn(&mut Engine, i64) -> Result<(), String>);

/// An option's UCI type, with its default, its allowed values and its effect.
#[derive(Clone, Copy)]
pub enum OptionType {
    /// On or off: `true` or `false` (any case).
    Check {
        /// Default.
        default: bool,
        /// Effect.
        effect: Effect<bool>,
    },
    /// An integer in `min..=max`.
    Spin {
        /// Default.
        default: i64,
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
        /// Effect; it may still refuse a value in range (a table too large to allocate).
        effect: SpinEffect,
    },
    /// One of a list (any case); the effect gets the index of the choice.
    Combo {
        /// Default, one of `choices`.
        default: &'static str,
        /// The allowed values.
        choices: &'static [&'static str],
        /// Effect.
        effect: Effect<usize>,
    },
    /// Free text, read by the effect.
    String {
        /// Default.
        default: &'static str,
        /// Effect.
        effect: TextEffect,
    },
    /// An action without a value (a value given with it is ignored).
    Button {
        /// Effect.
        effect: Effect<()>,
    },
}

impl OptionType {
    /// The type's name in the protocol: `check`, `spin`, `combo`, `string` or `button`.
    pub fn uci_name(&self) -> &'static str {
        match self {
            OptionType::Check { .. } => "check",
            OptionType::Spin { .. } => "spin",
            OptionType::Combo { .. } => "combo",
            OptionType::String { .. } => "string",
            OptionType::Button { .. } => "button",
        }
    }
}

/// One UCI option.
#[derive(Clone, Copy)]
pub struct UciOption {
    /// The name announced after `uci`.
    pub name: &'static str,
    /// Earlier names that `setoption` still accepts.
    pub aliases: &'static [&'static str],
    /// What the option does, in one line.
    pub doc: &'static str,
    /// Type, default, allowed values and effect.
    pub kind: OptionType,
}

const fn check(name: &'static str, default: bool, doc: &'static str, effect: fn(&mut Engine, bool)) -> UciOption {
    UciOption { name, aliases: &[], doc, kind: OptionType::Check { default, effect: Effect(effect) } }
}

pub(super) const fn spin(
    name: &'static str,
    (default, min, max): (i64, i64, i64),
    doc: &'static str,
    effect: fn(&mut Engine, i64) -> Result<(), String>,
) -> UciOption {
    UciOption { name, aliases: &[], doc, kind: OptionType::Spin { default, min, max, effect: SpinEffect(effect) } }
}

const fn combo(
    name: &'static str,
    (default, choices): (&'static str, &'static [&'static str]),
    doc: &'static str,
    effect: fn(&mut Engine, usize),
) -> UciOption {
    UciOption { name, aliases: &[], doc, kind: OptionType::Combo { default, choices, effect: Effect(effect) } }
}

const fn button(name: &'static str, doc: &'static str, effect: fn(&mut Engine, ())) -> UciOption {
    UciOption { name, aliases: &[], doc, kind: OptionType::Button { effect: Effect(effect) } }
}

const fn text(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
    effect: fn(&mut Engine, &str) -> Result<(), String>,
) -> UciOption {
    UciOption { name, aliases: &[], doc, kind: OptionType::String { default, effect: TextEffect(effect) } }
}

/// Every option, in the order announced after `uci`: the search, the evaluation search's
/// switches, the rest, then the evaluation search's and MCTS's tuned numbers.
pub static OPTIONS: &[UciOption] = &joined::<
    { SEARCH.len() + EVAL_SWITCHES.len() + OTHERS.len() + EVAL_PARAMS.len() + MCTS_PARAMS.len() },
    5,
>([SEARCH, EVAL_SWITCHES, OTHERS, EVAL_PARAMS, MCTS_PARAMS]);

/// The choice of the search and of the comparison search's comparator.
const SEARCH: &[UciOption] = &[
    combo(
        "Search",
        ("eval", &["compare", "eval", "mcts", "policy"]),
        "the search: comparison alpha-beta, alpha-beta on the evaluation net, MCTS or the policy player",
        |e, i| {
            e.settings.search =
                [SearchKind::CompareAlphaBeta, SearchKind::EvalAlphaBeta, SearchKind::Mcts, SearchKind::Policy][i]
        },
    ),
    combo(
        "Comparator",
        ("student", &["student", "thesis"]),
        "the comparison search's comparator: the student (the evaluation net's codes, a head over both) or the thesis's (Pos2Vec)",
        |e, i| e.settings.compare_student = i == 0,
    ),
    check(
        "CompareSelective",
        true,
        "comparison search: killers and history instead of the predictors, null move, LMR, check extensions, SEE in quiescence",
        |e, on| e.settings.compare_selective = on,
    ),
];

/// The check options of the evaluation search's switches, from their one declaration.
macro_rules! switch_options {
    ($($field:ident, $name:literal, $default:literal, $plain:literal, $doc:literal;)*) => {
        &[$(check($name, $default, $doc, |e, on| e.settings.eval.$field = on),)*]
    };
}

/// The evaluation search's switches.
const EVAL_SWITCHES: &[UciOption] = eval_switches!(switch_options);

/// The options after the switches.
const OTHERS: &[UciOption] = &[
    spin(
        "OrderingDepth",
        (DEFAULT_PREDICTOR_DEPTH as i64, 1, 64),
        "the move predictors order moves only at nodes with at least this remaining depth",
        |e, depth| {
            e.settings.eval.predictor_depth = depth as i32;
            Ok(())
        },
    ),
    combo(
        "MctsLeaf",
        ("puct", &["value", "rollout", "random", "puct"]),
        "MCTS leaf evaluation: evaluation net, predictor rollout, random rollout, or PUCT (the tree is dropped)",
        |e, i| {
            e.mcts.options.leaf =
                [LeafEval::Value, LeafEval::PredictorRollout, LeafEval::RandomRollout, LeafEval::Puct][i];
            e.mcts.clear();
        },
    ),
    combo(
        "MctsSelect",
        ("visits", &["value", "visits", "both"]),
        "MCTS final move: highest mean value, most visits, or both (searching on while they differ)",
        |e, i| e.mcts.options.select = [FinalMove::Value, FinalMove::Visits, FinalMove::Both][i],
    ),
    text(
        "MctsC",
        "1.41",
        "exploration constant c of the UCB1 variants (MctsLeaf value, rollout, random), a number >= 0",
        |e, value| {
            e.mcts.options.c = value
                .parse::<f32>()
                .ok()
                .filter(|c| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| format!("expected a number >= 0, got `{value}`"))?;
            Ok(())
        },
    ),
    combo(
        "PolicyMode",
        ("joint", &["joint", "greedy"]),
        "policy player: highest joint probability, or the most probable piece type first",
        |e, i| e.settings.policy = [PolicyMode::Joint, PolicyMode::Greedy][i],
    ),
    spin(
        "Hash",
        (DEFAULT_HASH_MB as i64, 1, 65536),
        "size in MB of each alpha-beta search's transposition table (setting it empties them) and bound of the MCTS tree",
        |e, megabytes| e.resize_tables(megabytes as usize),
    ),
    button("Clear Hash", "empties the transposition tables (keeping their memory) and drops the MCTS tree", |e, ()| {
        e.clear_hash()
    }),
    spin(
        "Threads",
        (1, 1, 256),
        "threads of the evaluation search (Lazy SMP) and of MCTS (one shared tree)",
        |e, threads| {
            e.set_threads(threads as usize);
            Ok(())
        },
    ),
    text(
        "Models",
        "<embedded>",
        "directory with the comparator, movepred and value models, or `<embedded>` (a new game starts)",
        |e, value| {
            let dir = (!value.is_empty() && value != "<embedded>").then(|| Path::new(value));
            e.networks = Networks::load_or_embedded(dir).map_err(|error| error.to_string())?;
            e.new_game();
            Ok(())
        },
    ),
    UciOption {
        aliases: &["MoveOverhead"],
        ..spin(
            "Move Overhead",
            (10, 0, 10_000),
            "time in ms kept in hand per move for communication delays",
            |e, ms| {
                e.settings.move_overhead = Duration::from_millis(ms as u64);
                Ok(())
            },
        )
    },
    spin(
        "MultiPV",
        (1, 1, MAX_MULTIPV),
        "lines searched and reported, best first (evaluation search and MCTS; the others report one)",
        |e, lines| {
            e.settings.multipv = lines as usize;
            Ok(())
        },
    ),
    check(
        "UCI_ShowWDL",
        false,
        "win/draw/loss permille in `info`: W = E², D = 2E(1−E), L = (1−E)², E the expected score",
        |e, on| e.settings.show_wdl = on,
    ),
    check(
        "UCI_Chess960",
        false,
        "Chess960: X-FEN/Shredder-FEN castling rights, castling written as the king taking its rook",
        |e, on| e.settings.chess960 = on,
    ),
    check(
        "Ponder",
        false,
        "the GUI may send `go ponder`; under a clock the soft time limit grows by a quarter",
        |e, on| e.settings.ponder = on,
    ),
    text(
        "SyzygyPath",
        "<empty>",
        "directories of Syzygy tables, separated by `:` (`;` on Windows), or `<empty>`",
        |e, value| e.load_tablebases(value),
    ),
    spin(
        "SyzygyProbeDepth",
        (1, 1, 100),
        "the search probes positions with as many pieces as the limit only at this remaining depth or more",
        |e, depth| {
            e.settings.tablebase.depth = depth as i32;
            Ok(())
        },
    ),
    check("Syzygy50MoveRule", true, "wins and losses that the fifty-move rule spoils count as draws", |e, on| {
        e.settings.tablebase.rule50 = on
    }),
    spin("SyzygyProbeLimit", (7, 0, 7), "most pieces of a position probed in the tables", |e, pieces| {
        e.settings.tablebase.limit = pieces as usize;
        Ok(())
    }),
];

/// `parts` one after the other (`N` is the sum of their lengths).
const fn joined<const N: usize, const P: usize>(parts: [&[UciOption]; P]) -> [UciOption; N] {
    let mut out = [parts[0][0]; N];
    let (mut filled, mut part) = (0, 0);
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            out[filled] = parts[part][i];
            filled += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(filled == N, "N is the sum of the parts' lengths");
    out
}

/// Most lines `MultiPV` takes (more than any position's legal moves).
pub const MAX_MULTIPV: i64 = 256;

/// The option called `name` (any case, surrounding spaces ignored), or one of whose
/// aliases it is.
pub fn find(name: &str) -> Option<&'static UciOption> {
    OPTIONS.iter().find(|option| option.names().any(|n| n.eq_ignore_ascii_case(name.trim())))
}

impl UciOption {
    /// The name, then the aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// The default as `setoption` takes it (`None` for a button).
    pub fn default_value(&self) -> Option<String> {
        match &self.kind {
            OptionType::Check { default, .. } => Some(default.to_string()),
            OptionType::Spin { default, .. } => Some(default.to_string()),
            OptionType::Combo { default, .. } | OptionType::String { default, .. } => Some((*default).to_owned()),
            OptionType::Button { .. } => None,
        }
    }

    /// The line announcing the option after `uci`.
    pub fn uci_line(&self) -> String {
        let head = format!("option name {} type {}", self.name, self.kind.uci_name());
        let default = self.default_value().unwrap_or_default();
        match &self.kind {
            OptionType::Check { .. } | OptionType::String { .. } => format!("{head} default {default}"),
            OptionType::Spin { min, max, .. } => format!("{head} default {default} min {min} max {max}"),
            OptionType::Combo { choices, .. } => {
                let vars: String = choices.iter().map(|c| format!(" var {c}")).collect();
                format!("{head} default {default}{vars}")
            }
            OptionType::Button { .. } => head,
        }
    }

    /// The values `setoption` takes, in words: `true or false`, `an integer in 1..=64`.
    pub fn allowed(&self) -> String {
        match &self.kind {
            OptionType::Check { .. } => "true or false".into(),
            OptionType::Spin { min, max, .. } => format!("an integer in {min}..={max}"),
            OptionType::Combo { choices, .. } => format!("one of {}", choices.join(", ")),
            OptionType::String { .. } => "text".into(),
            OptionType::Button { .. } => "no value".into(),
        }
    }

    /// Checks `value` (surrounding spaces ignored) against the option's type and applies
    /// it; an error names the option and the allowed values, and leaves the engine as it
    /// was.
    pub(super) fn apply(&self, engine: &mut Engine, value: &str) -> Result<(), String> {
        let value = value.trim();
        let refused = || format!("option {}: expected {}, got `{value}`", self.name, self.allowed());
        match &self.kind {
            OptionType::Check { effect, .. } => (effect.0)(engine, parse_check(value).ok_or_else(refused)?),
            OptionType::Spin { min, max, effect, .. } => {
                (effect.0)(engine, parse_spin(value, *min, *max).ok_or_else(refused)?)
                    .map_err(|error| format!("option {}: {error}", self.name))?
            }
            OptionType::Combo { choices, effect, .. } => {
                (effect.0)(engine, parse_combo(value, choices).ok_or_else(refused)?)
            }
            OptionType::String { effect, .. } => {
                (effect.0)(engine, value).map_err(|error| format!("option {}: {error}", self.name))?
            }
            OptionType::Button { effect } => (effect.0)(engine, ()),
        }
        Ok(())
    }
}

/// A check option's value: `true` or `false`, any case.
fn parse_check(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A spin option's value: an integer in `min..=max`.
fn parse_spin(value: &str, min: i64, max: i64) -> Option<i64> {
    value.parse::<i64>().ok().filter(|v| (min..=max).contains(v))
}

/// A combo option's value: the index of the choice, any case.
fn parse_combo(value: &str, choices: &[&str]) -> Option<usize> {
    choices.iter().position(|c| c.eq_ignore_ascii_case(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::compare::CompareTable;
    use crate::search::tt::Table;

    fn engine() -> Engine {
        Engine::new(Networks::random(5))
    }

    #[test]
    fn the_option_lines_come_from_the_table() {
        let lines: Vec<String> = OPTIONS.iter().map(UciOption::uci_line).collect();
        assert_eq!(lines.len(), OPTIONS.len());
        for line in [
            "option name Search type combo default eval var compare var eval var mcts var policy",
            "option name TT type check default true",
            "option name Singular type check default true",
            "option name OrderingDepth type spin default 4 min 1 max 64",
            "option name MctsC type string default 1.41",
            "option name Hash type spin default 16 min 1 max 65536",
            "option name Models type string default <embedded>",
            "option name Move Overhead type spin default 10 min 0 max 10000",
        ] {
            assert!(lines.iter().any(|l| l == line), "`{line}` not in {lines:#?}");
        }
    }

    #[test]
    fn names_and_aliases_are_unique_however_written() {
        // The arena and `deepchess sts` also ignore `-`, `_` and spaces: no two options may
        // meet there (an alias may, with its own option's name).
        let normal = |n: &str| n.replace(['-', '_', ' '], "").to_ascii_lowercase();
        let mut all = Vec::new();
        for option in OPTIONS {
            let mut names: Vec<String> = option.names().map(normal).collect();
            names.sort();
            names.dedup();
            all.extend(names);
        }
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "{all:?}");
    }

    #[test]
    fn names_are_found_in_any_case_and_by_alias() {
        let mut engine = engine();
        for (name, ms) in [("Move Overhead", 0), ("move overhead", 1), ("MoveOverhead", 2), (" moveoverhead ", 3)] {
            engine.set_option(name, &ms.to_string()).unwrap();
            assert_eq!(engine.settings.move_overhead, Duration::from_millis(ms));
        }
        assert_eq!(find("MOVEOVERHEAD").map(|o| o.name), Some("Move Overhead"));
        assert_eq!(engine.set_option("Overhead", "1").unwrap_err(), "unknown option `Overhead`");
    }

    #[test]
    fn every_option_takes_its_allowed_values_and_names_itself_when_refusing_others() {
        let mut engine = engine();
        for option in OPTIONS {
            let name = option.name;
            let (good, bad): (Vec<String>, Vec<String>) = match &option.kind {
                OptionType::Check { .. } => {
                    (vec!["true".into(), "FALSE".into(), " true ".into()], vec!["on".into(), "1".into(), "".into()])
                }
                OptionType::Spin { min, max, .. } => {
                    let bad = vec![(min - 1).to_string(), (max + 1).to_string(), "1.5".into(), "x".into(), "".into()];
                    (vec![min.to_string(), max.to_string()], bad)
                }
                OptionType::Combo { choices, .. } => {
                    let good = choices.iter().flat_map(|c| [c.to_string(), c.to_ascii_uppercase()]).collect();
                    (good, vec!["nonsense".into(), "".into()])
                }
                // What a string option takes is its effect's business (tested below).
                OptionType::String { default, .. } => (vec![default.to_string()], vec![]),
                OptionType::Button { .. } => (vec![String::new()], vec![]),
            };
            for value in &good {
                if name == "Hash" && value == "65536" {
                    // 64 GB are not allocated in a test: the largest size is only parsed.
                    assert_eq!(parse_spin(value, 1, 65536), Some(65536));
                    continue;
                }
                engine.set_option(name, value).unwrap_or_else(|e| panic!("{name} = `{value}`: {e}"));
            }
            let settings = engine.settings.clone();
            for value in &bad {
                let error = engine.set_option(name, value).unwrap_err();
                assert_eq!(error, format!("option {name}: expected {}, got `{value}`", option.allowed()));
                assert_eq!(engine.settings, settings, "{name} = `{value}` changed the settings");
            }
        }
        let error = engine.set_option("Search", "quantum").unwrap_err();
        assert_eq!(error, "option Search: expected one of compare, eval, mcts, policy, got `quantum`");
        let error = engine.set_option("hash", "-3").unwrap_err();
        assert_eq!(error, "option Hash: expected an integer in 1..=65536, got `-3`");
    }

    #[test]
    fn string_options_refuse_what_they_cannot_use() {
        let mut engine = engine();
        engine.set_option("MctsC", "0").unwrap();
        engine.set_option("mctsc", "2.5").unwrap();
        assert_eq!(engine.mcts.options.c, 2.5);
        for bad in ["-1", "inf", "NaN", "x"] {
            let error = engine.set_option("MctsC", bad).unwrap_err();
            assert_eq!(error, format!("option MctsC: expected a number >= 0, got `{bad}`"));
        }
        assert_eq!(engine.mcts.options.c, 2.5);
        let error = engine.set_option("Models", "/nonexistent/models").unwrap_err();
        assert!(error.starts_with("option Models: ") && error.contains("/nonexistent/models"), "{error}");
    }

    #[test]
    fn the_defaults_are_a_new_engines_settings() {
        let fresh = engine();
        let mut engine = engine();
        for option in OPTIONS {
            if let Some(default) = option.default_value() {
                engine.set_option(option.name, &default).unwrap_or_else(|e| panic!("{e}"));
            }
        }
        assert_eq!(engine.settings, fresh.settings);
        assert_eq!(engine.mcts.options, fresh.mcts.options);
        assert_eq!(format!("{:?}", engine.tt), format!("{:?}", fresh.tt));
        assert_eq!(format!("{:?}", engine.compare_table), format!("{:?}", fresh.compare_table));
    }

    #[test]
    fn hash_resizes_both_tables() {
        let mut engine = engine();
        engine.set_option("hash", "1").unwrap();
        assert_eq!(format!("{:?}", engine.tt), format!("{:?}", Table::new(1)));
        assert_eq!(format!("{:?}", engine.compare_table), format!("{:?}", CompareTable::new(1)));
        assert!(engine.set_option("Hash", "0").is_err());
        assert_eq!(format!("{:?}", engine.tt), format!("{:?}", Table::new(1)), "a refused size keeps the table");
        // Memory that cannot be had is an error, not an abort, and the tables stay.
        let error = engine.resize_tables(usize::MAX).unwrap_err();
        assert!(error.contains("cannot allocate") && error.contains("previous tables are kept"), "{error}");
        assert_eq!(format!("{:?}", engine.tt), format!("{:?}", Table::new(1)));
        assert_eq!(format!("{:?}", engine.compare_table), format!("{:?}", CompareTable::new(1)));
    }

    #[test]
    fn a_button_is_announced_and_pressed() {
        let button = UciOption {
            name: "Clear Tree",
            aliases: &[],
            doc: "drops the MCTS tree",
            kind: OptionType::Button { effect: Effect(|e, ()| e.mcts.options.c = 0.5) },
        };
        assert_eq!(button.uci_line(), "option name Clear Tree type button");
        assert_eq!(button.default_value(), None);
        let mut engine = engine();
        button.apply(&mut engine, "").unwrap();
        assert_eq!(engine.mcts.options.c, 0.5);
    }

    /// The option table of docs/engine.md, as the registry describes the options.
    fn docs_table() -> String {
        let mut table = String::from("| option | type | default | values | effect |\n|---|---|---|---|---|\n");
        for option in OPTIONS {
            let aliases: String = option.aliases.iter().map(|a| format!(" (also `{a}`)")).collect();
            let kind = option.kind.uci_name();
            let default = option.default_value().map(|d| format!("`{d}`")).unwrap_or_default();
            let (name, allowed, doc) = (option.name, option.allowed(), option.doc);
            table += &format!("| `{name}`{aliases} | {kind} | {default} | {allowed} | {doc} |\n");
        }
        table
    }

    #[test]
    fn the_docs_list_every_option_as_the_table_says() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/engine.md")).unwrap();
        let table = docs_table();
        assert!(docs.contains(&table), "docs/engine.md should hold this table:\n{table}");
    }
}
