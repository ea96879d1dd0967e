//! MCTS's tuned numbers in one table, as the evaluation search keeps its own
//! ([`crate::search::eval::Params`]): each with its default, the range a tuner may try, the
//! step of an SPSA perturbation, its scale and a line of documentation. A number is set as
//! an integer (a UCI spin option named `mcts_` and the field, as OpenBench's SPSA sets
//! it) and used as that integer over its scale: `mcts_c_root 80` is `c_root = 0.80`.
//! Each kept value's measurement is in docs/engine.md's MCTS table.

/// Calls `$callback!` with every tuned number of MCTS, one per line:
/// `name: default, min..=max, step, scale, "what it is";`.
macro_rules! mcts_params {
    ($callback:ident) => {
        $callback! {
            c_root: 80, 10..=300, 8, 100, "PUCT exploration constant at the root";
            c_tree: 45, 10..=200, 4, 100,
                "PUCT exploration constant below the root (0.45 against 0.6 with the 2-ply leaves: SPRT H1)";
            c_scale: 8_000, 1_000..=32_000, 800, 1,
                "parent visits B over which the exploration constant grows by ln: c·(1 + ln((N + B)/B))";
            fpu_reduction: 0, 0..=50, 3, 100,
                "first-play urgency of an unvisited child: the parent's value for the side to move there, less this";
            root_temperature: 160, 50..=400, 10, 100, "softmax temperature of the move predictors' priors at the root";
            tree_temperature: 130, 50..=400, 10, 100, "softmax temperature of the move predictors' priors below the root";
            resolve_plies: 2, 0..=8, 1, 1,
                "deepest ply of the leaf's capture search (2 against 6: 1.4× the playouts, +65 at 1 s + 0.01 s)";
            prior_visits: 2, 1..=16, 1, 1,
                "visits from which a node's priors come from the move predictors (before: cheap priors; 2 against 4: SPRT H1)";
            value_prior_weight: 50, 0..=300, 10, 100,
                "weight w of each move's value v (its position's leaf logit) in the root's priors p·exp(w·v) (SPRT H1, +34.9)";
            node_value_prior_weight: 100, 0..=300, 10, 100,
                "the same weight below the root, once a node has value_prior_visits visits (1.0 against 0.5: SPRT H1, +22.2)";
            value_prior_visits: 64, 8..=512, 8, 1,
                "visits from which a node's priors are weighted by its moves' values (64 against never: SPRT H1, +70.6)";
            cheap_prior_share: 50, 0..=100, 5, 100,
                "share s of the cheap priors kept once the predictors' arrive: (1 − s)·predicted + s·cheap (0.5: SPRT H1, +40.3)";
            quiet_check_score: 50, 0..=300, 10, 100,
                "cheap prior score of a quiet move that gives check (others 0, captures that keep material 1.5 and more; SPRT H1, +61.8)";
            escape_score: 50, 0..=300, 10, 100,
                "cheap prior score of a quiet move that takes a threatened piece to safety (SPRT H1, +25.0)";
            soft_time_scale: 200, 100..=400, 10, 100,
                "the clock's soft limit scaled for MCTS within the hard limit (2.0 against 1.0: +47 at 2 s + 0.02 s)";
        }
    };
}
pub(crate) use mcts_params;

/// Generates [`Params`] from the table.
macro_rules! define_params {
    ($($name:ident: $default:literal, $min:literal..=$max:literal, $step:literal, $scale:literal, $doc:literal;)*) => {
        /// The tuned numbers of MCTS, as the search uses them (each option's integer over
        /// its scale).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Params {
            $(#[doc = concat!("`mcts_", stringify!($name), "` / ", stringify!($scale), ": ", $doc, ".")] pub $name: f64,)*
        }

        impl Params {
            /// The engine's values.
            pub const DEFAULT: Params = Params { $($name: $default as f64 / $scale as f64,)* };
            /// Each number's option name, smallest and largest value, SPSA step and scale.
            const RANGES: &[(&str, i64, i64, i64, i64)] =
                &[$((concat!("mcts_", stringify!($name)), $min, $max, $step, $scale),)*];

            /// Every number as its option's integer, by option name, in table order.
            pub fn values(&self) -> Vec<(&'static str, i64)> {
                vec![$((concat!("mcts_", stringify!($name)), (self.$name * $scale as f64).round() as i64),)*]
            }
        }
    };
}
mcts_params!(define_params);

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

impl Params {
    /// OpenBench's SPSA input, one number a line: `name, int, value, min, max, step, 0.002`.
    pub fn spsa_inputs(&self) -> String {
        let ranges = Self::RANGES.iter().map(|&(_, min, max, step, _)| (min, max, step));
        crate::search::spsa_inputs(self.values().into_iter().zip(ranges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_in_their_ranges_and_read_back_as_their_integers() {
        for ((name, value), &(range_name, min, max, step, scale)) in
            Params::DEFAULT.values().into_iter().zip(Params::RANGES)
        {
            assert_eq!(name, range_name);
            assert!((min..=max).contains(&value) && step > 0 && scale > 0, "{name} = {value} outside {min}..={max}");
        }
        assert_eq!(Params::DEFAULT.c_root, 0.8);
        assert_eq!(Params::DEFAULT.value_prior_visits, 64.0);
    }

    #[test]
    fn spsa_inputs_list_every_number_by_its_option_name() {
        let text = Params::DEFAULT.spsa_inputs();
        assert_eq!(text.lines().count(), Params::RANGES.len());
        assert!(text.starts_with("mcts_c_root, int, 80, 10, 300, 8, 0.002\n"), "{text}");
    }
}
