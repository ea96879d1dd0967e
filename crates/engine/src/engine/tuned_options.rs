//! The spin options of the searches' tuned numbers, from their one declaration each
//! ([`eval_params!`] and [`mcts_params!`]): named as OpenBench's SPSA input names them
//! (`deepchess spsa-inputs`), the evaluation search's as their fields, MCTS's as
//! `mcts_` and their fields.

use super::options::{UciOption, spin};
use crate::search::eval::eval_params;
use crate::search::mcts::mcts_params;

/// The evaluation search's spin options: each sets its field.
macro_rules! eval_param_options {
    ($($name:ident: $default:literal, $min:literal..=$max:literal, $step:literal, $doc:literal;)*) => {
        &[$(spin(stringify!($name), ($default, $min, $max), $doc, |e, value| {
            e.settings.eval.params.$name = value as i32;
            Ok(())
        }),)*]
    };
}

/// MCTS's spin options: each sets its field to the value over its scale.
macro_rules! mcts_param_options {
    ($($name:ident: $default:literal, $min:literal..=$max:literal, $step:literal, $scale:literal, $doc:literal;)*) => {
        &[$(spin(
            concat!("mcts_", stringify!($name)),
            ($default, $min, $max),
            concat!($doc, " (in units of 1/", stringify!($scale), ")"),
            |e, value| {
                e.mcts.options.params.$name = value as f64 / $scale as f64;
                Ok(())
            },
        ),)*]
    };
}

/// The evaluation search's tuned numbers.
pub(super) const EVAL_PARAMS: &[UciOption] = eval_params!(eval_param_options);

/// MCTS's tuned numbers.
pub(super) const MCTS_PARAMS: &[UciOption] = mcts_params!(mcts_param_options);

#[cfg(test)]
mod tests {
    use crate::engine::Engine;
    use crate::engine::options::{OptionType, find};
    use crate::nn::Networks;
    use crate::search::{eval, mcts};

    /// For every option of `values`' names, at its smallest and largest value: an engine
    /// with it set shows every number at its default but that one.
    fn each_sets_its_number_alone(
        defaults: Vec<(&'static str, i64)>,
        values: impl Fn(&Engine) -> Vec<(&'static str, i64)>,
    ) {
        for &(name, _) in &defaults {
            let OptionType::Spin { min, max, .. } = find(name).unwrap_or_else(|| panic!("no option {name}")).kind
            else {
                panic!("{name} is not a spin option")
            };
            for value in [min, max] {
                let mut engine = Engine::new(Networks::random(5));
                engine.set_option(name, &value.to_string()).unwrap();
                let expected: Vec<(&str, i64)> =
                    defaults.iter().map(|&(n, v)| (n, if n == name { value } else { v })).collect();
                assert_eq!(values(&engine), expected, "{name} = {value}");
            }
        }
    }

    #[test]
    fn every_tuned_number_at_either_end_of_its_range_searches_to_a_legal_move() {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;

        use shakmaty::Position;

        use super::{EVAL_PARAMS, MCTS_PARAMS};
        use crate::position_history::Game;
        use crate::search::Limits;

        // A middlegame with captures, checks and quiet moves at every depth.
        let fen = "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7";
        let game = Game::from_uci(Some(fen), &[]).unwrap();
        for (search, options, nodes) in [("eval", EVAL_PARAMS, 2_000), ("mcts", MCTS_PARAMS, 300)] {
            for option in options {
                let OptionType::Spin { min, max, .. } = option.kind else {
                    panic!("{} is not a spin option", option.name)
                };
                for value in [min, max] {
                    let mut engine = Engine::new(Networks::random(5));
                    engine.set_option("Search", search).unwrap();
                    engine.set_option(option.name, &value.to_string()).unwrap();
                    let limits = Limits { nodes: Some(nodes), ..Limits::default() };
                    let stop = Arc::new(AtomicBool::new(false));
                    let result = engine.go(&game, &limits, stop, &mut |_| {}).expect("a move");
                    assert!(game.position().is_legal(result.best), "{} = {value}: {:?}", option.name, result.best);
                }
            }
        }
    }

    #[test]
    fn each_tuned_number_of_the_evaluation_search_is_an_option_that_sets_it_alone() {
        let widened = |params: &eval::Params| params.values().into_iter().map(|(n, v)| (n, i64::from(v))).collect();
        each_sets_its_number_alone(widened(&eval::Params::DEFAULT), |e| widened(&e.settings.eval.params));
    }

    #[test]
    fn each_tuned_number_of_mcts_is_an_option_that_sets_it_alone() {
        each_sets_its_number_alone(mcts::Params::DEFAULT.values(), |e| e.mcts.options.params.values());
        let mut engine = Engine::new(Networks::random(5));
        engine.set_option("mcts_c_root", "120").unwrap();
        assert_eq!(engine.mcts.options.params.c_root, 1.2);
    }
}
