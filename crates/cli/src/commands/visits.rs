//! `deepchess visits`: MCTS visit distributions of a dataset's positions as move records,
//! the move predictors' training targets (`train movepred --data OUT`; see
//! docs/training.md).

use deepchess_datagen::visits::{VisitOptions, visits};

use super::groups::GroupArgs;

/// Arguments of `deepchess visits`.
#[derive(clap::Args)]
pub struct VisitsArgs {
    #[command(flatten)]
    group: GroupArgs,
    /// Playouts of each position's MCTS search (a fresh tree each, one thread).
    #[arg(long, default_value_t = 1000)]
    playouts: u64,
    /// Records per position, their moves shared out by the root's visits.
    #[arg(long, default_value_t = 16)]
    samples: usize,
    /// One position every this many records.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Positions before this ply are skipped.
    #[arg(long, default_value_t = 0)]
    min_ply: u16,
}

/// Runs `deepchess visits`.
pub fn run(args: VisitsArgs) -> anyhow::Result<()> {
    args.group.run(args.every, args.min_ply, |data, out, parents, networks| {
        visits(data, out, &VisitOptions { parents, playouts: args.playouts, samples: args.samples }, networks)
    })
}
