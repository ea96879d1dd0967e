//! `deepchess analyse` (issue 3).

/// Arguments of `deepchess analyse`.
#[derive(clap::Args)]
pub struct AnalyseArgs {}

/// Runs `deepchess analyse`.
pub fn run(_args: AnalyseArgs) -> anyhow::Result<()> {
    super::pending("analyse", 3)
}
