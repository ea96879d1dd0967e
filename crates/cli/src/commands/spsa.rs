//! `deepchess spsa-inputs`: the evaluation search's tuned numbers as OpenBench's SPSA input
//! (docs/openbench.md), one `name, int, value, min, max, step, 0.002` line each. Each name
//! is also a UCI spin option, which is how a tuner sets it.

use std::io::Write;

use deepchess_engine::search::eval::Params;

/// Arguments of `deepchess spsa-inputs` (none).
#[derive(clap::Args)]
pub struct SpsaInputsArgs {}

/// Runs `deepchess spsa-inputs`.
pub fn run(_args: SpsaInputsArgs) -> anyhow::Result<()> {
    std::io::stdout().lock().write_all(Params::DEFAULT.spsa_inputs().as_bytes())?;
    Ok(())
}
