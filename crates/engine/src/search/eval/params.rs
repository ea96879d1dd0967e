//! The evaluation search's tuned numbers in one table (as Viridithas and Stockfish keep
//! theirs): each with its default, the range a tuner may try and the step of an SPSA
//! perturbation ([`Params::spsa_inputs`] writes OpenBench's SPSA input).

/// Generates [`Params`] from the table: `name: default, min..=max, step;`.
macro_rules! params {
    ($($(#[doc = $doc:literal])* $name:ident: $default:literal, $min:literal..=$max:literal, $step:literal;)*) => {
        /// The tuned numbers of the evaluation search.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Params {
            $($(#[doc = $doc])* pub $name: i32,)*
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

            /// Sets the number called `name` to `value`; an error names it and its range.
            pub fn set(&mut self, name: &str, value: i32) -> Result<(), String> {
                let &(_, min, max, _) = Self::RANGES
                    .iter()
                    .find(|(n, ..)| *n == name)
                    .ok_or_else(|| format!("unknown search parameter `{name}`"))?;
                if !(min..=max).contains(&value) {
                    return Err(format!("search parameter {name}: expected {min}..={max}, got {value}"));
                }
                match name {
                    $(stringify!($name) => self.$name = value,)*
                    _ => unreachable!("every name of RANGES is a field"),
                }
                Ok(())
            }
        }
    };
}

params! {
    /// Deepest remaining depth of reverse futility pruning.
    rfp_depth: 8, 1..=16, 1;
    /// Reverse futility margin per ply of remaining depth (one ply less when improving), cp.
    rfp_margin: 80, 20..=200, 8;
    /// Deepest remaining depth of razoring.
    razor_depth: 3, 1..=6, 1;
    /// Razoring margin: this, plus `razor_margin_depth` per squared ply, cp.
    razor_margin: 250, 0..=600, 25;
    /// Razoring margin per squared ply of remaining depth, cp.
    razor_margin_depth: 150, 0..=400, 15;
    /// Shallowest remaining depth of null-move pruning.
    null_move_depth: 3, 1..=6, 1;
    /// Null-move reduction: this many plies ...
    null_move_base: 3, 1..=6, 1;
    /// ... plus the remaining depth divided by this ...
    null_move_divisor: 3, 1..=8, 1;
    /// ... plus the static eval's margin over beta divided by this (cp) ...
    null_move_eval_divisor: 200, 50..=500, 20;
    /// ... at most this many plies.
    null_move_eval_max: 3, 0..=6, 1;
    /// Shallowest remaining depth at which a node without a table move is reduced by one ply.
    iir_depth: 4, 2..=10, 1;
    /// Shallowest remaining depth of singular extensions.
    singular_depth: 5, 3..=10, 1;
    /// How much shallower than the node a table entry may be for a singular search.
    singular_entry_slack: 3, 1..=6, 1;
    /// Singular margin below the table score, per ply of remaining depth, cp.
    singular_margin: 2, 1..=8, 1;
    /// Deepest remaining depth of late move pruning.
    lmp_depth: 8, 1..=16, 1;
    /// Quiet moves searched before late move pruning: this plus the squared depth (half
    /// when not improving).
    lmp_base: 3, 1..=10, 1;
    /// Deepest remaining depth at which the main search prunes moves by SEE.
    see_pruning_depth: 6, 1..=12, 1;
    /// SEE threshold per ply for captures in the main search, cp.
    see_capture_margin: 90, 20..=200, 8;
    /// SEE threshold per squared ply for quiet moves in the main search, cp.
    see_quiet_margin: 25, 5..=80, 3;
    /// Shallowest remaining depth of late move reductions.
    lmr_depth: 3, 1..=6, 1;
    /// Late move reduction: this (hundredths of a ply) ...
    lmr_base: 75, 0..=200, 10;
    /// ... plus ln(depth)·ln(move number) divided by this (hundredths).
    lmr_divisor: 225, 100..=400, 15;
    /// History sum that changes a late move reduction by one ply.
    lmr_history: 10_000, 2_000..=30_000, 1_000;
    /// Shallowest depth searched with an aspiration window.
    aspiration_depth: 4, 1..=10, 1;
    /// First half-width of the aspiration window, cp (doubled after each failure).
    aspiration_delta: 30, 5..=100, 5;
    /// Half-width beyond which the window opens fully, cp.
    aspiration_max_delta: 1_000, 100..=3_000, 100;
}

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

impl Params {
    /// OpenBench's SPSA input, one number a line: `name, int, value, min, max, step, 0.002`.
    pub fn spsa_inputs(&self) -> String {
        self.values()
            .into_iter()
            .zip(Self::RANGES)
            .map(|((name, value), (_, min, max, step))| format!("{name}, int, {value}, {min}, {max}, {step}, 0.002\n"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lie_in_their_ranges_and_set_checks_names_and_ranges() {
        for ((name, value), &(range_name, min, max, step)) in Params::DEFAULT.values().into_iter().zip(Params::RANGES) {
            assert_eq!(name, range_name);
            assert!((min..=max).contains(&value) && step > 0, "{name} = {value} outside {min}..={max}");
        }
        let mut params = Params::DEFAULT;
        params.set("rfp_margin", 96).unwrap();
        assert_eq!(params, Params { rfp_margin: 96, ..Params::DEFAULT });
        assert_eq!(params.set("rfp_margin", 19).unwrap_err(), "search parameter rfp_margin: expected 20..=200, got 19");
        assert_eq!(params.set("futility", 1).unwrap_err(), "unknown search parameter `futility`");
        assert_eq!(params.rfp_margin, 96, "a refused value changes nothing");
    }

    #[test]
    fn spsa_inputs_list_every_number_with_its_range() {
        let text = Params::DEFAULT.spsa_inputs();
        assert_eq!(text.lines().count(), Params::RANGES.len());
        assert!(
            text.starts_with("rfp_depth, int, 8, 1, 16, 1, 0.002\nrfp_margin, int, 80, 20, 200, 8, 0.002\n"),
            "{text}"
        );
    }
}
