//! `deepchess spsa-inputs`: a search's tuned numbers as OpenBench's SPSA input
//! (docs/openbench.md), one `name, int, value, min, max, step, 0.002` line each. Each name
//! is also a UCI spin option, which is how a tuner sets it.

use std::io::Write;

use deepchess_engine::search::{eval, mcts};

/// The search whose numbers are printed.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TunedSearch {
    /// The evaluation alpha-beta (`Search eval`).
    Eval,
    /// MCTS (`Search mcts`): options named `mcts_…`, integers over each number's scale.
    Mcts,
}

/// Arguments of `deepchess spsa-inputs`.
#[derive(clap::Args)]
pub struct SpsaInputsArgs {
    /// Whose numbers: the evaluation search's or MCTS's.
    #[arg(long, value_enum, default_value = "eval")]
    search: TunedSearch,
}

/// Runs `deepchess spsa-inputs`.
pub fn run(args: SpsaInputsArgs) -> anyhow::Result<()> {
    let inputs = match args.search {
        TunedSearch::Eval => eval::Params::DEFAULT.spsa_inputs(),
        TunedSearch::Mcts => mcts::Params::DEFAULT.spsa_inputs(),
    };
    std::io::stdout().lock().write_all(inputs.as_bytes())?;
    Ok(())
}
