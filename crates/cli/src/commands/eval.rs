//! `deepchess eval`: the trained networks measured on any PGN file.

use std::path::PathBuf;

use anyhow::Context;
use deepchess_core::{Model, ModelKind};
use deepchess_train::device::DeviceChoice;
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
    /// Directory with the model files (default: the models embedded in this binary).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Where burn computes: `cpu`, or `wgpu[:KIND]` in a build with the `wgpu` feature.
    #[arg(long, default_value_t = DeviceChoice::Cpu)]
    device: DeviceChoice,
}

impl Common {
    /// The model of `kind`: from `--models`, or the embedded default.
    fn model(&self, kind: ModelKind) -> anyhow::Result<Model> {
        match &self.models {
            Some(dir) => {
                let model = Model::load(dir, kind).with_context(|| format!("--models {}", dir.display()))?;
                if model.card.weights_sha256.is_none() {
                    eprintln!(
                        "note: {} records no weights_sha256 (a model written before it was recorded): its weights are not checked against a checksum",
                        dir.join(format!("{}.json", kind.name())).display()
                    );
                }
                Ok(model)
            }
            None => Ok(deepchess_engine::nn::embedded_model(kind)?),
        }
    }
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
    /// Value net: loss against the training target, and accuracy as a comparator on the same pairs.
    Value {
        #[command(flatten)]
        common: Common,
        /// Pairs to draw (fixed seed; the same as `eval comparator` draws).
        #[arg(long, default_value_t = 20_000)]
        pairs: usize,
        /// Weight of the game result in the loss's target, as in training (the score gets the rest).
        #[arg(long, default_value_t = 0.0)]
        result_weight: f64,
    },
}

/// Runs `deepchess eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    match args.network {
        Network::Comparator { common, pairs } => {
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::comparator(&data.data(), &common.model(ModelKind::Comparator)?, pairs, common.device)?;
            println!("accuracy={:.4} pairs={}", r.accuracy, r.pairs);
        }
        Network::Movepred { common } => {
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::movepred(&data.data(), &common.model(ModelKind::Movepred)?, common.device)?;
            print!("{}", movepred::table(&r.nets));
            let j = &r.joint;
            println!(
                "joint_top1={:.4} joint_top3={:.4} joint_top5={:.4} positions={}",
                j.top[0], j.top[1], j.top[2], j.positions
            );
        }
        Network::Value { common, pairs, result_weight } => {
            common.device.device()?;
            let data = PreparedPgn::new(&common.pgn)?;
            let r = eval::value(&data.data(), &common.model(ModelKind::Value)?, pairs, result_weight)?;
            println!("loss={:.5} positions={}", r.scores.loss, r.scores.positions);
            println!("pair_accuracy={:.4} pairs={}", r.pair_accuracy, r.pairs);
        }
    }
    Ok(())
}
