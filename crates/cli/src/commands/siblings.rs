//! `deepchess siblings`: sibling positions scored by the evaluation search, the pairs the
//! student comparator trains on (`train student --data OUT`; see docs/training.md).

use std::path::PathBuf;

use deepchess_datagen::siblings::{SiblingOptions, siblings};
use deepchess_engine::nn::Networks;

/// Arguments of `deepchess siblings`.
#[derive(clap::Args)]
pub struct SiblingsArgs {
    /// Dataset directory whose `moves` records are the parents (`datagen` or `prepare` output).
    #[arg(long)]
    data: PathBuf,
    /// Output directory: `moves-{train,validation}.bin`, one group of siblings per parent.
    #[arg(long)]
    out: PathBuf,
    /// Children per parent: the move played there, then distinct random legal moves.
    #[arg(long, default_value_t = 4)]
    children: usize,
    /// One parent every this many records.
    #[arg(long, default_value_t = 8)]
    every: usize,
    /// Parents before this ply are skipped.
    #[arg(long, default_value_t = 16)]
    min_ply: u16,
    /// Soft node limit of the search that scores each child (hard limit: four times).
    #[arg(long, default_value_t = 1000)]
    nodes: u64,
    /// Seed of the random moves.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the position at the end of each child's principal variation (the quiet leaf
    /// the child's score evaluates, as the comparison search compares leaves) instead of
    /// the child.
    #[arg(long)]
    pv_leaves: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Directory with the value net that scores (default: the embedded one).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Replace the output's datasets if they exist (never the input's).
    #[arg(long)]
    force: bool,
}

/// Runs `deepchess siblings`.
pub fn run(args: SiblingsArgs) -> anyhow::Result<()> {
    let networks = Networks::load_or_embedded(args.models.as_deref()).map_err(|e| {
        anyhow::anyhow!(
            "--models {}: {e}",
            args.models.as_ref().map_or("<embedded>".into(), |m| m.display().to_string())
        )
    })?;
    let options = SiblingOptions {
        children: args.children,
        every: args.every,
        min_ply: args.min_ply,
        nodes: args.nodes,
        seed: args.seed,
        pv_leaves: args.pv_leaves,
        threads: args.threads,
        force: args.force,
    };
    let started = std::time::Instant::now();
    for (split, counts) in siblings(&args.data, &args.out, &options, &networks)? {
        println!(
            "{}: {} groups, {} positions ({:.0} s)",
            args.out.join(deepchess_core::dataset::file_name(deepchess_core::Content::Moves, split)).display(),
            counts.groups,
            counts.children,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
