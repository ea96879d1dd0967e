//! `deepchess uci` (issue 3).

/// Arguments of `deepchess uci`.
#[derive(clap::Args)]
pub struct UciArgs {}

/// Runs `deepchess uci`.
pub fn run(_args: UciArgs) -> anyhow::Result<()> {
    super::pending("uci", 3)
}
