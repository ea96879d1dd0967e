//! `deepchess match` (issue 4).

/// Arguments of `deepchess match`.
#[derive(clap::Args)]
pub struct MatchArgs {}

/// Runs `deepchess match`.
pub fn run(_args: MatchArgs) -> anyhow::Result<()> {
    super::pending("match", 4)
}
