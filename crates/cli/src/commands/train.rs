//! `deepchess train` (issue 5).

/// Arguments of `deepchess train`.
#[derive(clap::Args)]
pub struct TrainArgs {}

/// Runs `deepchess train`.
pub fn run(_args: TrainArgs) -> anyhow::Result<()> {
    super::pending("train", 5)
}
