//! `deepchess sts` (issue 4).

/// Arguments of `deepchess sts`.
#[derive(clap::Args)]
pub struct StsArgs {}

/// Runs `deepchess sts`.
pub fn run(_args: StsArgs) -> anyhow::Result<()> {
    super::pending("sts", 4)
}
