//! The evaluation search's tuned numbers in one table (as Viridithas and Stockfish keep
//! theirs): each with its default, the range a tuner may try, the step of an SPSA
//! perturbation and a line of documentation. `eval_params!` lists them once and generates
//! both [`Params`] here and a UCI spin option each (named as the field, as OpenBench's
//! SPSA sets them); [`Params::spsa_inputs`] writes OpenBench's SPSA input
//! (`deepchess spsa-inputs`). The defaults are an SPSA tune of twelve of them at 5,000
//! nodes, kept by SPRT (+52.7 Elo at 5,000 nodes, +26 at 1 s + 0.01 s; docs/engine.md).

/// Calls `$callback!` with every tuned number of the evaluation search, one per line:
/// `name: default, min..=max, step, "what it is";`.
macro_rules! eval_params {
    ($callback:ident) => {
        $callback! {
            rfp_depth: 8, 1..=16, 1, "deepest remaining depth of reverse futility pruning";
            rfp_margin: 65, 20..=200, 8,
                "reverse futility margin per ply of remaining depth (one ply less when improving), cp";
            razor_depth: 3, 1..=6, 1, "deepest remaining depth of razoring";
            razor_margin: 225, 0..=600, 25, "razoring margin, cp, plus razor_margin_depth per squared ply";
            razor_margin_depth: 150, 0..=400, 15, "razoring margin per squared ply of remaining depth, cp";
            null_move_depth: 3, 1..=6, 1, "shallowest remaining depth of null-move pruning";
            null_move_base: 3, 1..=6, 1, "null-move reduction in plies before its depth and eval terms";
            null_move_divisor: 3, 1..=8, 1, "the null-move reduction grows by the remaining depth divided by this";
            null_move_eval_divisor: 221, 50..=500, 20,
                "the null-move reduction grows by the static eval's margin over beta (cp) divided by this";
            null_move_eval_max: 3, 0..=6, 1, "most plies the eval term adds to the null-move reduction";
            iir_depth: 4, 2..=10, 1,
                "shallowest remaining depth at which a node without a table move is reduced by one ply";
            singular_depth: 5, 3..=10, 1, "shallowest remaining depth of singular extensions";
            singular_entry_slack: 3, 1..=6, 1,
                "how much shallower than the node a table entry may be for a singular search";
            singular_margin: 1, 1..=8, 1, "singular margin below the table score per ply of remaining depth, cp";
            lmp_depth: 8, 1..=16, 1, "deepest remaining depth of late move pruning";
            lmp_base: 3, 1..=10, 1,
                "quiet moves searched before late move pruning: this plus the squared depth (half when not improving)";
            see_pruning_depth: 6, 1..=12, 1, "deepest remaining depth at which the main search prunes moves by SEE";
            see_capture_margin: 99, 20..=200, 8, "SEE threshold per ply for captures in the main search, cp";
            see_quiet_margin: 17, 5..=80, 3, "SEE threshold per squared ply for quiet moves in the main search, cp";
            lmr_depth: 3, 1..=6, 1, "shallowest remaining depth of late move reductions";
            lmr_base: 76, 0..=200, 10, "late move reduction in hundredths of a ply before its ln·ln term";
            lmr_divisor: 145, 100..=400, 15,
                "the late move reduction grows by ln(depth)·ln(move number) divided by this (hundredths)";
            lmr_history: 9_760, 2_000..=30_000, 1_000, "history sum that changes a late move reduction by one ply";
            aspiration_depth: 4, 1..=10, 1, "shallowest depth searched with an aspiration window";
            aspiration_delta: 12, 5..=100, 5, "first half-width of the aspiration window, cp (doubled after each failure)";
            aspiration_max_delta: 1_000, 100..=3_000, 100, "half-width beyond which the aspiration window opens fully, cp";
        }
    };
}
pub(crate) use eval_params;

/// Generates [`Params`] from the table.
macro_rules! define_params {
    ($($name:ident: $default:literal, $min:literal..=$max:literal, $step:literal, $doc:literal;)*) => {
        /// The tuned numbers of the evaluation search.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Params {
            $(#[doc = concat!("`", stringify!($name), "`: ", $doc, ".")] pub $name: i32,)*
        }

        impl Params {
            /// The engine's values.
            pub const DEFAULT: Params = Params { $($name: $default,)* };
            /// Each number's name, smallest and largest value and SPSA step.
            const RANGES: &[(&str, i32, i32, i32)] = &[$((stringify!($name), $min, $max, $step),)*];

            /// Every number by name, in table order.
            pub fn values(&self) -> Vec<(&'static str, i32)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}
eval_params!(define_params);

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

impl Params {
    /// OpenBench's SPSA input, one number a line: `name, int, value, min, max, step, 0.002`.
    pub fn spsa_inputs(&self) -> String {
        let numbers = self.values().into_iter().map(|(name, value)| (name, i64::from(value)));
        let ranges = Self::RANGES.iter().map(|&(_, min, max, step)| (i64::from(min), i64::from(max), i64::from(step)));
        crate::search::spsa_inputs(numbers.zip(ranges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_in_their_ranges() {
        for ((name, value), &(range_name, min, max, step)) in Params::DEFAULT.values().into_iter().zip(Params::RANGES) {
            assert_eq!(name, range_name);
            assert!((min..=max).contains(&value) && step > 0, "{name} = {value} outside {min}..={max}");
        }
    }

    #[test]
    fn spsa_inputs_list_every_number_with_its_range() {
        let text = Params::DEFAULT.spsa_inputs();
        assert_eq!(text.lines().count(), Params::RANGES.len());
        assert!(
            text.starts_with("rfp_depth, int, 8, 1, 16, 1, 0.002\nrfp_margin, int, 65, 20, 200, 8, 0.002\n"),
            "{text}"
        );
    }
}
