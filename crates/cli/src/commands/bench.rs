//! `deepchess bench` (issue 3).

/// Arguments of `deepchess bench`.
#[derive(clap::Args)]
pub struct BenchArgs {}

/// Runs `deepchess bench`.
pub fn run(_args: BenchArgs) -> anyhow::Result<()> {
    super::pending("bench", 3)
}
