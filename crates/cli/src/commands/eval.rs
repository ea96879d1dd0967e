//! `deepchess eval`: the trained networks measured on any PGN file (issue 5).

use std::path::PathBuf;

use deepchess_train::eval::{self, PreparedPgn};
use deepchess_train::trainers::movepred;

/// Arguments of `deepchess eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    #[command(subcommand)]
    network: Network,
}

/// Options every evaluation takes.
#[derive(clap::Args)]
struct Common {
    /// PGN file (.pgn, .pgn.gz, .pgn.zst, .pgn.bz2).
    #[arg(long)]
    pgn: PathBuf,
    /// Directory with the model files (default: the repository's committed `models/`).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models"))]
    models: PathBuf,
}

#[derive(clap::Subcommand)]
enum Network {
    /// Comparator accuracy on pairs (White-won, Black-won position) of the file's decisive games.
    Comparator {
        #[command(flatten)]
        common: Common,
        /// Pairs to draw (fixed seed).
        #[arg(long, default_value_t = 20_000)]
        pairs: usize,
    },
    /// Move predictors: per-net top-1/3/5 and the joint legal-move predictor.
    Movepred {
        #[command(flatten)]
        common: Common,
    },
    /// Value net: loss, result accuracy, and accuracy as a comparator on the same pairs.
    Value {
        #[command(flatten)]
        common: Common,
        /// Pairs to draw (fixed seed; the same as `eval comparator` draws).
        #[arg(long, default_value_t = 20_000)]
        pairs: usize,
        /// Weight of [%eval] in the loss's target, as in training.
        #[arg(long, default_value_t = 0.5)]
        eval_weight: f64,
    },
}

/// Runs `deepchess eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    match args.network {
        Network::Comparator { common, pairs } => {
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::comparator(&data.data(), &common.models, pairs)?;
            println!("accuracy={:.4} pairs={}", r.accuracy, r.pairs);
        }
        Network::Movepred { common } => {
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::movepred(&data.data(), &common.models)?;
            print!("{}", movepred::table(&r.nets));
            let j = &r.joint;
            println!("joint_top1={:.4} joint_top3={:.4} joint_top5={:.4} positions={}", j.top[0], j.top[1], j.top[2], j.positions);
        }
        Network::Value { common, pairs, eval_weight } => {
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::value(&data.data(), &common.models, pairs, eval_weight)?;
            println!("loss={:.5} result_accuracy={:.4} positions={}", r.scores.loss, r.scores.accuracy, r.scores.positions);
            println!("pair_accuracy={:.4} pairs={}", r.pair_accuracy, r.pairs);
        }
    }
    Ok(())
}
