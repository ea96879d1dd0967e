//! `deepchess siblings`: sibling positions scored by the evaluation search, the pairs the
//! student comparator trains on (`train student --data OUT`; see docs/training.md).

use deepchess_datagen::siblings::{SiblingOptions, siblings};

use super::groups::GroupArgs;

/// Arguments of `deepchess siblings`.
#[derive(clap::Args)]
pub struct SiblingsArgs {
    #[command(flatten)]
    group: GroupArgs,
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
}

/// Runs `deepchess siblings`.
pub fn run(args: SiblingsArgs) -> anyhow::Result<()> {
    args.group.run(args.every, args.min_ply, |data, out, parents, networks| {
        let options = SiblingOptions {
            parents,
            children: args.children,
            nodes: args.nodes,
            seed: args.seed,
            pv_leaves: args.pv_leaves,
        };
        siblings(data, out, &options, networks)
    })
}
