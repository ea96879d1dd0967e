//! `deepchess uci`: the engine under the UCI protocol on standard input/output.

use std::path::PathBuf;

use anyhow::Context;
use deepchess_engine::engine::Engine;

/// Arguments of `deepchess uci`.
#[derive(clap::Args)]
pub struct UciArgs {
    /// Directory with comparator/movepred/value models (default: the embedded ones; the
    /// UCI option `Models` changes it later).
    #[arg(long)]
    models: Option<PathBuf>,
}

/// Runs `deepchess uci`.
pub fn run(args: UciArgs) -> anyhow::Result<()> {
    let engine = Engine::load(args.models.as_deref()).context("loading the networks")?;
    deepchess_engine::uci_server::run(engine, std::io::stdin().lock(), std::io::stdout()).context("UCI session")
}
