//! The evaluation search's switches, declared once: `eval_switches!` lists them (field,
//! UCI option, default, value in [`EvalOptions::PLAIN`], description) and generates both
//! [`EvalOptions`] here and the UCI check options of the engine's option table.
//!
//! A technique is a switch while it is on by default or the thesis's table 6.3 needs it
//! off (TT, ordering, PVS, null move, killers, check extensions, aspiration, LMR, LMP,
//! SEE); techniques that lost or never won their SPRT are deleted (docs/engine.md keeps
//! them in its "what we tried" table).

use super::params::Params;

/// Default of [`EvalOptions::predictor_depth`] (the `OrderingDepth` option).
pub const DEFAULT_PREDICTOR_DEPTH: i32 = 4;

/// Calls `$callback!` with every switch of the evaluation search, one per line:
/// `field, "UCI name", default, plain, "what it does"` (plain: its value in
/// [`EvalOptions::PLAIN`]).
macro_rules! eval_switches {
    ($callback:ident) => {
        $callback! {
            tt, "TT", true, false, "transposition table (both alpha-beta searches)";
            ordering, "Ordering", true, false, "move ordering by the move predictors (both alpha-beta searches)";
            pvs, "PVS", true, false, "principal variation search";
            null_move, "NullMove", true, false,
                "null-move pruning, reduction 3 + depth/3 + min((eval - beta)/200, 3)";
            killers, "Killers", true, false, "killer moves and the history heuristic";
            check_extensions, "CheckExtensions", true, false, "one ply more in check";
            aspiration, "Aspiration", true, false, "aspiration windows";
            lmr, "LMR", true, false,
                "late move reductions from the third move, of quiet checks and killers too (one ply less)";
            lmp, "LMP", true, false, "late move pruning to depth 8, half the moves when not improving";
            see, "SEE", true, false, "static exchange evaluation: losing captures skipped in quiescence";
            histories, "Histories", true, false,
                "capture and continuation histories, counter moves, maluses, history-adjusted reductions";
            rfp, "RFP", true, false, "reverse futility pruning with an improving term";
            iir, "IIR", true, false, "internal iterative reduction at nodes without a table move";
            qs_tt, "QuiescenceTT", true, false,
                "transposition table in quiescence, table bounds sharpen the static eval";
            see_pruning, "SEEPruning", true, false,
                "captures and quiet moves losing material by SEE pruned near the leaves";
            razoring, "Razoring", true, false,
                "a static eval far below alpha near the leaves checked by quiescence alone";
            lmr_improving, "LMRImproving", true, false, "late move reductions one ply deeper when not improving";
            singular, "Singular", true, false,
                "singular extensions, multi-cut and negative extensions of the table move";
            see_ordering, "SEEOrdering", true, false, "losing captures (SEE) after quiet moves";
            staged_tt_move, "StagedTTMove", true, false,
                "the table move searched before the other moves are scored";
            // Plain: the table as it always cut (restricting it at PV nodes is the technique).
            pv_table_cuts, "PVTableCuts", true, true, "transposition-table cutoffs at PV nodes too";
            keep_histories, "KeepHistories", true, false,
                "histories kept, halved, from one search to the next of a game";
        }
    };
}
pub(crate) use eval_switches;

/// Generates [`EvalOptions`] from the switch list.
macro_rules! define_eval_options {
    ($($field:ident, $name:literal, $default:literal, $plain:literal, $doc:literal;)*) => {
        /// Which techniques the evaluation search uses, and its tuned numbers.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct EvalOptions {
            $(
                #[doc = concat!("`", $name, "`: ", $doc, ".")]
                pub $field: bool,
            )*
            /// The move predictors order moves only at nodes with at least this remaining
            /// depth; above 1, captures and promotions also come first by MVV-LVA at every
            /// node. 1 = the predictors alone at every node (`OrderingDepth`).
            pub predictor_depth: i32,
            /// The tuned numbers of pruning, reductions and extensions.
            pub params: Params,
        }

        impl EvalOptions {
            /// The engine's defaults, as games chose them (docs/engine.md).
            pub const DEFAULT: EvalOptions = EvalOptions {
                $($field: $default,)*
                predictor_depth: DEFAULT_PREDICTOR_DEPTH,
                params: Params::DEFAULT,
            };
            /// Plain negamax with quiescence and iterative deepening, nothing else.
            pub const PLAIN: EvalOptions = EvalOptions {
                $($field: $plain,)*
                predictor_depth: 1,
                params: Params::DEFAULT,
            };
        }
    };
}
eval_switches!(define_eval_options);

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions::DEFAULT
    }
}
