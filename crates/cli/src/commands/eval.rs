//! `deepchess eval` (issue 5).

/// Arguments of `deepchess eval`.
#[derive(clap::Args)]
pub struct EvalArgs {}

/// Runs `deepchess eval`.
pub fn run(_args: EvalArgs) -> anyhow::Result<()> {
    super::pending("eval", 5)
}
